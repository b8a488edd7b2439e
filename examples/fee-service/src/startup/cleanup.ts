import type { Logger } from 'pino';

/** What start-up has started, stopped in reverse order by {@link CleanupStack.run}. */
export interface CleanupStack {
  push(name: string, run: () => Promise<unknown> | unknown): void;
  /** Runs every step, newest first; a failing step is logged and the others still run. */
  run(): Promise<void>;
}

export function createCleanupStack(logger: Logger): CleanupStack {
  const steps: Array<{ name: string; run: () => Promise<unknown> | unknown }> = [];
  return {
    push: (name, run) => {
      steps.push({ name, run });
    },
    async run() {
      for (const step of steps.splice(0).reverse()) {
        try {
          await step.run();
        } catch (error) {
          logger.warn({ err: error, step: step.name }, 'shutdown step failed');
        }
      }
    },
  };
}
