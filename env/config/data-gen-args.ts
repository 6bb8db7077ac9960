/**
 * The `vistool data gen` arguments a run config's `data.generate` stands for, one split at a
 * time: what the trainer runs when `data.train` / `data.eval` is null (trainer/vistool_trainer/
 * train.py, generate_tasks), what the veRL export writes into run.sh, and what the editor's
 * Generate Tasks offers, so the tasks made by hand are the tasks the run would make.
 *
 * `generate` must have its schema defaults applied (withDefaults in run-config-schema.ts).
 */

import { withDefaults } from './run-config-schema.js';

export type GenerateSplit = 'train' | 'test';

export function dataGenArguments(generate: Readonly<Record<string, unknown>>, seed: number, split: GenerateSplit): string[] {
  const count = split === 'train' ? generate.n_train : generate.n_eval;
  const words = ['--kind', String(generate.kind), '--n', String(count), '--seed', String(seed), '--split', split, '--difficulty', String(generate.difficulty), '--image-size', String(generate.image_size)];
  if (Array.isArray(generate.families) && generate.families.length > 0) words.push('--family', generate.families.join(','));
  if (Array.isArray(generate.labels) && generate.labels.length > 0) words.push('--labels', generate.labels.join(','));
  if (typeof generate.min_top_gap === 'number' && generate.min_top_gap > 0) words.push('--min-top-gap', String(generate.min_top_gap));
  if (Array.isArray(generate.categories) && generate.categories.length > 0) words.push('--categories', generate.categories.join('-'));
  if (generate.shuffle_labels === true) words.push('--shuffle-labels');
  if (typeof generate.max_pixels === 'number') words.push('--max-pixels', String(generate.max_pixels));
  return words;
}

/** `vbar · 4000 train + 300 held-out · difficulty 2 · 224x112 · level · labels A–F`: what a config's tasks look like. */
export function describeGenerate(generate: Readonly<Record<string, unknown>>): string {
  const parts = [String(generate.kind), `${String(generate.n_train)} train + ${String(generate.n_eval)} held-out`, `difficulty ${String(generate.difficulty)}`, String(generate.image_size)];
  if (Array.isArray(generate.families) && generate.families.length > 0) parts.push(generate.families.join(', '));
  if (Array.isArray(generate.labels) && generate.labels.length > 0) parts.push(`labels ${generate.labels.join(' ')}`);
  return parts.join(' · ');
}

export interface GenerationJob {
  split: GenerateSplit;
  /** `data gen` arguments, without `--out`. */
  args: string[];
  out: string;
}

/**
 * The task folders a run config's generator makes: the training split and the held-out one, as
 * `OUT/train` and `OUT/eval`. Errors say what in the config is missing.
 */
export function generationJobs(configText: string, out: string): { jobs: GenerationJob[]; description: string; name: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(configText);
  } catch (err) {
    throw new Error(`the run config is not valid JSON (${(err as Error).message}); fix it in the editor first`, { cause: err });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('a run config is a JSON object ({"name": ..., "data": {...}})');
  const config = withDefaults(raw as Record<string, unknown>);
  const data = config.data as Record<string, unknown>;
  const generate = data.generate as Record<string, unknown>;
  const seed = typeof config.seed === 'number' ? config.seed : 1;
  const name = typeof config.name === 'string' && config.name !== '' ? config.name : 'run';
  return {
    name,
    description: describeGenerate(generate),
    jobs: [
      { split: 'train', args: dataGenArguments(generate, seed, 'train'), out: `${out}/train` },
      { split: 'test', args: dataGenArguments(generate, seed, 'test'), out: `${out}/eval` },
    ],
  };
}
