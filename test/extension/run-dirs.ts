/**
 * Run directories in the trainer's exact shapes (trainer/vistool_trainer/run/run_directory.py and
 * train.py): run.json with status/pid/name/times, metrics.jsonl with SFT rows, RL rows and eval
 * rows, rollouts/step-NNNNNN.jsonl. For the host-logic unit tests that need no trainer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `vistool-ext-${prefix}-`));
}

export interface RunSpec {
  name: string;
  status?: string;
  pid?: number;
  error?: string;
  startedAt?: number;
  metrics?: Record<string, unknown>[];
}

export async function writeRun(root: string, spec: RunSpec): Promise<string> {
  const dir = join(root, spec.name);
  for (const sub of ['rollouts', 'images', 'checkpoints', 'logs']) await mkdir(join(dir, sub), { recursive: true });
  if (spec.status !== undefined) {
    const run: Record<string, unknown> = { status: spec.status, name: spec.name, started_at: spec.startedAt ?? 1_700_000_000, updated_at: (spec.startedAt ?? 1_700_000_000) + 5 };
    if (spec.pid !== undefined) run.pid = spec.pid;
    if (spec.error !== undefined) run.error = spec.error;
    await writeFile(join(dir, 'run.json'), JSON.stringify(run, null, 2) + '\n');
  }
  await writeFile(join(dir, 'config.json'), JSON.stringify({ name: spec.name, output_dir: dir }) + '\n');
  if (spec.metrics) await writeFile(join(dir, 'metrics.jsonl'), spec.metrics.map((m) => JSON.stringify(m) + '\n').join(''));
  return dir;
}

export const sftRow = (step: number, loss: number) => ({ step, stage: 'sft', 'sft/step': step, 'sft/loss': loss, 'timing/step_s': 0.2 });
export const rlRow = (step: number, rlStep: number, reward: number, toolRate: number) => ({
  step,
  stage: 'rl',
  'rl/step': rlStep,
  'reward/mean': reward,
  'acc/mean': reward / 1.1,
  'tool/call_rate': toolRate,
  'actor/loss': 0.01,
  'timing/step_s': 0.3,
});
export const evalRow = (step: number, label: string) => ({ step, stage: 'eval', label, 'eval/acc_tools': 0.5, 'eval/acc_no_tools': 0.4 });

/** A live process whose command line carries `mark` (as a trainer's carries vistool_trainer). */
export function liveProcess(mark: string): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', mark], { stdio: 'ignore' });
}

/** A pid that belonged to a process that has exited and been reaped. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  if (child.pid === undefined) throw new Error('could not start a short-lived process');
  return child.pid;
}
