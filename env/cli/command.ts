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
 * missing value — turned into usage errors, so every command answers bad flags the same way. A
 * negative number after a value-taking flag (`--x -3`) is that flag's value: parseArgs alone calls
 * it ambiguous, as if it might be a flag. */
export function parseCommandArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    const args = config.args === undefined ? undefined : joinNegativeValues(config.args, config.options ?? {});
    return parseArgs<T>({ strict: true, ...config, ...(args === undefined ? {} : { args }) });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), { cause: err });
  }
}

const NEGATIVE_NUMBER = /^-(\d|\.\d)/;

function joinNegativeValues(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const takesValue = new Set<string>();
  for (const [name, option] of Object.entries(options)) {
    if (option.type !== 'string') continue;
    takesValue.add(`--${name}`);
    if (option.short) takesValue.add(`-${option.short}`);
  }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (takesValue.has(arg) && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}
