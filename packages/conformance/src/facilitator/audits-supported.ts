import { check } from '../audit-failure';
import { objectOf } from './endpoint';
import type { FacilitatorAudit } from './types';

const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/;
/** A CAIP-2 id or a family pattern such as `eip155:*`. */
const CAIP2_PATTERN = /^[-a-z0-9]{3,8}:([-_a-zA-Z0-9]{1,32}|\*)$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

async function supportedBody(ctx: Parameters<FacilitatorAudit['run']>[0]) {
  const answer = await ctx.facilitator.supported();
  check(answer.status === 200, `GET /supported answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  return objectOf(answer, 'GET /supported');
}

export const supportedAudits: FacilitatorAudit[] = [
  {
    id: 'FSUP-01',
    level: 'MUST',
    endpoint: 'supported',
    sentence:
      'MUST answer GET /supported with 200 and a JSON object holding kinds (an array), extensions (an array of strings) and signers (an object)',
    async run(ctx) {
      const body = await supportedBody(ctx);
      check(Array.isArray(body['kinds']), `kinds is ${JSON.stringify(body['kinds'])}`);
      const extensions = body['extensions'];
      check(
        Array.isArray(extensions) && extensions.every((e) => typeof e === 'string'),
        `extensions is ${JSON.stringify(extensions)}`,
      );
      const signers = body['signers'];
      check(
        typeof signers === 'object' && signers !== null && !Array.isArray(signers),
        `signers is ${JSON.stringify(signers)}`,
      );
    },
  },
  {
    id: 'FSUP-02',
    level: 'MUST',
    endpoint: 'supported',
    sentence:
      'MUST describe each kind with an integer x402Version, a scheme and a network (CAIP-2 from version 2 on), and list exact with x402Version 2 on the audited network',
    async run(ctx) {
      const kinds = (await supportedBody(ctx))['kinds'];
      check(Array.isArray(kinds), 'kinds is not an array');
      for (const [i, kind] of (kinds as Record<string, unknown>[]).entries()) {
        check(typeof kind === 'object' && kind !== null, `kinds[${i}] is not an object`);
        const { x402Version, scheme, network, extra } = kind;
        check(Number.isInteger(x402Version), `kinds[${i}].x402Version is ${JSON.stringify(x402Version)}`);
        check(typeof scheme === 'string' && scheme !== '', `kinds[${i}].scheme is ${JSON.stringify(scheme)}`);
        check(
          typeof network === 'string' && network !== '',
          `kinds[${i}].network is ${JSON.stringify(network)}`,
        );
        if ((x402Version as number) >= 2)
          check(CAIP2.test(network), `kinds[${i}].network ${network} is not CAIP-2`);
        check(
          extra === undefined || extra === null || (typeof extra === 'object' && !Array.isArray(extra)),
          `kinds[${i}].extra is ${JSON.stringify(extra)}`,
        );
      }
      const listed = (kinds as Record<string, unknown>[]).some(
        (k) => k['x402Version'] === 2 && k['scheme'] === 'exact' && k['network'] === ctx.chain.network,
      );
      check(listed, `no kind {x402Version: 2, scheme: "exact", network: "${ctx.chain.network}"}`);
    },
  },
  {
    id: 'FSUP-03',
    level: 'MUST',
    endpoint: 'supported',
    sentence:
      'MUST map signers by CAIP-2 pattern (such as eip155:*) to arrays of addresses, with at least one address for the audited network',
    async run(ctx) {
      const signers = (await supportedBody(ctx))['signers'];
      check(typeof signers === 'object' && signers !== null, 'signers is not an object');
      let evm = 0;
      for (const [pattern, addresses] of Object.entries(signers)) {
        check(CAIP2_PATTERN.test(pattern), `signers key ${JSON.stringify(pattern)} is not a CAIP-2 pattern`);
        check(
          Array.isArray(addresses) && addresses.every((a) => typeof a === 'string' && a !== ''),
          `signers[${pattern}] is ${JSON.stringify(addresses)}`,
        );
        if (coversNetwork(pattern, ctx.chain.network)) {
          for (const address of addresses as string[]) {
            check(EVM_ADDRESS.test(address), `signers[${pattern}] holds ${address}, not an EVM address`);
            evm += 1;
          }
        }
      }
      check(evm > 0, `no signer address for ${ctx.chain.network}`);
    },
  },
];

/** Whether a signers key (`eip155:*`, `eip155:8453`) covers a network. */
export function coversNetwork(pattern: string, network: string): boolean {
  if (pattern === network) return true;
  return pattern.endsWith(':*') && network.startsWith(pattern.slice(0, -1));
}
