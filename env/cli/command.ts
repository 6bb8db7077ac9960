/**
 * How a CLI command is declared. Each command lives in its own file under env/cli/ and is
 * listed once in main.ts. A command throws `UsageError` for bad input (exit 2, message and
 * usage printed) and any other error for a failure (exit 1).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

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

/** node's parseArgs (strict unless the command says otherwise), its errors — an unknown option, a
 * missing value — turned into usage errors, so every command answers bad flags the same way. */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs<T>({ strict: true, ...config });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), { cause: err });
  }
}
