import type { GateConfig } from './config';
import type { GateReadiness } from './options';

/** Asks the facilitator (`/supported`) and each paid network's chain reader whether they answer. */
export async function checkReadiness(config: GateConfig): Promise<GateReadiness> {
  const networks = [
    ...new Set(config.table.routes.flatMap((route) => route.requirements.map((r) => r.network))),
  ];
  const detail = (error: unknown) => (error instanceof Error ? error.message : String(error));
  const [facilitatorCheck, ...chainChecks] = await Promise.all([
    config.facilitator.supported().then(
      () => ({ ok: true }),
      (error: unknown) => ({ ok: false, detail: detail(error) }),
    ),
    ...networks.map(async (network) => {
      const scheme = config.schemes.find((s) => s.supportsNetwork(network));
      if (!scheme?.chainStatus) return { ok: false, detail: `no chain reader for ${network}` };
      return scheme.chainStatus(network).then(
        (status) => (status.ok ? { ok: true } : { ok: false, detail: status.message }),
        (error: unknown) => ({ ok: false, detail: detail(error) }),
      );
    }),
  ]);
  const chain = Object.fromEntries(networks.map((network, i) => [network, chainChecks[i]!]));
  const ready = facilitatorCheck!.ok && Object.values(chain).every((check) => check.ok);
  return { ready, facilitator: facilitatorCheck!, chain };
}
