/**
 * A folder of runs laid out as `make demo` leaves it (trainer/vistool_trainer/run/demo.py): two
 * run directories, `tools` and `text`, beside `report.html`, `summary.json` and the data sets both
 * trained on (`data/train`, `data/eval`). Each run has what the trainer writes: SFT rows (with
 * `sft/step`) then RL rows in metrics.jsonl, evaluation lines with `eval/n` and the correct counts,
 * run.json with `sft_schedule`, training rollouts in `rollouts/step-NNNNNN.jsonl`, and every
 * evaluation's per-task records in `rollouts/eval-<label>.jsonl` (trainer/.../eval_records.py's
 * layout: a task's arms on consecutive lines, group 0 tools, 1 no tools). Every rollout is an
 * episode played through the real engine (run-directory.ts's scripts), scored by the real reward.
 *
 * The evaluations are scripted so the comparison has every outcome: `outcomes` says, per held-out
 * task, whether each evaluation got it right, from which the tests compute the expected counts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImageStore } from '../../env/episodes/image-store.js';
import { TrajectoryScorer } from '../../env/rewards/trajectory-scorer.js';
import { FLAT_GROUP, groupAdvantages, playEpisode, type Script, TABLE_GROUP } from './run-directory.js';
import { tableFixture, verticalBarsFixture } from '../fixtures/render.js';

const mask = (columns: string[]) => `<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ${JSON.stringify(columns)}}}</tool_call>`;
/** A held-out table task answered right (34) or wrong (28), with the tool (tools arm) or without. */
const answer = (right: boolean, tools: boolean): Script => ({ kind: 'table', messages: [...(tools ? [mask(['Rider', 'Wins'])] : []), `<answer>${right ? '34' : '28'}</answer>`] });

/** Held-out tasks and, per evaluation label, whether the tools arm got each right. */
export const HELD_OUT = ['test-table-000001', 'test-table-000002', 'test-table-000003', 'test-table-000004', 'test-table-000005'];
export const EVALS = [
  { label: 'after_sft', step: 10 },
  { label: 'rl_step_2', step: 12 },
  { label: 'after_rl', step: 14 },
] as const;
/** after_sft → after_rl: task 1 fixed, 2 broken, 3 both wrong, 4 and 5 both right. */
export const OUTCOMES: Record<(typeof EVALS)[number]['label'], boolean[]> = {
  after_sft: [false, true, false, true, true],
  rl_step_2: [true, true, false, true, false],
  after_rl: [true, false, false, true, true],
};
/** The no-tools arm is wrong on every task but the fifth. */
export const NO_TOOLS_RIGHT = [false, false, false, false, true];
export const SFT_STEPS = 10;
export const RL_STEPS = [11, 12, 13, 14];
/** Steps whose training rollouts are written (the training prompts are the fixture's table and bar-chart tasks). */
export const ROLLOUT_STEPS = [12, 14];

function sftRow(step: number) {
  return { step, stage: 'sft', 'sft/step': step, 'sft/loss': 3 / step, 'timing/step_s': 0.5, time: 1_700_000_000 + step, ...(step % 2 === 0 ? { 'sft/probe_call_acc': step / 10, 'sft/probe_answer_after_tool_acc': step / 12 } : {}) };
}

function rlRow(step: number, tools: boolean) {
  const k = step - SFT_STEPS;
  return {
    step,
    stage: 'rl',
    'rl/step': k,
    time: 1_700_000_000 + step,
    'reward/mean': 0.4 + 0.1 * k,
    'reward/accuracy': 0.3 + 0.1 * k,
    'reward/format': 1,
    'reward/tool_bonus': tools ? 0.1 * k : 0,
    'reward/repetition': 0,
    'acc/mean': 0.3 + 0.1 * k,
    'tool/call_rate': tools ? 0.5 + 0.1 * k : 0,
    'errors/E1': k % 2,
    'errors/E4': tools ? k % 3 : 0,
    'tools/focus_on_columns_with_mask/calls': tools ? 4 + k : 0,
    // Logged on two steps only: a line of two points (the dashboard leaves it in the picker).
    ...(tools && (k === 2 || k === 3) ? { 'tools/focus_on_columns_with_mask/failed': k - 1 } : {}),
    'sampling/kept_groups': 2 + (k % 2),
    'sampling/dropped_groups': 2 - (k % 2),
    'actor/kl': 0,
    'actor/entropy': 1 - 0.1 * k,
    'response_length/mean': 20 + k,
    'timing/step_s': 1.5,
  };
}

async function writeRun(dir: string, tools: boolean, store: ImageStore, scorer: TrajectoryScorer): Promise<void> {
  await mkdir(join(dir, 'rollouts'), { recursive: true });
  const evalLines = EVALS.map(({ label, step }) => {
    const right = tools ? OUTCOMES[label] : NO_TOOLS_RIGHT;
    const correct = right.filter(Boolean).length;
    const arm = tools ? 'tools' : 'no_tools';
    return { step, stage: 'eval', label, 'eval/n': HELD_OUT.length, [`eval/acc_${arm}`]: correct / HELD_OUT.length, [`eval/correct_${arm}`]: correct, ...(tools ? { 'eval/acc_no_tools': 0.2, 'eval/correct_no_tools': 1 } : {}) };
  });
  const rows = [...Array.from({ length: SFT_STEPS }, (_, i) => sftRow(i + 1)), evalLines[0], ...RL_STEPS.map((s) => rlRow(s, tools)), ...evalLines.slice(1)];
  // RL rows and eval lines in step order, as the trainer appends them.
  rows.sort((a, b) => (a?.step ?? 0) - (b?.step ?? 0));
  await writeFile(join(dir, 'metrics.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const name = tools ? 'tools' : 'text';
  const data = { train: join(dir, '..', 'data', 'train', 'tasks.jsonl'), eval: join(dir, '..', 'data', 'eval', 'tasks.jsonl') };
  await writeFile(join(dir, 'config.json'), JSON.stringify({ name: `demo-${name}`, output_dir: dir, data, env: { tools }, rewards: { weights: { accuracy: 0.8, format: 0.2, tool_bonus: 0.2, tool_use: 0, efficiency: 0 } } }, null, 2));
  await writeFile(
    join(dir, 'run.json'),
    JSON.stringify({ status: 'finished', name: `demo-${name}`, started_at: 1_700_000_000 + (tools ? 1 : 0), updated_at: 1_700_000_100, sft_schedule: { lengths: [4, 0, 3], targets: [0.9, null, 0.9], ends: [4, 4, 7], ended_early_at: [null, null, null] } }),
  );
  for (const step of ROLLOUT_STEPS) {
    const lines: string[] = [];
    for (const group of tools ? [TABLE_GROUP, FLAT_GROUP] : [[answer(true, false), answer(false, false)]]) {
      const played = await Promise.all(group.map((script) => playEpisode(script, store, scorer)));
      const advantages = groupAdvantages(played.map((t) => t.reward ?? 0));
      played.forEach((t, i) => lines.push(JSON.stringify({ ...t, step, group: i, advantage: advantages[i], kept: true })));
    }
    await writeFile(join(dir, 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`), lines.join('\n') + '\n');
  }
  for (const { label, step } of EVALS) {
    const lines: string[] = [];
    for (const [i, promptId] of HELD_OUT.entries()) {
      const arms: ['tools' | 'no_tools', boolean][] = tools ? [['tools', OUTCOMES[label][i] as boolean], ['no_tools', NO_TOOLS_RIGHT[i] as boolean]] : [['no_tools', NO_TOOLS_RIGHT[i] as boolean]];
      for (const [arm, right] of arms) {
        const t = await playEpisode(answer(right, arm === 'tools'), store, scorer);
        lines.push(JSON.stringify({ ...t, prompt_id: promptId, step, group: arm === 'tools' ? 0 : 1, arm, label }));
      }
    }
    await writeFile(join(dir, 'rollouts', `eval-${label}.jsonl`), lines.join('\n') + '\n');
  }
}

/** Writes the demo-like folder at `root` (it becomes root/tools, root/text, …) and returns the two run directories. */
export async function writeDemoFolder(root: string, report = '<!doctype html><meta charset="utf-8"><title>vistool demo — tools against text</title><h1>Demo report</h1>'): Promise<{ tools: string; text: string }> {
  const tools = join(root, 'tools');
  const text = join(root, 'text');
  const scorer = new TrajectoryScorer({});
  for (const [dir, withTools] of [[tools, true], [text, false]] as const) await writeRun(dir, withTools, new ImageStore(join(dir, 'images')), scorer);
  // The data sets both arms trained and were evaluated on: the fixture's table and bar chart, and the held-out tables.
  const [table, bars] = await Promise.all([tableFixture(), verticalBarsFixture()]);
  const task = (id: string, kind: 'table' | 'vbar') =>
    kind === 'table'
      ? { id, image: 'table.png', question: 'How many wins does Merckx have?', answer: '34', kind, difficulty: 1, meta: table.meta, source: 'test' }
      : { id, image: 'vbar.png', question: 'Which year has the highest value?', answer: '2020', kind, difficulty: 1, meta: bars.meta, source: 'test' };
  const splits = { train: [task('fixture-table', 'table'), task('fixture-vbar', 'vbar')], eval: HELD_OUT.map((id) => task(id, 'table')) };
  for (const [split, tasks] of Object.entries(splits)) {
    await mkdir(join(root, 'data', split), { recursive: true });
    await writeFile(join(root, 'data', split, 'tasks.jsonl'), tasks.map((t) => JSON.stringify(t)).join('\n') + '\n');
    await writeFile(join(root, 'data', split, 'table.png'), table.png);
    await writeFile(join(root, 'data', split, 'vbar.png'), bars.png);
  }
  await writeFile(join(root, 'report.html'), report);
  await writeFile(join(root, 'summary.json'), JSON.stringify({ arms: ['tools', 'text'] }));
  return { tools, text };
}
