/**
 * How a run config that asks for veRL (`"engine": "verl"`) is launched: the recipe that
 * `vistool config export --to verl` writes goes into RUN_DIR/verl-recipe/, and the managed process
 * is its run.sh (`bash RUN_DIR/verl-recipe/run.sh`), which starts the env server and then veRL's
 * trainer. RUN_DIR, PYTHON (an interpreter with veRL 0.9.1 and vistool_verl: `make verl-env`
 * makes .venv-verl) and NODE reach run.sh through its environment, so the command line the
 * extension shows before it starts is exactly what runs.
 *
 * Editor-free (unit-tested under plain Node). Plans; never spawns.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { shellWord } from '../../env/config/verl-export.js';
import type { TrainerLaunchPlan } from './trainer-launch.js';

/** The folder of the run directory the recipe is written into. */
export const VERL_RECIPE_DIR = 'verl-recipe';
/** What the command line of a running veRL launch holds (the liveness check after a reload reads /proc/PID/cmdline). */
export const VERL_COMMAND_MARK = `/${VERL_RECIPE_DIR}/run.sh`;
/** The parquet files run.sh needs before it starts anything (the export's next steps make them). */
export const VERL_PARQUET_FILES = ['train.parquet', 'val.parquet'] as const;

export function verlRecipeDirOf(runDir: string): string {
  return join(runDir, VERL_RECIPE_DIR);
}

/** run.sh's stdout: veRL's console logger and progress, not trainer events. */
export function verlStdoutFileOf(runDir: string): string {
  return join(runDir, 'logs', 'verl-stdout.log');
}

export function verlStderrFileOf(runDir: string): string {
  return join(runDir, 'logs', 'verl-stderr.log');
}

export interface VerlLaunchInput {
  /** Absolute run directory; run.sh gets it as RUN_DIR. */
  runDir: string;
  /** The vistool checkout (bin/vistool.js, verl_bridge/): run.sh's working folder, as the export's next steps expect. */
  repoRoot: string;
  /** An interpreter with veRL and vistool_verl (run.sh's PYTHON). */
  python: string;
  /** Node for the env server (run.sh's NODE); null keeps the run config's env.node. */
  node: string | null;
  /** Hydra overrides for veRL, appended to run.sh's command line. */
  overrides?: string[];
  baseEnv: NodeJS.ProcessEnv;
}

export interface VerlLaunchPlan extends TrainerLaunchPlan {
  kind: 'verl';
  recipeDir: string;
  /** The command as a shell line, with the variables it sets: what the extension shows and logs. */
  commandLine: string;
}

export function planVerlLaunch(input: VerlLaunchInput): VerlLaunchPlan {
  const recipeDir = verlRecipeDirOf(input.runDir);
  const args = [join(recipeDir, 'run.sh'), ...(input.overrides ?? [])];
  const set: Record<string, string> = { RUN_DIR: input.runDir, PYTHON: input.python, ...(input.node !== null ? { NODE: input.node } : {}) };
  const env: NodeJS.ProcessEnv = { ...input.baseEnv, ...set, PYTHONUNBUFFERED: '1' };
  // Desktop VS Code runs extensions in Electron: a child must not inherit "run as node" for itself.
  delete env.ELECTRON_RUN_AS_NODE;
  const commandLine = [...Object.entries(set).map(([name, value]) => `${name}=${shellWord(value)}`), 'bash', ...args.map(shellWord)].join(' ');
  return {
    kind: 'verl',
    command: 'bash',
    args,
    cwd: input.repoRoot,
    env,
    runDir: input.runDir,
    eventsFile: verlStdoutFileOf(input.runDir),
    stderrFile: verlStderrFileOf(input.runDir),
    recipeDir,
    commandLine,
  };
}

/** The first interpreter of `candidates` that exists (the checkout's and the workspace folders' .venv-verl), else python3 from PATH. */
export function verlPython(folders: string[]): string {
  for (const folder of folders) {
    const python = join(folder, '.venv-verl', 'bin', 'python');
    if (existsSync(python)) return python;
  }
  return 'python3';
}

/** The parquet files the recipe folder still lacks. */
export function missingParquet(recipeDir: string): string[] {
  return VERL_PARQUET_FILES.filter((name) => !existsSync(join(recipeDir, name)));
}
