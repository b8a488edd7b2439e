/**
 * A listener of the service could not take the port a variable pins: one line naming the variable
 * (`npm start` prints it and exits 1, as for `PORT`).
 */
export class PortInUseError extends Error {
  readonly code = 'port_in_use';
  constructor(
    readonly variable: string,
    readonly port: number,
  ) {
    super(`${variable}: port ${port} is in use: set ${variable} to a free port (0 picks one)`);
    this.name = 'PortInUseError';
  }
}

function addressInUse(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (
    (error as NodeJS.ErrnoException).code === 'EADDRINUSE' || /address already in use/.test(error.message)
  );
}

/**
 * Starts a listener on the port `variable` pins: a port already taken becomes a
 * {@link PortInUseError} naming the variable (anvil's own refusal included), anything else is
 * rethrown as it is.
 */
export async function listenOn<T>(
  variable: string,
  port: number | undefined,
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if (port && addressInUse(error)) throw new PortInUseError(variable, port);
    throw error;
  }
}
