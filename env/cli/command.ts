/**
 * How a CLI command is declared. Each command lives in its own file under env/cli/ and is
 * listed once in main.ts. A command throws `UsageError` for bad input (exit 2, message and
 * usage printed) and any other error for a failure (exit 1).
 */

export interface CliCommand {
  /** Words that select the command, e.g. ['tools', 'apply']. */
  path: string[];
  summary: string;
  /** Usage lines shown by --help and on a usage error. */
  usage: string;
  run(argv: string[]): Promise<number | void>;
}

export class UsageError extends Error {
  override name = 'UsageError';
}
