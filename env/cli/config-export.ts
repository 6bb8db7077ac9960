/**
 * `vistool config export --to verl CONFIG.vistool.json --out DIR`: a run config as a veRL 0.9.1
 * run. Writes DIR/verl.yaml (Hydra config over veRL's ppo_trainer), DIR/agent_loop.yaml (the
 * vistool_agent loop) and DIR/run.sh (env server, then `python3 -m verl.trainer.main_ppo`).
 * The parquet files verl.yaml reads (DIR/train.parquet, DIR/val.parquet) come from a separate
 * converter; the command prints how to make them.
 *
 * The config is checked as `vistool config validate` checks it, with the same messages. Paths that
 * do not exist on this machine are warnings here, not errors: the run may start elsewhere.
 * docs/VERL.md maps every run-config key to veRL.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { isInside } from '../core/paths.js';
import { localFacts } from '../config/environment-facts.js';
import type { ConfigProblem } from '../config/problem.js';
import { formatProblem, validateRunConfigText } from '../config/validate-run-config.js';
import { DEFAULT_GPUS_PER_NODE, exportVerl, type VerlFiles } from '../config/verl-export.js';
import { repositoryRoot } from '../eval/checkpoint-eval.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';
import type { CliStreams } from './data-gen.js';

export const EXPORT_TARGETS = ['verl'] as const;

const usage = `vistool config export --to verl CONFIG.vistool.json --out DIR [--base-dir DIR]
                      [--n-gpus-per-node N] [--nnodes N] [--max-prompt-length N]

  --to verl           veRL 0.9.1: DIR/verl.yaml, DIR/agent_loop.yaml and DIR/run.sh (mode 0755);
                      then convert the tasks to DIR/train.parquet and DIR/val.parquet (the command
                      prints how) and start DIR/run.sh [HYDRA_OVERRIDE ...]
  --out DIR           output folder (created; those three files are replaced, nothing else)
  --base-dir DIR      folder the config's relative paths are resolved against (default: the
                      current folder, as the trainer does)
  --n-gpus-per-node N trainer.n_gpus_per_node (default: 1 when the config's device is cpu, else ${DEFAULT_GPUS_PER_NODE});
                      the run config does not say how many GPUs a run gets
  --nnodes N          trainer.nnodes (default 1)
  --max-prompt-length N
                      data.max_prompt_length (default: measured prompt text + the most image
                      tokens at the pixel bounds); refused when an image at the bounds would
                      overflow it`;

/**
 * Problems that only say this machine lacks something (a data file, a model folder, a token)
 * are not the config's fault when the run starts on a cluster: they become warnings.
 */
const MACHINE_ONLY = new Set(['data/missing', 'policy/model-missing', 'env/token-file-missing', 'env/token-missing']);

function positiveInt(value: string | undefined, name: string, fallback: number | null, most = 4096): number | null {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > most) throw new UsageError(`${name} must be a whole number from 1 to ${most}, got '${value}'`);
  return n;
}

/** A path as the generated files show it: relative to the repository when inside, else absolute. */
function shownPath(repo: string, path: string): string {
  const absolute = resolve(path);
  return isInside(repo, absolute) ? relative(repo, absolute) || '.' : absolute;
}

export interface VerlExportRequest {
  file: string;
  out: string;
  baseDir?: string;
  nGpusPerNode: number | null;
  nnodes: number;
  maxPromptLength?: number | null;
}

/**
 * Reads and checks the run config, then builds the files (nothing is written). `lines` are the
 * problems as `vistool config validate` prints them (file:line:col: severity: message [code]);
 * an error stops the export with a message that says what to do.
 */
export async function prepareVerlExport(request: VerlExportRequest): Promise<{ outDir: string; repoRoot: string; files: VerlFiles; nextSteps: string[]; lines: string[] }> {
  const { file } = request;
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the run config ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); give the path of a *.vistool.json file`, { cause: err });
  }
  const baseDir = resolve(request.baseDir ?? '.');
  const facts = localFacts(undefined, process.env, process.env.HOME ?? '', [process.cwd()]);
  const { problems, config, raw, text } = validateRunConfigText(source, { baseDir, facts });
  const lines: string[] = [];
  const report = (found: ConfigProblem) => lines.push(formatProblem(file, text.locate(found)));
  const checked = problems.map((p) =>
    MACHINE_ONLY.has(p.code) && p.severity === 'error' ? { ...p, severity: 'warning' as const, message: `${p.message} (a warning for export: the run may start on another machine)` } : p,
  );
  for (const found of checked) if (found.severity !== 'info') report(found);
  const errors = checked.filter((p) => p.severity === 'error').length;
  if (errors > 0 || config === null) {
    throw new ExportRefused(lines, `${file} has ${errors || 1} error(s), listed above as \`vistool config validate ${file}\` prints them; fix them and export again`);
  }

  const repoRoot = repositoryRoot();
  const outDir = resolve(request.out);
  const configLabel = shownPath(repoRoot, file);
  const words = ['vistool', 'config', 'export', '--to', 'verl', configLabel, '--out', shownPath(repoRoot, outDir)];
  if (request.baseDir !== undefined) words.push('--base-dir', shownPath(repoRoot, request.baseDir));
  if (request.nGpusPerNode !== null) words.push('--n-gpus-per-node', String(request.nGpusPerNode));
  if (request.nnodes !== 1) words.push('--nnodes', String(request.nnodes));
  const maxPromptLength = request.maxPromptLength ?? null;
  if (maxPromptLength !== null) words.push('--max-prompt-length', String(maxPromptLength));
  const result = exportVerl(config, raw as Record<string, unknown>, { baseDir, outDir, repoRoot, configLabel, commandLine: words.join(' '), nGpusPerNode: request.nGpusPerNode, nnodes: request.nnodes, maxPromptLength });
  for (const found of result.problems) report(found);
  if (result.files === null) {
    const count = result.problems.filter((p) => p.severity === 'error').length;
    throw new ExportRefused(lines, `${file} cannot run on veRL as it is: ${count} error(s) listed above; fix them and export again`);
  }
  return { outDir, repoRoot, files: result.files, nextSteps: result.nextSteps, lines };
}

/** Writes the export's files into `outDir` (created; run.sh mode 0755); returns their paths. */
export async function writeVerlFiles(outDir: string, files: VerlFiles): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const written: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const target = join(outDir, name);
    await writeFile(target, content, name === 'run.sh' ? { mode: 0o755 } : {});
    if (name === 'run.sh') await chmod(target, 0o755); // an existing file keeps its old mode on write
    written.push(target);
  }
  return written;
}

/** The export stops: `lines` are the problems found, the message says what to do. */
export class ExportRefused extends Error {
  override name = 'ExportRefused';
  constructor(
    readonly lines: string[],
    message: string,
  ) {
    super(message);
  }
}

export function createConfigExportCommand(io: CliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['config', 'export'],
    summary: "Write a run config as another trainer's run: --to verl gives verl.yaml, agent_loop.yaml and run.sh",
    usage,
    async run(argv) {
      const { values, positionals } = parseCommandArgs({
        args: argv,
        options: { to: { type: 'string' }, out: { type: 'string' }, 'base-dir': { type: 'string' }, 'n-gpus-per-node': { type: 'string' }, nnodes: { type: 'string' }, 'max-prompt-length': { type: 'string' } },
        strict: true,
        allowPositionals: true,
      });
      if (!values.to || !EXPORT_TARGETS.includes(values.to as (typeof EXPORT_TARGETS)[number])) throw new UsageError(`--to must be one of ${EXPORT_TARGETS.join(', ')}; got '${values.to ?? ''}'`);
      const [file, ...extra] = positionals;
      if (file === undefined || extra.length > 0) throw new UsageError(`give exactly one run config file${extra.length > 0 ? ` (got ${positionals.length}: ${positionals.join(', ')})` : ''}`);
      if (!values.out) throw new UsageError('--out DIR is required: the folder verl.yaml, agent_loop.yaml and run.sh go into');
      const nGpusPerNode = positiveInt(values['n-gpus-per-node'], '--n-gpus-per-node', null);
      const nnodes = positiveInt(values.nnodes, '--nnodes', 1) ?? 1;
      const maxPromptLength = positiveInt(values['max-prompt-length'], '--max-prompt-length', null, 1_048_576);

      let prepared;
      try {
        prepared = await prepareVerlExport({ file, out: values.out, baseDir: values['base-dir'], nGpusPerNode, nnodes, maxPromptLength });
      } catch (err) {
        if (err instanceof ExportRefused) for (const line of err.lines) io.stderr.write(line + '\n');
        throw err;
      }
      for (const line of prepared.lines) io.stderr.write(line + '\n');
      const { outDir, repoRoot, files, nextSteps } = prepared;
      const written = await writeVerlFiles(outDir, files);
      io.stderr.write(`config export: wrote ${written.map((w) => shownPath(repoRoot, w)).join(', ')}\n`);
      io.stderr.write(`before ${shownPath(repoRoot, join(outDir, 'run.sh'))}, run from ${repoRoot}:\n${nextSteps.map((s) => `  ${s}`).join('\n')}\n`);
      io.stdout.write(`${JSON.stringify({ out: outDir, files: written, next: nextSteps })}\n`);
      return 0;
    },
  };
}

export const configExportCommand = createConfigExportCommand();
