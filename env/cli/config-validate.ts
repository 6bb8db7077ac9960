/**
 * `vistool config validate FILE...`: the run-config checks of the VS Code extension, for
 * clusters and CI. One line per problem, `file:line:col: severity: message [code]`, on stdout;
 * exit 1 when any file has an error (or a warning, with --strict), else 0.
 *
 * CUDA checks need to know the machine: pass the JSON of `python -m vistool_trainer check-env
 * --json` with --env-report, or an interpreter with --python to run it. Without either they
 * stay quiet.
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { cudaFactsFromCheckEnv, type CudaFacts, localFacts } from '../config/environment-facts.js';
import { formatProblem, validateRunConfigText } from '../config/validate-run-config.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';

export interface TextOutput {
  write(text: string): unknown;
}

const usage = `vistool config validate FILE.vistool.json [FILE ...] [--base-dir DIR]
                        [--env-report CHECK_ENV.json | --python PYTHON] [--strict] [--json]

  --base-dir DIR      folder relative paths are resolved against (default: the current folder,
                      as the trainer does)
  --env-report FILE   output of \`python -m vistool_trainer check-env --json\` (CUDA and bf16 checks)
  --python PYTHON     run that interpreter's check-env instead
  --strict            warnings fail too (exit 1)
  --json              one JSON object per file instead of lines`;

function cudaFromPython(python: string): CudaFacts {
  const result = spawnSync(python, ['-m', 'vistool_trainer', 'check-env', '--json'], { encoding: 'utf8', timeout: 120_000 });
  if (result.error) throw new Error(`could not run ${python} -m vistool_trainer check-env: ${result.error.message}`);
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return cudaFactsFromCheckEnv(JSON.parse(line));
  } catch {
    throw new Error(`${python} -m vistool_trainer check-env --json printed no JSON (exit ${result.status}): ${(result.stderr || result.stdout).trim().slice(-300)}`);
  }
}

export function createConfigValidateCommand(stdout: TextOutput = process.stdout, stderr: TextOutput = process.stderr): CliCommand {
  return {
    path: ['config', 'validate'],
    summary: 'Check run configs against the schema and the semantic rules (file:line:col per problem)',
    usage,
    async run(argv) {
      const { values, positionals } = parseCommandArgs({
        args: argv,
        options: { 'base-dir': { type: 'string' }, 'env-report': { type: 'string' }, python: { type: 'string' }, strict: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
        strict: true,
        allowPositionals: true,
      });
      if (positionals.length === 0) throw new UsageError('give at least one run config file');
      if (values['env-report'] && values.python) throw new UsageError('give --env-report or --python, not both');
      let cuda: CudaFacts = { cudaDevices: null, bf16: null };
      if (values['env-report']) {
        const text = await readFile(values['env-report'], 'utf8').catch(() => {
          throw new UsageError(`cannot read --env-report ${values['env-report']}`);
        });
        try {
          cuda = cudaFactsFromCheckEnv(JSON.parse(text));
        } catch {
          throw new UsageError(`--env-report ${values['env-report']} is not JSON; write it with \`python -m vistool_trainer check-env --json > FILE\``);
        }
      } else if (values.python) {
        cuda = cudaFromPython(values.python);
      }
      // The workspace of a command line is the folder it runs in.
      const facts = localFacts(cuda, process.env, process.env.HOME ?? '', [process.cwd()]);
      const baseDir = resolve(values['base-dir'] ?? '.');
      let failed = false;
      let errors = 0;
      let warnings = 0;
      for (const file of positionals) {
        let source: string;
        try {
          source = await readFile(file, 'utf8');
        } catch (err) {
          stdout.write(`${file}:1:1: error: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}) [file/unreadable]\n`);
          failed = true;
          errors++;
          continue;
        }
        const { problems } = validateRunConfigText(source, { baseDir, facts });
        if (values.json) {
          stdout.write(JSON.stringify({ file, problems: problems.map(({ fixes: _fixes, ...rest }) => rest) }) + '\n');
        } else {
          for (const found of problems) stdout.write(formatProblem(file, found) + '\n');
        }
        const fileErrors = problems.filter((p) => p.severity === 'error').length;
        const fileWarnings = problems.filter((p) => p.severity === 'warning').length;
        errors += fileErrors;
        warnings += fileWarnings;
        if (fileErrors > 0 || (values.strict && fileWarnings > 0)) failed = true;
      }
      stderr.write(`${positionals.length} file(s): ${errors} error(s), ${warnings} warning(s)${failed ? '' : ' — ok'}\n`);
      return failed ? 1 : 0;
    },
  };
}

export const configValidateCommand = createConfigValidateCommand();
