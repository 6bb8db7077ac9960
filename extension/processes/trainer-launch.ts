/**
 * How a run is launched: the trainer command (`python -m vistool_trainer train --config F`), its
 * working folder (relative paths in a config resolve against it), its environment (the bundled
 * trainer on PYTHONPATH, the interpreter's environment activated, the chosen Node first on PATH
 * for the env server the trainer starts), and the files its stdout events and stderr go to.
 *
 * Output goes to files, not pipes, so the trainer outlives a window reload: the extension tails
 * the files and a reloaded window picks them up again from run.json's pid.
 *
 * Editor-free (unit-tested under plain Node). Plans; never spawns.
 */
import { delimiter, dirname, join } from 'node:path';

export interface TrainerLaunchInput {
  python: string;
  /** Variables that activate the interpreter's environment (python-environment.ts). */
  pythonEnv: Record<string, string>;
  /** Folder that holds the vistool_trainer package (the extension's trainer/). */
  trainerRoot: string;
  /** Node executable for the env server; null keeps PATH as it is. */
  node: string | null;
  /** The config file the trainer reads. */
  configPath: string;
  /** The trainer's working folder. */
  cwd: string;
  /** The run directory (the config's output_dir resolved against cwd, or the override). */
  runDir: string;
  resume: boolean;
  /** Passed as --output-dir when the run goes to a folder other than the config's output_dir. */
  outputDirOverride?: string;
  /** Stop after this many optimizer steps in this invocation (--max-steps). */
  maxSteps?: number;
  baseEnv: NodeJS.ProcessEnv;
}

/** What a launch runs: vistool's embedded trainer, or a veRL recipe's run.sh (verl-launch.ts). */
export type RunKind = 'trainer' | 'verl';

export interface TrainerLaunchPlan {
  /** Absent: the embedded trainer. */
  kind?: RunKind;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  runDir: string;
  /** The trainer's stdout: one JSON event per line (a veRL run.sh's stdout is its plain log). */
  eventsFile: string;
  /** The trainer's stderr: human logs and tracebacks. */
  stderrFile: string;
}

export function prependPath(list: string | undefined, ...entries: string[]): string {
  const existing = (list ?? '').split(delimiter).filter((p) => p !== '' && !entries.includes(p));
  return [...entries, ...existing].join(delimiter);
}

export function eventsFileOf(runDir: string): string {
  return join(runDir, 'logs', 'trainer-events.jsonl');
}

export function stderrFileOf(runDir: string): string {
  return join(runDir, 'logs', 'trainer-stderr.log');
}

export function planTrainerLaunch(input: TrainerLaunchInput): TrainerLaunchPlan {
  const args = ['-m', 'vistool_trainer', 'train', '--config', input.configPath];
  if (input.resume) args.push('--resume');
  if (input.outputDirOverride !== undefined) args.push('--output-dir', input.outputDirOverride);
  if (input.maxSteps !== undefined) args.push('--max-steps', String(input.maxSteps));
  const env: NodeJS.ProcessEnv = { ...input.baseEnv, ...input.pythonEnv };
  env.PYTHONPATH = prependPath(input.baseEnv.PYTHONPATH, input.trainerRoot);
  // Events must reach the file line by line, as they happen.
  env.PYTHONUNBUFFERED = '1';
  if (input.node !== null) env.PATH = prependPath(env.PATH, dirname(input.node));
  // Desktop VS Code runs extensions in Electron: a child must not inherit "run as node" for itself.
  delete env.ELECTRON_RUN_AS_NODE;
  return { command: input.python, args, cwd: input.cwd, env, runDir: input.runDir, eventsFile: eventsFileOf(input.runDir), stderrFile: stderrFileOf(input.runDir) };
}
