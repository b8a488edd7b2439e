// A service whose observatory has judged something, for tests that buy its resources: a scoreboard
// with nothing judged is not sold (404 no_data before any challenge, docs/fee-service-contract.md).
import type { RunningFeeService } from '../../src/service';
import type { MempoolSimulator } from '../../src/simulator/server';

/**
 * Polls every source at the current tip, mines the next block and records it: the next-block
 * quotes of that poll are judged, so the scoreboard has a judged row.
 */
export async function judgeNextBlock(service: RunningFeeService, simulator: MempoolSimulator): Promise<void> {
  const started = service.observatory;
  if (!started) throw new Error('the service runs no observatory');
  await started.recorder.tick();
  simulator.mineBlock();
  await started.recorder.tick();
  await started.observatory.refresh();
}
