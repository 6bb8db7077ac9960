/**
 * A big run directory for the view benchmarks, written into a temporary folder: a metrics.jsonl
 * of `metricLines` lines shaped like the demo trainer's (about 1.2 kB each: the reward and its
 * components, per-tool call and failure counts, error classes, actor statistics, timings; SFT
 * first, then RL, an evaluation line now and then), and `trajectories` rollout records spread
 * over step files. The records are real episodes played through the engine (test/view/
 * run-directory.ts), copied with their step, group and advantage changed, so the viewer parses
 * what a trainer writes and its images exist.
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImageStore } from '../env/episodes/image-store.js';
import { TrajectoryScorer } from '../env/rewards/trajectory-scorer.js';
import { FLAT_GROUP, groupAdvantages, playEpisode, TABLE_GROUP } from '../test/runs/run-directory.js';

export interface LargeRunOptions {
  metricLines: number;
  trajectories: number;
  /** Trajectories per step file. */
  perStep: number;
}

const TOOLS = ['focus_on_columns_with_mask', 'focus_on_rows_with_draw', 'focus_on_x_values_with_highlight', 'zoom_in', 'ocr'];
const REWARD_PARTS = ['accuracy', 'format', 'no_tool_factor', 'repetition', 'tool_use'];
const SFT_FRACTION = 0.02;
const START = 1_700_000_000;

/** One training line, deterministic in its step, with the names the demo's trainer logs. */
export function largeMetricLine(step: number, total: number): string {
  const sft = step <= total * SFT_FRACTION;
  const wiggle = Math.sin(step * 1.7) * 0.03 + Math.sin(step * 0.013) * 0.05;
  const progress = 1 - Math.exp(-step / (total / 5));
  const reward = 0.3 + 0.5 * progress + wiggle;
  const row: Record<string, number | string> = { step, stage: sft ? 'sft' : 'rl', time: START + step * 2.5 };
  if (sft) row['sft/loss'] = 2.2 * (1 - progress) + 0.1 + wiggle;
  row['reward/mean'] = reward;
  for (const part of REWARD_PARTS) row[`reward/${part}`] = reward * (0.5 + part.length / 40) + wiggle / 3;
  row['acc/mean'] = reward * 0.8;
  row['tool/call_rate'] = 0.75 + wiggle;
  row['tool/error_rate'] = 0.1 - wiggle / 2;
  row['tool/calls_mean'] = 1.6 + wiggle;
  for (const [i, tool] of TOOLS.entries()) {
    row[`tools/${tool}/calls`] = Math.round(20 + 10 * Math.sin(step * 0.01 + i));
    row[`tools/${tool}/failed`] = Math.round(2 + 2 * Math.sin(step * 0.02 + i));
  }
  for (const e of ['E1', 'E2', 'E3', 'E4', 'E5', 'E6']) row[`errors/${e}`] = Math.round(3 + 3 * Math.sin(step * 0.03 + e.charCodeAt(1)));
  row['response_length/mean'] = 180 + 40 * progress + wiggle * 100;
  row['num_turns/mean'] = 2.1 + wiggle;
  row['actor/entropy'] = 1.2 - 0.8 * progress + wiggle / 5;
  row['actor/kl'] = 0.02 * progress + Math.abs(wiggle) / 100;
  row['actor/pg_clipfrac'] = 0.05 + wiggle / 3;
  row['actor/grad_norm'] = 0.8 + wiggle;
  row['actor/lr'] = 1e-6;
  row['timing/step_s'] = 2.5 + wiggle;
  row['timing/env_fraction'] = 0.3 + wiggle / 4;
  row['timing/update_s'] = 0.9 + wiggle;
  return JSON.stringify(row);
}

export async function writeMetrics(path: string, lines: number): Promise<void> {
  await writeFile(path, '');
  const batch = 5000;
  for (let from = 1; from <= lines; from += batch) {
    const chunk: string[] = [];
    for (let step = from; step < Math.min(from + batch, lines + 1); step++) {
      chunk.push(largeMetricLine(step, lines));
      if (step % 10_000 === 0) chunk.push(JSON.stringify({ step, stage: 'eval', label: `step ${step}`, 'eval/n': 64, 'eval/acc_tools': 0.5 + step / lines / 3, 'eval/acc_no_tools': 0.4 }));
    }
    await appendFile(path, chunk.join('\n') + '\n');
  }
}

/** Writes the run and returns its directory. */
export async function writeLargeRun(dir: string, options: LargeRunOptions): Promise<string> {
  await mkdir(join(dir, 'rollouts'), { recursive: true });
  await writeFile(join(dir, 'config.json'), JSON.stringify({ name: 'bench-large', rl: { group_size: 4 } }, null, 2));
  await writeFile(join(dir, 'run.json'), JSON.stringify({ status: 'running', pid: process.pid, name: 'bench-large', started_at: START, updated_at: START + options.metricLines * 2.5 }));
  await writeMetrics(join(dir, 'metrics.jsonl'), options.metricLines);

  const store = new ImageStore(join(dir, 'images'));
  const scorer = new TrajectoryScorer({});
  const played = await Promise.all([...TABLE_GROUP, ...FLAT_GROUP].map((script) => playEpisode(script, store, scorer)));
  const advantages = [...groupAdvantages(played.slice(0, 4).map((t) => t.reward ?? 0)), ...groupAdvantages(played.slice(4).map((t) => t.reward ?? 0))];
  const templates = played.map((t, i) => ({ ...t, group: i % 4, advantage: advantages[i] }));
  const steps = Math.ceil(options.trajectories / options.perStep);
  for (let step = 1; step <= steps; step++) {
    const count = Math.min(options.perStep, options.trajectories - (step - 1) * options.perStep);
    const lines: string[] = [];
    for (let i = 0; i < count; i++) {
      // Each group of four gets its own prompt id, so the viewer shows count / 4 groups.
      lines.push(JSON.stringify({ ...templates[i % templates.length], step, prompt_id: `p${step}-${Math.floor(i / 4)}` }));
    }
    await writeFile(join(dir, 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`), lines.join('\n') + '\n');
  }
  return dir;
}
