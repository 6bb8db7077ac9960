/**
 * Real run directories for the view and browser tests: every rollout is an episode played
 * through the real engine (Episode.start/step on the fixture table and bar chart, images in the
 * run's content-addressed images/ folder), scored by the real reward module, then written in the
 * rollout format with step, group and GRPO advantage as the trainer does. Metrics lines follow
 * the trainer's names; `appendMetrics` adds lines while a page is open (the live test).
 *
 * Scripts are the "model": fixed assistant messages, some with tool calls, some wrong, some
 * with hostile text (markup, javascript: links) that the viewer must show inert.
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import type { TokenViewTurn, Trajectory } from '../../env/episodes/trajectory.js';
import { TrajectoryScorer } from '../../env/rewards/trajectory-scorer.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import { type Fixture, tableFixture, verticalBarsFixture } from '../fixtures/render.js';

/** Text that would run script if any panel turned model text into markup. Each sets window.__xss. */
export const HOSTILE_TEXT = [
  '<script>window.__xss = "script-tag"</script>',
  '<img src=x onerror="window.__xss = \'img-onerror\'">',
  '[click me](javascript:window.__xss="markdown-link")',
  '<a href="javascript:window.__xss=\'anchor\'">anchor</a>',
  '<svg onload="window.__xss=\'svg\'"></svg>',
  '**bold** `code` <iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
].join('\n');

export interface Script {
  kind: 'table' | 'vbar';
  /** Assistant messages, in order; the episode stops at an answer. */
  messages: string[];
}

const mask = (columns: string[]) => `<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ${JSON.stringify(columns)}}}</tool_call>`;
const highlightRows = (rows: string[]) => `<tool_call>{"name": "focus_on_rows_with_highlight", "arguments": {"rows": ${JSON.stringify(rows)}}}</tool_call>`;
const highlightBars = (labels: string[]) => `<tool_call>{"name": "focus_on_x_values_with_highlight", "arguments": {"x_values": ${JSON.stringify(labels)}}}</tool_call>`;

/** A group of four table rollouts: two tool users (right), one no-tool guess (wrong), one tool error then right. */
export const TABLE_GROUP: Script[] = [
  { kind: 'table', messages: [`<think>Only Rider and Wins matter.</think>\n${mask(['Rider', 'Wins'])}`, '<think>Merckx row shows 34.</think>\n<answer>34</answer>'] },
  { kind: 'table', messages: [`${mask(['Rider', 'Wins'])}`, `${highlightRows(['Merckx'])}`, '<answer>34</answer>'] },
  { kind: 'table', messages: ['<think>I remember it is 28.</think>\n<answer>28</answer>'] },
  { kind: 'table', messages: [`${mask(['Rider', 'Points'])}`, '<answer>34</answer>'] },
];

/** A group of four bar-chart rollouts with identical outcomes: zero reward spread, so dynamic sampling drops it. */
export const FLAT_GROUP: Script[] = Array.from({ length: 4 }, () => ({ kind: 'vbar' as const, messages: [highlightBars(['2020']), '<answer>2020</answer>'] }));

export const HOSTILE_GROUP: Script[] = [
  { kind: 'table', messages: [`${HOSTILE_TEXT}\n${mask(['Rider', 'Wins'])}`, `<think>${HOSTILE_TEXT}</think><answer>34</answer>`] },
  { kind: 'table', messages: [`<answer><img src=x onerror="window.__xss='answer'">28</answer>`] },
];

async function taskFor(kind: Script['kind'], fixture: Fixture, question?: string): Promise<TaskRecord> {
  return kind === 'table'
    ? { id: 'fixture-table', image: 'table.png', question: question ?? 'How many wins does Merckx have?', answer: '34', kind: 'table', difficulty: 1, meta: fixture.meta, source: 'test' }
    : { id: 'fixture-vbar', image: 'vbar.png', question: question ?? 'Which year has the highest value?', answer: '2020', kind: 'vbar', difficulty: 1, meta: fixture.meta, source: 'test' };
}

/** Plays one scripted episode through the engine and scores it. */
export async function playEpisode(script: Script, store: ImageStore, scorer: TrajectoryScorer, question?: string): Promise<Trajectory> {
  const fixture = script.kind === 'table' ? await tableFixture() : await verticalBarsFixture();
  const task = await taskFor(script.kind, fixture, question);
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  const { episode } = await Episode.start(task, fixture.image, meta, store);
  for (const text of script.messages) {
    if (episode.isDone) break;
    await episode.step({ text });
  }
  const trajectory = episode.trajectory();
  const scored = await scorer.score(trajectory, task.answer);
  return { ...trajectory, reward: scored.reward, reward_breakdown: scored.components, reward_weights: scored.weights, correct: scored.correct };
}

/** GRPO advantages for one group: (r − mean) / (std + 1e-6); zero for a group without spread. */
export function groupAdvantages(rewards: number[]): number[] {
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const std = Math.sqrt(rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / rewards.length);
  return rewards.map((r) => (std === 0 ? 0 : (r - mean) / (std + 1e-6)));
}

export interface RunOptions {
  /** Rollout steps to write, each with the given groups. */
  rolloutSteps?: number[];
  groups?: Script[][];
  /** Hostile question text for the tasks (XSS tests). */
  question?: string;
  /** Metric rows to write at the start. */
  metricRows?: number;
  /** How metric values evolve: 'fading' makes tool/call_rate fall steadily while reward rises. */
  trend?: 'healthy' | 'fading';
  evaluations?: boolean;
  status?: string;
  /** Give each rollout a token view as the trainer writes one (trainer/vistool_trainer/rollouts/token_view.py), with made-up numbers. */
  tokenViews?: boolean;
}

/**
 * A token view in the trainer's layout for a trajectory's assistant turns: the text split into
 * word, space and punctuation tokens plus the end-of-turn token, with deterministic numbers, and
 * the last turn's end token outside the loss (so the view's strike-through has something to show).
 */
export function fixtureTokenView(trajectory: Trajectory): TokenViewTurn[] {
  const assistant = trajectory.turns.map((turn, index) => ({ turn, index })).filter(({ turn }) => turn.role === 'assistant');
  return assistant.map(({ turn, index }, k) => {
    const tokens = [...(turn.text.match(/\s+|\w+|[^\w\s]/g) ?? []), '<|im_end|>'];
    return {
      turn: index,
      tokens,
      logprob: tokens.map((_, i) => -Number(((i % 7) * 0.4).toFixed(4))),
      entropy: tokens.map((_, i) => Number(((i % 5) * 0.3).toFixed(4))),
      mask: tokens.map((_, i) => (k === assistant.length - 1 && i === tokens.length - 1 ? 0 : 1)),
    };
  });
}

/** One metrics line as the trainer writes it (plus a `time`, which the trainer may add). */
export function metricRow(step: number, trend: 'healthy' | 'fading', start = 1_700_000_000): Record<string, unknown> {
  // Deterministic wiggle so curves are not straight lines.
  const wiggle = Math.sin(step * 1.7) * 0.02;
  const reward = 0.3 + 0.5 * (1 - Math.exp(-step / 40)) + wiggle;
  const callRate = trend === 'fading' ? Math.max(0.05, 0.9 - 0.012 * step) + wiggle / 2 : 0.75 + wiggle;
  return {
    step,
    stage: 'rl',
    time: start + step * 12.5,
    'reward/mean': reward,
    'reward/accuracy': reward * 0.8,
    'reward/format': 0.95 + wiggle,
    'acc/mean': reward * 0.8,
    'tool/call_rate': callRate,
    'response_length/mean': 180 + step * 0.5,
    'actor/entropy': 1.2 - step * 0.004,
    'actor/kl': 0.001 * step,
    'actor/pg_clipfrac': 0.05 + wiggle,
    'timing/step_s': 12.5,
  };
}

export async function appendMetrics(dir: string, fromStep: number, count: number, trend: 'healthy' | 'fading' = 'healthy'): Promise<void> {
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify(metricRow(fromStep + i, trend)) + '\n').join('');
  await appendFile(join(dir, 'metrics.jsonl'), lines);
}

/** Writes a complete run directory at `dir` and returns it. */
export async function writeRunDirectory(dir: string, options: RunOptions = {}): Promise<string> {
  await mkdir(join(dir, 'rollouts'), { recursive: true });
  await writeFile(join(dir, 'config.json'), JSON.stringify({ name: 'test-run', rl: { group_size: 4 } }, null, 2));
  // The pid of a live process (this one): a "running" run with a dead pid reads as stopped.
  const run = { status: options.status ?? 'running', pid: process.pid, name: 'test-run', started_at: 1_700_000_000, updated_at: 1_700_000_600 };
  await writeFile(join(dir, 'run.json'), JSON.stringify(run, null, 2));
  await writeFile(join(dir, 'metrics.jsonl'), '');
  const rows = options.metricRows ?? 0;
  if (rows > 0) await appendMetrics(dir, 1, rows, options.trend ?? 'healthy');
  if (options.evaluations) {
    await appendFile(join(dir, 'metrics.jsonl'), JSON.stringify({ step: 0, stage: 'eval', label: 'before', 'eval/n': 16, 'eval/acc_tools': 0.25, 'eval/acc_no_tools': 0.31, 'eval/tool_call_rate': 0.4 }) + '\n');
    await writeFile(join(dir, 'results.json'), JSON.stringify({ after_rl: { step: rows, 'eval/n': 16, 'eval/acc_tools': 0.62, 'eval/acc_no_tools': 0.44, 'eval/tool_call_rate': 0.81 } }));
  }
  const store = new ImageStore(join(dir, 'images'));
  const scorer = new TrajectoryScorer({});
  // The run's task file, as the trainer leaves generated tasks in data/train (the records carry the bands).
  if ((options.rolloutSteps ?? []).length > 0) {
    await mkdir(join(dir, 'data', 'train'), { recursive: true });
    const tasks = [await taskFor('table', await tableFixture(), options.question), await taskFor('vbar', await verticalBarsFixture(), options.question)];
    await writeFile(join(dir, 'data', 'train', 'tasks.jsonl'), tasks.map((task) => JSON.stringify(task)).join('\n') + '\n');
  }
  for (const step of options.rolloutSteps ?? []) {
    const lines: string[] = [];
    for (const group of options.groups ?? [TABLE_GROUP, FLAT_GROUP]) {
      const played = await Promise.all(group.map((script) => playEpisode(script, store, scorer, options.question)));
      const advantages = groupAdvantages(played.map((t) => t.reward ?? 0));
      played.forEach((t, i) => lines.push(JSON.stringify({ ...t, step, group: i, advantage: advantages[i], ...(options.tokenViews ? { token_view: fixtureTokenView(t) } : {}) })));
    }
    await writeFile(join(dir, 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`), lines.join('\n') + '\n');
  }
  return dir;
}
