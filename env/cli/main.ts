/**
 * `vistool` — the command-line front of the engine. Dispatches to one command per file.
 */
import { actionsParseCommand } from './actions-parse.js';
import { type CliCommand, UsageError } from './command.js';
import { configExportCommand } from './config-export.js';
import { configSchemaCommand } from './config-schema.js';
import { configValidateCommand } from './config-validate.js';
import { dataCheckCommand } from './data-check.js';
import { dataConvertCommand } from './data-convert.js';
import { dataGenCommand } from './data-gen.js';
import { dataShowCommand } from './data-show.js';
import { evalCommand } from './eval.js';
import { evalCompareCommand } from './eval-compare.js';
import { groundingDetectCommand } from './grounding-detect.js';
import { groundingEvalCommand } from './grounding-eval.js';
import { serveCommand } from './serve.js';
import { toolsApplyCommand } from './tools-apply.js';
import { toolsListCommand } from './tools-list.js';
import { viewCommand } from './view.js';

export const COMMANDS: readonly CliCommand[] = [
  // one line per command module, kept sorted by path
  actionsParseCommand,
  configExportCommand,
  configSchemaCommand,
  configValidateCommand,
  dataCheckCommand,
  dataConvertCommand,
  dataGenCommand,
  dataShowCommand,
  evalCommand,
  evalCompareCommand,
  groundingDetectCommand,
  groundingEvalCommand,
  serveCommand,
  toolsApplyCommand,
  toolsListCommand,
  viewCommand,
];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.join(' ').length), 10);
  const lines = COMMANDS.map((c) => `  vistool ${c.path.join(' ').padEnd(width)}  ${c.summary}`);
  return ['vistool — reinforcement learning workbench for tool-using vision-language models', '', 'Commands:', ...lines, '', 'Run `vistool <command> --help` for its options.'].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(help() + '\n');
    return 0;
  }
  // Longest matching command path wins, so `data gen` is found before a bare `data`.
  const matches = COMMANDS
    .filter((c) => c.path.every((word, i) => argv[i] === word))
    .sort((a, b) => b.path.length - a.path.length);
  const command = matches[0];
  const group = COMMANDS.filter((c) => c.path[0] === argv[0]);
  if (!command && group.length > 0 && (argv.length === 1 || argv[1] === '--help' || argv[1] === '-h')) {
    // `vistool data` alone asks what the group holds: list it, as `vistool --help` lists everything.
    process.stdout.write(`vistool ${argv[0]}: one of\n${group.map((c) => `  vistool ${c.path.join(' ')}  ${c.summary}`).join('\n')}\n`);
    return 0;
  }
  if (!command) {
    const hint = group.length > 0 ? `\n${group.map((c) => `  vistool ${c.path.join(' ')}  ${c.summary}`).join('\n')}` : ' Run `vistool --help` for the list.';
    process.stderr.write(`vistool: unknown command '${argv.slice(0, 2).join(' ')}'.${hint}\n`);
    return 2;
  }
  const rest = argv.slice(command.path.length);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.summary}\n\n${command.usage}\n`);
    return 0;
  }
  try {
    const code = await command.run(rest);
    return typeof code === 'number' ? code : 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`vistool ${command.path.join(' ')}: ${err.message}\n\n${command.usage}\n`);
      return 2;
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`vistool ${command.path.join(' ')}: ${message}\n`);
    if (process.env.VISTOOL_DEBUG && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
    return 1;
  }
}
