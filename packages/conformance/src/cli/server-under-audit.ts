// What the `faults` and `mcp` commands share about the server they audit: the kit started for it,
// the server started with --exec beside the kit, and the wait until it answers a payable challenge.
import type { AuditChainConfig } from '../facilitator/chain';
import { type FaultKit, type StartFaultKitOptions, startFaultKit } from '../faults/kit';
import { TargetUnreachable } from '../http';
import { oneLine } from '../results';
import { type AuditedProcess, startAuditedProcess } from './audited-process';
import { UsageError } from './io';

/** Starts the kit with the options given on the command line (unset ones left to the kit). */
export function startKit(
  options: { [K in keyof StartFaultKitOptions]?: StartFaultKitOptions[K] | undefined },
): Promise<FaultKit> {
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  return startFaultKit(given).catch((error: unknown) => {
    throw new UsageError(`could not start the kit: ${oneLine(error)}`);
  });
}

/** Starts the --exec server with the kit's addresses in its environment (docs/conformance.md). */
export function startServerUnderAudit(
  command: string,
  kit: FaultKit,
  chain: AuditChainConfig,
  log: (line: string) => void,
): AuditedProcess {
  return startAuditedProcess(
    command,
    {
      TOLLBOOTH_FACILITATOR_URL: kit.facilitatorUrl,
      TOLLBOOTH_RPC_URL: chain.rpcUrl,
      TOLLBOOTH_CHAIN_ID: String(chain.chainId),
      TOLLBOOTH_NETWORK: `eip155:${chain.chainId}`,
      TOLLBOOTH_TOKEN: chain.token.address,
      TOLLBOOTH_PAY_TO: chain.payTo,
    },
    log,
    'server',
  );
}

/**
 * Tries `attempt` every 250 ms until it returns, the --exec server exits, or `waitMs` passes (then
 * its last problem is thrown: unreachable as is, anything else as a usage error).
 */
export async function waitForServer(
  what: string,
  waitMs: number,
  child: AuditedProcess | undefined,
  attempt: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (child?.exited) {
      throw new TargetUnreachable(
        `the --exec command exited (${child.exited.signal ?? `code ${child.exited.code}`}) before ${what} answered`,
      );
    }
    try {
      await attempt();
      return;
    } catch (error) {
      if (Date.now() >= deadline) {
        if (error instanceof TargetUnreachable) throw error;
        throw new UsageError(oneLine(error));
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
