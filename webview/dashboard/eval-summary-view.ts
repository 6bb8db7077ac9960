/**
 * The evaluation summary at the top of the dashboard (issue 44): for each shown run, its own
 * arm's last held-out evaluation (accuracy with its 95 % Wilson interval, n, call rate), its
 * change from each earlier evaluation on the same tasks, its tool effect when a counterfactual
 * replay measured one (issue 43), the tools − text difference between
 * runs, and the gold × answer grid whose every non-empty cell opens the viewer on those episodes.
 * The numbers come from the host (evals/summary) and protocol/eval-summary.ts: this module only
 * lays them out. Every value goes in as text.
 */
import type { AccuracyDifference, AnswerGrid, EvalArm, OffTargetCalls, RunEvalSummary } from '../../protocol/panel-protocol.js';
import { armDifferences, OTHER_ANSWERS, runHeadline, type RunHeadline, seedBand } from '../../protocol/eval-summary.js';
import { h } from '../shared/dom.js';
import type { EvalResult } from '../../protocol/panel-protocol.js';
import type { FindingName } from '../../protocol/findings.js';
import { ANSWER_CHANGED_RATE, effectInterval, TOOL_EFFECT } from './tool-effect-series.js';

export const INDEPENDENT_METHOD = "95 % interval: Newcombe's hybrid score interval for a difference of independent proportions (1998, method 10), from each side's Wilson interval";
export const PAIRED_METHOD = "95 % interval: Newcombe's score interval for a difference of paired proportions (1998, method 10): the same tasks evaluated twice";

export interface SummaryRun {
  id: string;
  name: string;
  /** Runs with the same group (run.json's `group`, else the run's folder name inside a folder of runs) are seeds of one setting. */
  group: string | null;
  summary: RunEvalSummary;
  /** The run's evaluation metrics (RunSummary.evaluations): the tool effect of a headline evaluation is read from the one with its label. */
  evaluations?: readonly EvalResult[];
}

/** What a grid cell (or an accuracy) opens: one evaluation in one arm, optionally one cell. */
export interface CellTarget {
  runId: string;
  key: string;
  arm: EvalArm;
  gold?: string;
  answer?: string;
  /** Only the episodes a scanner flagged (the off-target count opens `off_target_call`). */
  finding?: FindingName;
}

const pct = (v: number) => `${(100 * v).toFixed(1)} %`;
const points = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(100 * v).toFixed(1)}`;
const signed = (v: number) => `${v < 0 ? '−' : ''}${Math.abs(100 * v).toFixed(1)}`;
const interval = ([low, high]: readonly [number, number]) => `[${signed(low)}, ${signed(high)}]`;
const armWords = (arm: EvalArm) => (arm === 'tools' ? 'tools on' : 'tools off');

function difference(d: AccuracyDifference, testid: string): HTMLElement {
  const apart = d.ci95[0] > 0 || d.ci95[1] < 0;
  return h('span', { class: `num ${apart ? (d.diff > 0 ? 'good' : 'bad') : ''}`, 'data-testid': testid, title: d.method === 'newcombe-paired' ? PAIRED_METHOD : INDEPENDENT_METHOD },
    `${points(d.diff)} points ${interval(d.ci95)}`);
}

/** The headline evaluation's tool effect (issue 43) as its evaluation reports it; null when it has none. */
function toolEffectOf(run: SummaryRun, headline: RunHeadline): { effect: number; low: number | null; high: number | null; changed: number | null } | null {
  if (headline.arm !== 'tools') return null;
  const metrics = run.evaluations?.find((e) => e.label === headline.set.label)?.metrics;
  const effect = metrics?.[TOOL_EFFECT];
  if (!metrics || effect === undefined) return null;
  const { low, high } = effectInterval(metrics, effect);
  return { effect, low, high, changed: metrics[ANSWER_CHANGED_RATE] ?? null };
}

function toolEffectCell(run: SummaryRun, headline: RunHeadline): HTMLElement {
  const found = toolEffectOf(run, headline);
  if (found === null) return h('td', { class: 'muted', title: 'this evaluation ran without a counterfactual replay (vistool eval --counterfactual, eval.counterfactual)' }, '–');
  const { effect, low, high, changed } = found;
  const apart = low !== null && high !== null && (low > 0 || high < 0);
  return h('td', { class: `num ${apart ? (effect > 0 ? 'good' : 'bad') : ''}`, 'data-testid': 'summary-tool-effect',
    title: `accuracy as run − accuracy with the tools' results withheld, on the same tasks; 95 % paired interval as the evaluation reports it${changed !== null ? `; answers changed by withholding: ${pct(changed)}` : ''}` },
    `${points(effect)} points${low !== null && high !== null ? ` ${interval([low, high])}` : ''}`);
}

function headlineRow(run: SummaryRun, headline: RunHeadline, open: (target: CellTarget) => void, withEffect: boolean): HTMLElement {
  const { set, result, arm } = headline;
  // The change that matters: from after SFT when the run has it, else from its first evaluation (the others are in the viewer's comparison).
  const labelOf = (key: string) => run.summary.sets.find((s) => s.key === key)?.label;
  const fromSft = headline.changes.filter((c) => labelOf(c.from) === 'after_sft');
  const shownChanges = fromSft.length > 0 ? fromSft : headline.changes.slice(0, 1);
  const changes = shownChanges.map((c) => {
    const from = run.summary.sets.find((s) => s.key === c.from);
    return h('div', { 'data-testid': 'summary-change', 'data-from': from?.label ?? c.from }, `${set.label} − ${from?.label ?? c.from}: `, difference(c.difference, 'summary-change-value'),
      h('span', { class: 'muted' }, ` (${c.fixed} fixed, ${c.broken} broken of ${c.shared})`));
  });
  return h('tr', { 'data-run': run.id, 'data-testid': 'summary-row' },
    h('th', { scope: 'row' }, run.name, h('span', { class: 'muted' }, ` · ${armWords(arm)}`)),
    h('td', null, set.label, set.step !== null ? h('span', { class: 'muted' }, ` · step ${set.step}`) : null),
    h('td', { class: 'num', 'data-testid': 'summary-accuracy', title: `${result.correct} of ${result.n} correct; 95 % Wilson interval` },
      h('button', { type: 'button', class: 'link-button', title: `Open these ${result.n} episodes in the viewer`, onclick: () => open({ runId: run.id, key: set.key, arm }) }, pct(result.acc)),
      ` ${interval(result.ci95)}`),
    h('td', { class: 'num' }, result.n),
    h('td', { class: 'num', 'data-testid': 'summary-call-rate', title: `${result.called} of ${result.n} episodes made a tool call` }, pct(result.callRate)),
    withEffect ? toolEffectCell(run, headline) : null,
    offTargetCell(result.offTarget ?? null, () => open({ runId: run.id, key: set.key, arm, finding: 'off_target_call' })),
    h('td', null, ...(changes.length > 0 ? changes : [h('span', { class: 'muted' }, '–')])),
  );
}

/** Off-target calls: how many, and the accuracy on them against the others; the count opens them when the scanners decided it. */
function offTargetCell(off: OffTargetCalls | null, openOff: () => void): HTMLElement {
  if (off === null) return h('td', { class: 'muted', title: 'no episode made a call, or no question quotes a label' }, '–');
  const scanned = off.rule === 'scanner';
  const rule = scanned
    ? "episodes with a call that ran off the task's target (the off_target_call scanner)"
    : 'episodes whose first call named another label than the one the question quotes (records from before the scanners: opening them in the viewer needs a rescan)';
  const count = scanned && off.offTarget > 0
    ? h('button', { type: 'button', class: 'link-button', 'data-testid': 'summary-off-target-open', title: `Open the ${off.offTarget} off-target episodes in the viewer`, onclick: openOff }, String(off.offTarget))
    : String(off.offTarget);
  return h('td', { 'data-testid': 'summary-off-target', title: `${rule}; accuracy with 95 % Wilson intervals` },
    count, ` of ${off.calls}`, h('span', { class: 'muted' }, ` · right ${pct(off.off.acc)} ${interval(off.off.ci95)} vs ${pct(off.on.acc)} ${interval(off.on.ci95)} on target`));
}

/** The gold × answer grid of one run's headline evaluation; a cell with episodes is a button that opens them. */
export function gridView(run: SummaryRun, headline: RunHeadline, grid: AnswerGrid, open: (target: CellTarget) => void): HTMLElement {
  const { set, arm } = headline;
  const columnTotals = grid.answers.map((_, j) => grid.counts.reduce((s, row) => s + (row[j] ?? 0), 0));
  const total = columnTotals.reduce((s, c) => s + c, 0);
  return h('figure', { class: 'answer-grid', 'data-testid': 'answer-grid', 'data-run': run.id },
    h('figcaption', null, `${run.name} · ${set.label} · ${armWords(arm)}: gold answer (rows) × answer given (columns)`),
    h('div', { class: 'table-scroll' },
      h('table', null,
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'gold ↓ · answered →'), ...grid.answers.map((a) => h('th', { scope: 'col', class: 'num' }, a)), h('th', { scope: 'col', class: 'num' }, 'tasks'))),
        h('tbody', null,
          ...grid.gold.map((gold, i) => {
            const row = grid.counts[i] ?? [];
            return h('tr', null, h('th', { scope: 'row' }, gold),
              ...grid.answers.map((answer, j) => {
                const count = row[j] ?? 0;
                const right = answer === gold;
                const attrs = { class: `num grid-cell ${count > 0 ? (right ? 'good' : 'bad') : 'muted'}`, 'data-gold': gold, 'data-answer': answer, 'data-testid': 'grid-cell' };
                // "(other)" gathers answers the grid has no column for: no single filter names them.
                if (count === 0 || answer === OTHER_ANSWERS) return h('td', attrs, count);
                return h('td', attrs, h('button', { type: 'button', class: 'link-button', title: `Open the ${count} episodes with gold "${gold}" answered "${answer}" in the viewer`, onclick: () => open({ runId: run.id, key: set.key, arm, gold, answer }) }, count));
              }),
              h('td', { class: 'num muted' }, row.reduce((s, c) => s + c, 0)));
          }),
          h('tr', { class: 'grid-totals' }, h('th', { scope: 'row' }, 'answered'), ...columnTotals.map((c) => h('td', { class: 'num', 'data-testid': 'grid-column-total' }, `${c} (${pct(total === 0 ? 0 : c / total)})`)), h('td', { class: 'num' }, total)),
        ),
      ),
    ),
  );
}

/** Runs of one group (seeds): the mean of their accuracies with a t interval over the seeds. */
function groupRows(runs: readonly SummaryRun[], headlines: ReadonlyMap<string, RunHeadline>): HTMLElement[] {
  const groups = new Map<string, RunHeadline[]>();
  for (const run of runs) {
    const headline = headlines.get(run.id);
    if (!headline || run.group === null) continue;
    const key = `${run.group}\u0000${headline.arm}`;
    groups.set(key, [...(groups.get(key) ?? []), headline]);
  }
  return [...groups.entries()].filter(([, members]) => members.length > 1).map(([key, members]) => {
    const band = seedBand(members.map((m) => m.result.acc));
    const [group] = key.split('\u0000');
    return h('li', { 'data-testid': 'summary-group', title: 'mean over the seeds, and the 95 % t interval of that mean (mean ± t·s/√k)' },
      `${group} (${members.length} runs): accuracy ${pct(band.mean)}${band.ci95 ? ` ± ${(100 * (band.ci95[1] - band.mean)).toFixed(1)} points ${interval(band.ci95)}` : ''}`);
  });
}

/** The whole summary; null when no shown run kept an evaluation task by task. */
export function evalSummaryView(runs: readonly SummaryRun[], open: (target: CellTarget) => void): HTMLElement | null {
  const headlines = new Map<string, RunHeadline>();
  for (const run of runs) {
    const headline = runHeadline(run.summary);
    if (headline) headlines.set(run.id, headline);
  }
  if (headlines.size === 0) return null;
  const shown = runs.filter((r) => headlines.has(r.id));
  const nameOf = (id: string) => runs.find((r) => r.id === id)?.name ?? id;
  const between = armDifferences([...headlines.values()]).map(({ tools, text, difference: d }) =>
    h('li', { 'data-testid': 'summary-tools-minus-text' }, `tools − text (${nameOf(tools.runId)} ${tools.set.label} − ${nameOf(text.runId)} ${text.set.label}): `, difference(d, 'summary-difference-value')));
  const grouped = groupRows(shown, headlines);
  // The tool-effect column only when some shown run's headline evaluation has one (issue 43).
  const withEffect = shown.some((run) => toolEffectOf(run, headlines.get(run.id) as RunHeadline) !== null);
  const grids = shown.flatMap((run) => {
    const headline = headlines.get(run.id) as RunHeadline;
    const grid = headline.result.grid;
    return grid ? [gridView(run, headline, grid, open)] : [h('p', { class: 'muted' }, `${run.name}: the gold answers are free-form, so there is no answer grid.`)];
  });
  return h('section', { class: 'eval-summary', 'aria-label': 'Evaluation summary', 'data-testid': 'eval-summary' },
    h('h2', null, 'Evaluation summary'),
    h('p', { class: 'muted' }, 'Each run in the arm it was trained for, at its last held-out evaluation (kept task by task). Intervals are 95 %: Wilson for an accuracy, Newcombe for a difference (hover for the method). An off-target call names another label than the question quotes (the right tool on the wrong bar).'),
    h('div', { class: 'table-scroll' },
      h('table', { 'data-testid': 'summary-table' },
        h('thead', null, h('tr', null, ...['run', 'evaluation', 'accuracy [95 %]', 'n', 'call rate', ...(withEffect ? ['tool effect [95 %]'] : []), 'off-target calls', 'change on the same tasks'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', null, ...shown.map((run) => headlineRow(run, headlines.get(run.id) as RunHeadline, open, withEffect))),
      ),
    ),
    between.length > 0 || grouped.length > 0 ? h('ul', { class: 'summary-differences' }, ...between, ...grouped) : null,
    h('div', { class: 'answer-grids' }, ...grids),
  );
}
