import { FACILITATOR_USAGE, facilitatorCommand } from './facilitator-command';
import { FAULTS_USAGE, faultsCommand } from './faults-command';
import type { CliIo } from './io';
import { MCP_USAGE, mcpCommand } from './mcp-command';
import { SERVER_USAGE, serverCommand } from './server-command';

const USAGE = `tollbooth-conformance: audits for x402 resource servers and facilitators

${SERVER_USAGE}

${FACILITATOR_USAGE}

${FAULTS_USAGE}

${MCP_USAGE}`;

/** Runs the command line `argv` (without node and the script); resolves with the exit status. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === 'facilitator') return facilitatorCommand(rest, io);
  if (first === 'server') return serverCommand(rest, io);
  if (first === 'faults') return faultsCommand(rest, io);
  if (first === 'mcp') return mcpCommand(rest, io);
  if (first === undefined || first === '-h' || first === '--help') {
    (first === undefined ? io.err : io.out)(USAGE);
    return first === undefined ? 2 : 0;
  }
  return serverCommand(argv, io);
}
