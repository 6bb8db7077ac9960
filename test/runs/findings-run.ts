/**
 * A run directory with issue 43's fields, for the panels' tests: the episodes are the table group of
 * run-directory.ts played through the real engine (images and all), and the fields the env and the
 * trainer add were written here by hand, in the record layout of schemas/rollout-record.schema.json:
 * each call that ran gets a `target`, each record its `findings`, each evaluated episode with a
 * call that ran its `counterfactual`. metrics.jsonl has the RL rows with `scan/<name>` and the
 * target counts, and evaluation lines with `eval/tool_effect` and its interval.
 *
 * The numbers are made up, not computed by any scanner: the tests read what the panels show
 * against the files written here.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HOSTILE_TEXT, TABLE_GROUP, writeRunDirectory } from './run-directory.js';

/** A finding name no scanner has, with markup in it: the viewer must show it as text. */
export const HOSTILE_FINDING = '<script>window.__xss = "finding"</script><img src=x onerror="window.__xss=\'finding-img\'">';
/** A counterfactual answer with markup in it. */
export const HOSTILE_ANSWER = `<img src=x onerror="window.__xss='counterfactual'">28 ${HOSTILE_TEXT.split('\n')[0]}`;

/**
 * Per line of the table group (run-directory.ts's TABLE_GROUP): each call's target (null: the call
 * failed, so it has none) and the record's findings, at step 2 and at step 4. Line 3's mask names a
 * column the table lacks (E4) and answers anyway: an ignored tool error.
 */
const ANNOTATIONS: Record<number, { targets: (string | null)[]; findings: string[] }[]> = {
  2: [
    { targets: ['on'], findings: [] },
    { targets: ['on', 'off'], findings: ['off_target_call'] },
    { targets: [], findings: [] },
    { targets: [null], findings: ['ignored_tool_error'] },
  ],
  4: [
    { targets: ['on'], findings: [] },
    { targets: ['partly', 'off'], findings: ['off_target_call'] },
    { targets: [], findings: [HOSTILE_FINDING, 'format_collapse'] },
    { targets: [null], findings: ['ignored_tool_error'] },
  ],
};

/** The evaluated episodes: which step-4 line each replays, under which prompt id, and its counterfactual (none for a line without a call that ran). */
export const EVAL_EPISODES = [
  { promptId: 'held-1', line: 0, counterfactual: { answer: '28', correct: false, changed: true }, findings: [] },
  { promptId: 'held-2', line: 1, counterfactual: { answer: '34', correct: true, changed: false }, findings: ['off_target_call', 'answered_without_looking'] },
  { promptId: 'held-3', line: 3, counterfactual: null, findings: ['ignored_tool_error'] },
  { promptId: 'held-4', line: 0, counterfactual: { answer: HOSTILE_ANSWER, correct: false, changed: true }, findings: [] },
] as const;

/** The evaluation lines: a tool effect with its interval at each, the call rate and calls on target beside it. */
export const EVAL_LINES = [
  { step: 2, stage: 'eval', label: 'rl_step_2', 'eval/n': 4, 'eval/acc_tools': 0.5, 'eval/correct_tools': 2, 'eval/tool_call_rate': 1, 'eval/tool_effect': 0, 'eval/tool_effect_lo': -0.4, 'eval/tool_effect_hi': 0.4, 'eval/answer_changed_rate': 0.25, 'eval/call_on_target_rate': 0.5 },
  { step: 3, stage: 'eval', label: 'rl_step_3', 'eval/n': 4, 'eval/acc_tools': 0.5, 'eval/correct_tools': 2, 'eval/tool_call_rate': 0.75, 'eval/tool_effect': 0.25, 'eval/tool_effect_lo': -0.2, 'eval/tool_effect_hi': 0.6, 'eval/answer_changed_rate': 0.5, 'eval/call_on_target_rate': 0.5 },
  {
    step: 4, stage: 'eval', label: 'after_rl', 'eval/n': 4, 'eval/acc_tools': 0.75, 'eval/correct_tools': 3, 'eval/tool_call_rate': 1, 'eval/tool_effect': 0.5, 'eval/tool_effect_lo': 0.05, 'eval/tool_effect_hi': 0.8, 'eval/answer_changed_rate': 0.5, 'eval/call_on_target_rate': 0.4,
    'scan/off_target_call': 1, 'scan/repeated_call': 0, 'scan/ignored_tool_error': 1, 'scan/degenerate_edit': 0, 'scan/format_collapse': 0, 'scan/answered_without_looking': 1,
  },
];

/** Counts of each known scanner among records' findings (what scan/<name> of their step says). */
export function scanCounts(findings: readonly (readonly string[])[]): Record<string, number> {
  const names = ['off_target_call', 'repeated_call', 'ignored_tool_error', 'degenerate_edit', 'format_collapse', 'answered_without_looking'];
  return Object.fromEntries(names.map((name) => [`scan/${name}`, findings.filter((f) => f.includes(name)).length]));
}

function annotate(record: Record<string, unknown>, annotation: { targets: (string | null)[]; findings: readonly string[] }): Record<string, unknown> {
  let call = 0;
  const turns = (record.turns as { role: string; calls?: Record<string, unknown>[] }[]).map((turn) => {
    if (turn.role !== 'assistant' || !turn.calls) return turn;
    return { ...turn, calls: turn.calls.map((c) => {
      const target = annotation.targets[call++];
      if (c.ok === true && target === null) throw new Error('a call that ran needs a target in the fixture');
      return target === null || target === undefined ? c : { ...c, target };
    }) };
  });
  return { ...record, turns, findings: [...annotation.findings] };
}

/** Writes the run at `dir` (its id is the folder's name) and returns it. */
export async function writeFindingsRun(dir: string): Promise<string> {
  await writeRunDirectory(dir, { rolloutSteps: [2, 4], groups: [TABLE_GROUP], status: 'finished' });
  const rows: Record<string, unknown>[] = [];
  const stepRecords: Record<number, Record<string, unknown>[]> = {};
  for (const step of [2, 4]) {
    const file = join(dir, 'rollouts', `step-${String(step).padStart(6, '0')}.jsonl`);
    const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
    const annotations = ANNOTATIONS[step] ?? [];
    const records = lines.map((l, i) => annotate(JSON.parse(l) as Record<string, unknown>, annotations[i] ?? { targets: [], findings: [] }));
    stepRecords[step] = records;
    await writeFile(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  }
  for (const step of [1, 2, 3, 4]) {
    const findings = (ANNOTATIONS[step] ?? ANNOTATIONS[2] ?? []).map((a) => a.findings);
    const targets = (ANNOTATIONS[step] ?? ANNOTATIONS[2] ?? []).flatMap((a) => a.targets);
    const on = targets.filter((t) => t === 'on').length;
    const partly = targets.filter((t) => t === 'partly').length;
    const off = targets.filter((t) => t === 'off').length;
    rows.push({
      step, stage: 'rl', time: 1_700_000_000 + step * 10, 'reward/mean': 0.3 + 0.1 * step, 'acc/mean': 0.25 * step, 'tool/call_rate': 0.75,
      'tools/calls_on_target': on, 'tools/calls_partly_on_target': partly, 'tools/calls_off_target': off, 'tools/calls_target_unknown': 0,
      'tools/call_on_target_rate': on / (on + partly + off),
      ...scanCounts(findings),
    });
    const evaluation = EVAL_LINES.find((e) => e.step === step);
    if (evaluation) rows.push(evaluation);
  }
  await writeFile(join(dir, 'metrics.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const step4 = stepRecords[4] ?? [];
  const evalRecords = EVAL_EPISODES.map(({ promptId, line, counterfactual, findings }) => {
    const { advantage: _advantage, ...record } = step4[line] as Record<string, unknown>;
    return { ...record, prompt_id: promptId, step: 4, group: 0, arm: 'tools', label: 'after_rl', findings: [...findings], ...(counterfactual ? { counterfactual } : {}) };
  });
  await writeFile(join(dir, 'rollouts', 'eval-after_rl.jsonl'), evalRecords.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return dir;
}
