// Runs the facilitator audits one after another against a facilitator's HTTP API, judging
// everything that matters on the chain it settles on.
import { AuditFailure } from '../audit-failure';
import { type AuditResult, oneLine } from '../results';
import { settleAudits, v1Audits } from './audits-settle';
import { supportedAudits } from './audits-supported';
import { verifyAudits } from './audits-verify';
import { type AuditChainConfig, createAuditChain } from './chain';
import {
  createFacilitatorEndpoint,
  describeNetworkError,
  type FacilitatorEndpointName,
  FacilitatorUnreachable,
} from './endpoint';
import { buildPayment, buildV1Payment, V1_NETWORK_NAMES } from './payments';
import type { FacilitatorAudit, FacilitatorAuditContext, SupportedView } from './types';

/** Every facilitator audit, in a stable order. Ids are never reused. */
export const FACILITATOR_AUDITS: readonly FacilitatorAudit[] = [
  ...supportedAudits,
  ...verifyAudits,
  ...settleAudits,
  ...v1Audits,
];

/** The RPC endpoint of the audited chain does not answer. */
export class ChainUnreachable extends Error {
  override readonly name = 'ChainUnreachable';
  readonly code = 'chain_unreachable';
}

/** A step that prepares an audit failed (the audit is reported as `error`, not `failed`). */
export class AuditSetupError extends Error {
  override readonly name = 'AuditSetupError';
}

export interface FacilitatorTarget {
  /** Base URL of the facilitator API, e.g. `http://127.0.0.1:4022`. */
  url: string;
  /** Extra headers on every request (authentication). */
  headers?: Record<string, string>;
  /** Per-request limit. Default 60 000 ms. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface RunFacilitatorAuditsOptions {
  chain: AuditChainConfig;
  /** Default: every audit. */
  audits?: readonly FacilitatorAudit[];
  onResult?(result: AuditResult): void;
}

/** Response times of one endpoint over the run, in milliseconds. */
export interface EndpointTimings {
  count: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
}

export interface FacilitatorAuditReport {
  url: string;
  network: string;
  results: AuditResult[];
  timings: Record<FacilitatorEndpointName, EndpointTimings | undefined>;
}

const describe = (audit: FacilitatorAudit) => ({
  id: audit.id,
  level: audit.level,
  profile: 'x402' as const,
  sentence: audit.sentence,
});

/**
 * Runs the facilitator audits against `target`, paying from the chain config's payers and reading
 * every outcome on that chain.
 *
 * @throws FacilitatorUnreachable when `GET /supported` cannot be reached at all;
 *   ChainUnreachable when the RPC URL does not answer.
 * @example
 * const report = await runFacilitatorAudits({ url: 'http://127.0.0.1:4022' }, { chain });
 * const failed = report.results.filter((r) => r.status === 'failed');
 */
export async function runFacilitatorAudits(
  target: FacilitatorTarget,
  options: RunFacilitatorAuditsOptions,
): Promise<FacilitatorAuditReport> {
  const facilitator = createFacilitatorEndpoint(target);
  const chain = createAuditChain(options.chain);
  try {
    chain.startBlock = await chain.client.getBlockNumber();
  } catch (error) {
    throw new ChainUnreachable(`${options.chain.rpcUrl}: ${describeNetworkError(error)}`);
  }
  const first = await facilitator.supported();
  const supported = readSupported(first.json);
  const v1Name = V1_NETWORK_NAMES[options.chain.chainId];
  const hasV1 =
    v1Name !== undefined &&
    supported?.kinds.some((k) => k.x402Version === 1 && k.scheme === 'exact' && k.network === v1Name);

  const ctx: FacilitatorAuditContext = {
    facilitator,
    chain,
    supported,
    pay: (defects) => buildPayment(chain, defects),
    payV1: (defects) => buildV1Payment(chain, v1Name ?? 'unknown', defects),
    async useOnChain(payment) {
      if (options.chain.submitter) {
        await chain.submit(payment.authorization, payment.signature);
        return;
      }
      const answer = await facilitator.settle(payment.body);
      const { from, nonce } = payment.authorization;
      if (!(await chain.authorizationUsed(from, nonce))) {
        throw new AuditSetupError(
          `could not use an authorization on chain through /settle (no submitter key): ${answer.text.slice(0, 160)}`,
        );
      }
    },
  };

  const results: AuditResult[] = [];
  let stopped: string | undefined;
  for (const audit of options.audits ?? FACILITATOR_AUDITS) {
    const result = await runOne(audit, ctx, { hasV1: Boolean(hasV1), v1Name, stopped });
    if (result.status === 'error' && result.message?.startsWith('the facilitator stopped answering'))
      stopped ??= result.message;
    options.onResult?.(result);
    results.push(result);
  }
  return { url: facilitator.url, network: chain.network, results, timings: timingsOf(facilitator.timings) };
}

async function runOne(
  audit: FacilitatorAudit,
  ctx: FacilitatorAuditContext,
  run: { hasV1: boolean; v1Name: string | undefined; stopped: string | undefined },
): Promise<AuditResult> {
  if (run.stopped) return { ...describe(audit), status: 'error', message: `not run: ${run.stopped}` };
  if (audit.needs?.includes('v1') && !run.hasV1) {
    const where = run.v1Name ? `on ${run.v1Name}` : `for chain ${ctx.chain.config.chainId} (no v1 name)`;
    return {
      ...describe(audit),
      status: 'skipped',
      message: `/supported lists no exact x402Version 1 kind ${where}`,
    };
  }
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    await audit.run(ctx);
    return { ...describe(audit), status: 'passed', ms: ms() };
  } catch (error) {
    if (error instanceof AuditFailure)
      return { ...describe(audit), status: 'failed', message: error.message, ms: ms() };
    const message =
      error instanceof FacilitatorUnreachable
        ? `the facilitator stopped answering: ${error.message}`
        : `could not run: ${oneLine(error)}`;
    return { ...describe(audit), status: 'error', message, ms: ms() };
  }
}

function readSupported(json: unknown): SupportedView | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const { kinds, signers } = json as { kinds?: unknown; signers?: unknown };
  return {
    kinds: Array.isArray(kinds) ? kinds.filter((k) => typeof k === 'object' && k !== null) : [],
    signers: typeof signers === 'object' && signers !== null ? (signers as Record<string, unknown>) : {},
  };
}

function timingsOf(
  timings: Readonly<Record<FacilitatorEndpointName, number[]>>,
): FacilitatorAuditReport['timings'] {
  const of = (values: number[]): EndpointTimings | undefined => {
    if (values.length === 0) return undefined;
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    const round = (n: number) => Math.round(n * 10) / 10;
    return {
      count: sorted.length,
      medianMs: round(at(0.5)),
      p95Ms: round(at(0.95)),
      maxMs: round(sorted.at(-1)!),
    };
  };
  return { supported: of(timings.supported), verify: of(timings.verify), settle: of(timings.settle) };
}
