/**
 * `checkpoint:<path>` policies: a trainer checkpoint is evaluated by the Python trainer itself
 * (`python -m vistool_trainer eval --config C --checkpoint P --n N`), because the weights, the
 * tokenizer and the generation code live there. This module writes the trainer a run config
 * derived from the checkpoint's own (same policy and env settings; this eval's tasks file, task
 * count and turn limit), runs it, reads its one `{"event": "eval", ...}` line from stdout and
 * writes results.json from it.
 *
 * What the trainer's eval gives today is aggregate only (eval/acc_tools, eval/acc_no_tools,
 * eval/tool_call_rate, ...): no per-task lines, so no resume, no per-kind/difficulty breakdown
 * and no trajectories for the viewer. README.md in this folder says what would change that.
 * Never imports or runs Python code in process; the trainer is a child process.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { loadTasks } from '../tasks/load.js';
import { RESULTS_FORMAT, RESULTS_VERSION, writeResultsDocument, type ResultsDocument } from './results-document.js';
import type { Arm } from './task-result.js';

export interface CheckpointEvalOptions {
  checkpoint: string;
  label: string;
  tasksFile: string;
  arms: Arm[];
  limit: number | null;
  /** Null: the turn limit of the checkpoint's run config. */
  maxTurns: number | null;
  out: string;
  /** The run config the checkpoint was trained with; default <checkpoint>/../../config.json. */
  trainerConfig?: string;
  /** Python interpreter with vistool_trainer installed; default $VISTOOL_PYTHON, then <repo>/.venv/bin/python, then python3. */
  python?: string;
  progress: (line: string) => void;
  signal?: AbortSignal;
}

/** The repository root: the folder above this module (source or bundle) that holds trainer/. */
export function repositoryRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'trainer', 'vistool_trainer', '__main__.py'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

export function defaultPython(): string {
  if (process.env.VISTOOL_PYTHON) return process.env.VISTOOL_PYTHON;
  const venv = join(repositoryRoot(), '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

/** The optimizer step of a checkpoint: trainer_state.json's global_step, else the folder name step-NNNNNN. */
export async function checkpointStep(checkpoint: string): Promise<number | null> {
  try {
    const state = JSON.parse(await readFile(join(checkpoint, 'trainer_state.json'), 'utf8')) as { global_step?: unknown };
    if (typeof state.global_step === 'number') return state.global_step;
  } catch {
    // no state file: fall back to the folder name
  }
  const match = /step-(\d+)$/u.exec(basename(resolve(checkpoint)));
  return match ? Number(match[1]) : null;
}

function numericMetrics(event: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(event)) if (key.startsWith('eval/') && typeof value === 'number' && Number.isFinite(value)) out[key] = value;
  return out;
}

export async function runCheckpointEval(options: CheckpointEvalOptions): Promise<ResultsDocument> {
  const checkpoint = resolve(options.checkpoint);
  if (!existsSync(checkpoint)) throw new Error(`checkpoint folder ${checkpoint} does not exist; give checkpoint:<run>/checkpoints/step-NNNNNN`);
  const configPath = resolve(options.trainerConfig ?? join(checkpoint, '..', '..', 'config.json'));
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`cannot read the run config of ${checkpoint} at ${configPath} (${(err as Error).message}); pass the config it was trained with as --trainer-config`, { cause: err });
  }
  const tasksFile = resolve(options.tasksFile);
  const tasks = await loadTasks(tasksFile);
  const n = options.limit === null ? tasks.length : Math.min(options.limit, tasks.length);
  const out = resolve(options.out);
  const trainerDir = join(out, 'trainer');
  await mkdir(trainerDir, { recursive: true });
  const env = { ...(config.env as Record<string, unknown> | undefined) };
  env.tools = options.arms.includes('tools');
  if (options.maxTurns !== null) env.max_turns = options.maxTurns;
  const derived = {
    ...config,
    output_dir: trainerDir,
    data: { ...(config.data as Record<string, unknown> | undefined), eval: tasksFile },
    eval: { ...(config.eval as Record<string, unknown> | undefined), n },
    env,
  };
  const derivedPath = join(out, 'trainer-config.json');
  await writeFile(derivedPath, JSON.stringify(derived, null, 2) + '\n');

  const python = options.python ?? defaultPython();
  const args = ['-m', 'vistool_trainer', 'eval', '--config', derivedPath, '--checkpoint', checkpoint, '--n', String(n)];
  options.progress(`eval: running the trainer on ${checkpoint}: ${python} ${args.join(' ')}`);
  const child = spawn(python, args, { cwd: repositoryRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
  const onAbort = () => child.kill('SIGTERM');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let event: Record<string, unknown> | null = null;
  const tail: string[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.event === 'eval') event = parsed;
    } catch {
      // the trainer's stdout is JSON events; anything else is kept for the error message
      tail.push(line);
    }
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    tail.push(line);
    if (tail.length > 20) tail.shift();
    options.progress(`trainer: ${line}`);
  });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolveExit, reject) => {
    child.once('error', (err) => reject(new Error(`cannot start ${python} (${err.message}); set VISTOOL_PYTHON or --python to an interpreter with vistool_trainer installed`)));
    child.once('close', (c, s) => resolveExit([c, s]));
  });
  options.signal?.removeEventListener('abort', onAbort);
  if (options.signal?.aborted) throw new Error('checkpoint eval interrupted');
  const found = event as Record<string, unknown> | null;
  if (code !== 0 || found === null) {
    throw new Error(`the trainer's eval ${signal ? `was killed by ${signal}` : `exited with ${code}`}${found === null ? ' without an eval event' : ''}; its last output:\n${tail.slice(-10).join('\n')}`);
  }
  const step = await checkpointStep(checkpoint);
  const document: ResultsDocument = {
    format: RESULTS_FORMAT,
    version: RESULTS_VERSION,
    label: options.label,
    policy: `checkpoint:${checkpoint}`,
    tasks_file: tasksFile,
    tasks: n,
    arms_requested: [...options.arms],
    complete: true,
    per_task: false,
    step,
    updated_at: Date.now() / 1000,
    evaluations: { [options.label]: { step, metrics: numericMetrics(found) } },
    arms: {},
  };
  await writeResultsDocument(out, document);
  return document;
}
