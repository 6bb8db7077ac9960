/**
 * Trainer memory: peak memory of an RL micro-batch and an SFT step against tokens per
 * micro-batch, with and without gradient checkpointing, and the memory per GPU it implies for
 * Qwen2.5-VL-3B and -7B. The measuring is Python (bench/trainer_memory.py, in the trainer's venv);
 * this runs it and passes its table through. About 15 minutes on 2 cores: every point is a
 * fresh process, and the slices hold a real 3B or 7B embedding and vocabulary.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export async function benchTrainerMemory(): Promise<void> {
  const python = process.env.VISTOOL_PYTHON ?? (existsSync('.venv/bin/python') ? '.venv/bin/python' : 'python3');
  const run = spawnSync(python, ['bench/trainer_memory.py'], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`bench/trainer_memory.py failed (exit ${run.status}); run \`make venv\` first`);
}
