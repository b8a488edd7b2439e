// The soak's faults, injected at random (from the seeded schedule) while the payers pay: the
// facilitator's settle answer dropped, the facilitator frozen on /settle (its held settlements
// released late), the facilitator killed and restarted, the service SIGKILLed and restarted.
import type { FacilitatorFaultProxy } from '@tollbooth/facilitator';
import { sleep } from './options';

export type FaultKind =
  | 'settle-answer-dropped'
  | 'facilitator-frozen'
  | 'facilitator-killed'
  | 'service-killed';
const FAULT_KINDS: readonly FaultKind[] = [
  'settle-answer-dropped',
  'facilitator-frozen',
  'facilitator-killed',
  'service-killed',
];

export interface FaultTargets {
  proxy: Pick<FacilitatorFaultProxy, 'setMode'>;
  /** Mean pause between two faults (each pause is 0.5 to 1.5 times this). */
  everyMs: number;
  random: () => number;
  killFacilitator(): Promise<void>;
  startFacilitator(): Promise<void>;
  /** SIGKILLs the service and starts it again. */
  restartService(): Promise<void>;
  log(message: string): void;
  /** How far the payers are, for the log line of each fault. */
  progress(): string;
}

export interface FaultInjector {
  /** Faults injected so far, by kind. */
  readonly faults: Record<FaultKind, number>;
  /** Stops injecting after the fault under way; rejects with the error of a fault that failed. */
  stop(): Promise<void>;
}

/** Injects one fault after another until stopped; a fault that cannot restart a process stops it. */
export function startFaultInjector(targets: FaultTargets): FaultInjector {
  const { proxy, random } = targets;
  const between = (low: number, high: number) => low + (high - low) * random();
  const faults: Record<FaultKind, number> = {
    'settle-answer-dropped': 0,
    'facilitator-frozen': 0,
    'facilitator-killed': 0,
    'service-killed': 0,
  };
  let injecting = true;
  let injectorError: unknown;
  const injector = (async () => {
    while (injecting) {
      await sleep(between(0.5, 1.5) * targets.everyMs);
      if (!injecting) break;
      const kind = FAULT_KINDS[Math.floor(random() * FAULT_KINDS.length)]!;
      faults[kind] += 1;
      switch (kind) {
        case 'settle-answer-dropped':
          proxy.setMode('settle-answer-dropped');
          await sleep(between(500, 3_000));
          proxy.setMode('pass');
          break;
        case 'facilitator-frozen':
          // Shorter or longer than the service's 5 s settle timeout; the held settlements are
          // forwarded when it thaws (a late transfer the service may have given up on).
          proxy.setMode({ mode: 'frozen', operations: ['settle'] });
          await sleep(between(1_000, 9_000));
          proxy.setMode('pass');
          break;
        case 'facilitator-killed':
          proxy.setMode({ mode: 'frozen', operations: ['settle'] });
          await sleep(between(500, 3_000));
          await targets.killFacilitator();
          proxy.setMode('pass');
          await sleep(between(500, 3_000));
          await targets.startFacilitator();
          break;
        case 'service-killed':
          await sleep(between(0, 1_000));
          await targets.restartService();
          break;
      }
      targets.log(
        `fault ${kind} (${Object.values(faults).reduce((a, b) => a + b, 0)} so far), ${targets.progress()}`,
      );
    }
  })().catch((error: unknown) => {
    // Recorded and rethrown after the payers stop: a soak that cannot restart a process fails.
    injectorError = error;
    injecting = false;
  });
  return {
    faults,
    stop: async () => {
      injecting = false;
      await injector;
      if (injectorError) throw injectorError;
    },
  };
}
