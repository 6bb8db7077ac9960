/**
 * The rollout viewer's checkpoint comparison: two evaluations kept task by task (two checkpoints
 * of one run, two runs, or two `vistool eval` folders), each in an arm, and every task's two
 * rollouts side by side with their images. The list filters the tasks by what happened between
 * side a and side b (fixed, broken, both wrong, both right, on one side only) and says how many
 * of each; the summary gives each side's accuracy with its 95 % Wilson interval over the tasks
 * both sides have. The host lines the sides up (evals/compare); the page reads a record only when
 * it is shown (evals/record). Model text is only ever set as text.
 */
import type { PanelHost } from '../shared/host.js';
import {
  COMPARE_OUTCOMES,
  type ComparedRollout,
  type ComparedTask,
  type CompareOutcome,
  type EvalArm,
  EvalCompareRequest,
  type EvalComparison,
  EvalRecordRequest,
  type EvalSetInfo,
  EvalSetsRequest,
  type EvalSide,
  type PlaygroundCall,
  type RolloutRecord,
  type RunSummary,
} from '../../protocol/panel-protocol.js';
import { wilsonInterval } from '../../protocol/intervals.js';
import { inGridCell } from '../../protocol/eval-summary.js';
import type { GridCell } from '../shared/eval-link.js';
import { button, h, replaceChildren } from '../shared/dom.js';
import { runColourIndices } from '../shared/run-colours.js';
import { themeColours } from '../shared/theme.js';
import { type RenderedRollout, renderRollout } from './rollout-view.js';
import { FINDING_LEGEND, type FindingName } from '../../protocol/findings.js';
import { findingBadge } from './findings-view.js';
import { callsTools } from './preferred-run.js';
import type { Annotations } from './annotations-view.js';

export const OUTCOME_WORDS: Readonly<Record<CompareOutcome, string>> = {
  fixed: 'fixed',
  broken: 'broken',
  both_wrong: 'both wrong',
  both_right: 'both right',
  only_a: 'only in A',
  only_b: 'only in B',
};

export type OutcomeFilter = CompareOutcome | 'all' | 'changed';

export function isOutcomeFilter(value: unknown): value is OutcomeFilter {
  return value === 'all' || value === 'changed' || COMPARE_OUTCOMES.includes(value as CompareOutcome);
}

export interface CompareState {
  a: EvalSide | null;
  b: EvalSide | null;
  outcome: OutcomeFilter;
  /** The task shown. */
  promptId: string | null;
  /** Only the tasks in this cell of side A's gold × answer grid (the dashboard's evaluation summary opens one); absent in states saved before. */
  cell?: GridCell | null;
  /** Only the tasks on which this scanner fired in side A (the dashboard's findings table opens one); absent in states saved before. */
  finding?: FindingName | null;
}

export interface CompareViewOptions {
  host: PanelHost;
  annotations: Annotations;
  zoom: () => number;
  /** The state changed (to be saved, and put in the URL). */
  changed: (state: CompareState) => void;
  /** "This task over time" on a shown task, in a run. */
  timeline: (runId: string, promptId: string) => void;
  openInPlayground: (runId: string, ref: string, promptId: string | null, calls?: PlaygroundCall[]) => void;
}

const LIST_LIMIT = 500;

function answerText(answer: string | string[] | null): string {
  if (answer === null) return '–';
  return Array.isArray(answer) ? answer.join(' || ') : answer;
}

function mark(side: ComparedRollout | null): HTMLElement {
  if (!side) return h('span', { class: 'muted', title: 'not evaluated on this side' }, '–');
  const cls = side.correct === true ? 'good' : side.correct === false ? 'bad' : 'muted';
  const icon = side.correct === true ? 'pass' : side.correct === false ? 'error' : 'circle-outline';
  return h('span', { class: cls, title: `${side.correct === true ? 'correct' : side.correct === false ? 'wrong' : 'not scored'}: ${answerText(side.answer)}` }, h('span', { class: `codicon codicon-${icon}`, 'aria-hidden': 'true' }), ` ${answerText(side.answer)}`);
}

/** "95/300 = 31.7 % [26.7, 37.1]": a side's accuracy over the tasks both sides have. */
export function sideAccuracy(tasks: readonly ComparedTask[], side: 'a' | 'b'): string {
  const shared = tasks.filter((t) => t.a && t.b);
  if (shared.length === 0) return 'no task in common';
  const right = shared.filter((t) => t[side]?.correct === true).length;
  const [low, high] = wilsonInterval(right, shared.length);
  const pct = (v: number) => (100 * v).toFixed(1);
  return `${right}/${shared.length} = ${pct(right / shared.length)} % [${pct(low)}, ${pct(high)}]`;
}

export class EvalCompareView {
  readonly controls = h('div', { class: 'compare-controls', role: 'group', 'aria-label': 'Evaluations compared' });
  readonly summary = h('div', { class: 'compare-summary', 'data-testid': 'compare-summary', role: 'status' });
  readonly list = h('nav', { class: 'group-list compare-list', 'aria-label': 'Tasks of the compared evaluations', 'data-testid': 'compare-list' });
  readonly detail = h('main', { class: 'rollout-detail comparing', 'data-testid': 'compare-detail' });
  private runs: RunSummary[] = [];
  private readonly sets = new Map<string, EvalSetInfo[]>();
  private comparison: EvalComparison | null = null;
  private shown: RenderedRollout[] = [];
  private token = 0;

  constructor(
    private state: CompareState,
    private readonly options: CompareViewOptions,
  ) {}

  get current(): CompareState {
    return this.state;
  }

  get rendered(): RenderedRollout[] {
    return this.shown;
  }

  /** Opens on the runs given; sides that name an evaluation no longer there are chosen afresh. */
  async open(runs: RunSummary[], preferred: string | null): Promise<void> {
    this.runs = runs;
    await Promise.all(runs.map(async (run) => this.sets.set(run.id, (await this.options.host.request(EvalSetsRequest, { runId: run.id })).sets)));
    const valid = (side: EvalSide | null) => side !== null && (this.sets.get(side.runId) ?? []).some((s) => s.key === side.key);
    if (!valid(this.state.a) || !valid(this.state.b)) {
      const run = runs.find((r) => r.id === preferred && (this.sets.get(r.id) ?? []).length > 0) ?? runs.find((r) => (this.sets.get(r.id) ?? []).length > 0);
      const sets = run ? (this.sets.get(run.id) ?? []) : [];
      const arm: EvalArm = run && callsTools(run) ? 'tools' : 'no_tools';
      const first = sets[0];
      const last = sets[sets.length - 1];
      this.state = { ...this.state, a: run && first ? { runId: run.id, key: first.key, arm } : null, b: run && last ? { runId: run.id, key: last.key, arm } : null };
    }
    await this.compare();
  }

  /** One evaluation on both sides, only the tasks of one cell of its answer grid (or all of them). */
  async openCell(side: EvalSide, cell: GridCell | null, finding: FindingName | null = null): Promise<void> {
    this.state = { ...this.state, a: side, b: side, outcome: 'all', promptId: null, cell, finding };
    await this.compare();
  }

  /** Shows side a as given (a timeline's evaluation), keeping b (or the run's last evaluation when b is unset). */
  async openSide(a: EvalSide, promptId: string): Promise<void> {
    const sets = this.sets.get(a.runId) ?? [];
    const b = this.state.b ?? (sets.length > 0 ? { runId: a.runId, key: (sets[sets.length - 1] as EvalSetInfo).key, arm: a.arm } : a);
    this.state = { ...this.state, a, b, outcome: 'all', promptId, cell: null, finding: null };
    await this.compare();
  }

  private update(patch: Partial<CompareState>): void {
    this.state = { ...this.state, ...patch };
    this.options.changed(this.state);
  }

  private async compare(): Promise<void> {
    const { a, b } = this.state;
    this.renderControls();
    if (!a || !b) {
      this.comparison = null;
      replaceChildren(this.summary, 'No evaluation of the open runs kept its tasks. The trainer keeps them in rollouts/eval-<label>.jsonl (before, after_sft, every eval.every_steps during RL, after_rl); `vistool eval` in its folder\'s rollouts.');
      replaceChildren(this.list);
      replaceChildren(this.detail);
      this.options.changed(this.state);
      return;
    }
    const token = ++this.token;
    replaceChildren(this.list, h('vscode-progress-ring', null));
    let comparison: EvalComparison;
    try {
      comparison = await this.followArms(await this.options.host.request(EvalCompareRequest, { a, b }));
    } catch (err) {
      if (token !== this.token) return;
      replaceChildren(this.summary, `Could not compare: ${(err as Error).message}`);
      replaceChildren(this.list);
      return;
    }
    if (token !== this.token) return;
    this.comparison = comparison;
    this.renderControls();
    this.renderSummary();
    this.renderList();
    await this.showTask();
    this.options.changed(this.state);
  }

  /**
   * The arm follows the chosen evaluation: a side with no record in its arm (the text arm's
   * evaluations are tools-off only; the periodic ones during RL, tools-on only) is compared in the
   * other arm when that one has records, and the arm select shows it. Without this, picking the
   * text arm's evaluation for A kept "tools on" and compared nothing ("no task in common").
   */
  private async followArms(comparison: EvalComparison): Promise<EvalComparison> {
    let result = comparison;
    for (const name of ['a', 'b'] as const) {
      const side = this.state[name];
      if (!side || result.tasks.length === 0 || result.tasks.some((t) => t[name] !== null)) continue;
      const other: EvalSide = { ...side, arm: side.arm === 'tools' ? 'no_tools' : 'tools' };
      const sides = { a: this.state.a as EvalSide, b: this.state.b as EvalSide, [name]: other };
      const retried = await this.options.host.request(EvalCompareRequest, sides);
      if (retried.tasks.some((t) => t[name] !== null)) {
        this.state = { ...this.state, [name]: other };
        result = retried;
      }
    }
    return result;
  }

  /** The arm a run trained in: tools on when it called tools, else off (the text arm). */
  private armOf(runId: string): EvalArm {
    const run = this.runs.find((r) => r.id === runId);
    return run && callsTools(run) ? 'tools' : 'no_tools';
  }

  /** A swatch in the run's colour: the dashboard's and the report's for the same run (shared/run-colours.ts). */
  private swatch(runId: string): HTMLElement {
    const series = themeColours().series;
    const at = this.runs.findIndex((r) => r.id === runId);
    const colour = at < 0 ? '' : (series[(runColourIndices(this.runs.map((r) => r.name))[at] ?? 0) % series.length] ?? '');
    const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true', 'data-testid': 'run-swatch', 'data-colour': colour });
    swatch.style.backgroundColor = colour;
    return swatch;
  }

  private sideLabel(side: EvalComparison['a']): string {
    const run = this.runs.find((r) => r.id === side.runId)?.name ?? side.runId;
    return `${run} · ${side.label}${side.step !== null ? ` (step ${side.step})` : ''} · ${side.arm === 'tools' ? 'tools on' : 'tools off'}`;
  }

  private sideControls(name: 'a' | 'b'): HTMLElement {
    const side = this.state[name];
    const runSelect = h('select', { 'aria-label': `${name.toUpperCase()}: run`, 'data-testid': `compare-${name}-run` }, ...this.runs.map((r) => h('option', { value: r.id }, r.name)));
    runSelect.value = side?.runId ?? '';
    const sets = side ? (this.sets.get(side.runId) ?? []) : [];
    const setSelect = h('select', { 'aria-label': `${name.toUpperCase()}: evaluation`, 'data-testid': `compare-${name}-eval` }, ...sets.map((s) => h('option', { value: s.key }, `${s.label}${s.step !== null ? ` · step ${s.step}` : ''}`)));
    setSelect.value = side?.key ?? '';
    const armSelect = h('select', { 'aria-label': `${name.toUpperCase()}: arm`, 'data-testid': `compare-${name}-arm` }, h('option', { value: 'tools' }, 'tools on'), h('option', { value: 'no_tools' }, 'tools off'));
    armSelect.value = side?.arm ?? 'tools';
    runSelect.addEventListener('change', () => {
      const runSets = this.sets.get(runSelect.value) ?? [];
      const last = runSets[runSets.length - 1];
      this.update({ cell: null, finding: null, [name]: last ? { runId: runSelect.value, key: last.key, arm: this.armOf(runSelect.value) } : null, promptId: null });
      void this.compare();
    });
    setSelect.addEventListener('change', () => {
      if (!side) return;
      this.update({ cell: null, finding: null, [name]: { ...side, key: setSelect.value } });
      void this.compare();
    });
    armSelect.addEventListener('change', () => {
      if (!side) return;
      this.update({ cell: null, finding: null, [name]: { ...side, arm: armSelect.value === 'no_tools' ? 'no_tools' : 'tools' } });
      void this.compare();
    });
    return h('span', { class: 'compare-side', 'data-side': name }, h('strong', null, `${name.toUpperCase()} `), runSelect, setSelect, armSelect);
  }

  private renderControls(): void {
    const counts = this.comparison?.counts;
    const total = this.comparison?.tasks.length ?? 0;
    const count = (o: OutcomeFilter) => (counts ? (o === 'all' ? total : o === 'changed' ? counts.fixed + counts.broken : counts[o]) : null);
    const filters: OutcomeFilter[] = ['all', 'changed', ...COMPARE_OUTCOMES];
    const outcome = h(
      'select',
      { 'aria-label': 'tasks', 'data-testid': 'compare-outcome' },
      ...filters.map((o) => h('option', { value: o }, `${o === 'all' ? 'all tasks' : o === 'changed' ? 'fixed or broken' : OUTCOME_WORDS[o]}${count(o) === null ? '' : ` (${count(o)})`}`)),
    );
    outcome.value = this.state.outcome;
    outcome.addEventListener('change', () => {
      this.update({ outcome: outcome.value as OutcomeFilter });
      this.renderList();
      void this.showTask();
    });
    const swap = button('', () => {
      this.update({ a: this.state.b, b: this.state.a, cell: null, finding: null });
      void this.compare();
    }, { icon: 'arrow-swap', secondary: true, title: 'Swap A and B', testid: 'compare-swap' });
    const cell = this.state.cell ?? null;
    const cellChip = cell === null
      ? null
      : h('span', { class: 'cell-filter', 'data-testid': 'compare-cell' }, `A: gold "${cell.gold}", answered "${cell.answer}" `,
        button('', () => {
          this.update({ cell: null });
          this.renderControls();
          this.renderList();
          void this.showTask();
        }, { icon: 'close', secondary: true, title: 'Show every task again', testid: 'compare-cell-clear' }));
    const finding = this.state.finding ?? null;
    const findingChip = finding === null
      ? null
      : h('span', { class: 'cell-filter', 'data-testid': 'compare-finding', title: FINDING_LEGEND[finding].meaning }, `A: ${FINDING_LEGEND[finding].label} `,
        button('', () => {
          this.update({ finding: null });
          this.renderControls();
          this.renderList();
          void this.showTask();
        }, { icon: 'close', secondary: true, title: 'Show every task again', testid: 'compare-finding-clear' }));
    replaceChildren(this.controls, this.sideControls('a'), swap, this.sideControls('b'), h('label', { class: 'control' }, 'show ', outcome), cellChip, findingChip);
  }

  private renderSummary(): void {
    const c = this.comparison;
    if (!c) return;
    const n = c.counts;
    replaceChildren(
      this.summary,
      h('span', { 'data-testid': 'compare-a-accuracy' }, h('strong', null, 'A '), this.swatch(c.a.runId), `${this.sideLabel(c.a)}: ${sideAccuracy(c.tasks, 'a')}`),
      h('span', { 'data-testid': 'compare-b-accuracy' }, h('strong', null, 'B '), this.swatch(c.b.runId), `${this.sideLabel(c.b)}: ${sideAccuracy(c.tasks, 'b')}`),
      h('span', { 'data-testid': 'compare-counts' }, `B fixed ${n.fixed} · broke ${n.broken} · both wrong ${n.both_wrong} · both right ${n.both_right}${n.only_a || n.only_b ? ` · only in A ${n.only_a} · only in B ${n.only_b}` : ''} (of ${c.tasks.length} tasks)`),
    );
  }

  private filtered(): ComparedTask[] {
    const outcome = this.state.outcome;
    const cell = this.state.cell ?? null;
    const all = this.comparison?.tasks ?? [];
    const finding = this.state.finding ?? null;
    const inCell = cell === null ? all : all.filter((t) => t.a !== null && inGridCell({ gold: t.gold, answer: t.a.answer }, cell.gold, cell.answer));
    const tasks = finding === null ? inCell : inCell.filter((t) => (t.a?.findings ?? []).includes(finding));
    if (outcome === 'all') return tasks;
    if (outcome === 'changed') return tasks.filter((t) => t.outcome === 'fixed' || t.outcome === 'broken');
    return tasks.filter((t) => t.outcome === outcome);
  }

  private renderList(): void {
    const c = this.comparison;
    const tasks = this.filtered();
    const shown = tasks.slice(0, LIST_LIMIT);
    // A listbox: arrow keys move the selection, as j/k do in the steps' list.
    const listbox = h('div', { role: 'listbox', 'aria-label': 'tasks', tabindex: '0', class: 'compare-listbox' });
    listbox.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
      event.preventDefault();
      const rows = Array.from(listbox.querySelectorAll<HTMLElement>('.compare-row'));
      const at = rows.findIndex((r) => r.dataset.prompt === this.state.promptId);
      const next = rows[Math.max(0, Math.min(rows.length - 1, at + (event.key === 'ArrowDown' ? 1 : -1)))];
      next?.click();
      next?.scrollIntoView({ block: 'nearest' });
    });
    listbox.append(
      ...shown.map((task) => {
        const row = h(
          'div',
          { class: `compare-row ${task.promptId === this.state.promptId ? 'selected' : ''}`, role: 'option', 'aria-selected': task.promptId === this.state.promptId ? 'true' : 'false', 'data-testid': 'compare-row', 'data-prompt': task.promptId, 'data-outcome': task.outcome },
          h('div', { class: 'compare-question', title: task.question }, h('span', { class: `task-outcome outcome-${task.outcome} ${task.outcome === 'fixed' ? 'good' : task.outcome === 'broken' ? 'bad' : 'muted'}` }, OUTCOME_WORDS[task.outcome]), ' ', task.question || task.promptId),
          h('div', { class: 'compare-answers' }, h('span', { class: 'muted' }, 'gold '), h('strong', null, answerText(task.gold)), h('span', { class: 'muted' }, ' · A '), mark(task.a), ...(task.a?.findings ?? []).map((f) => findingBadge(f, true)), h('span', { class: 'muted' }, ' · B '), mark(task.b),
            c && task.a ? this.options.annotations.mark(c.a.runId, { kind: 'eval', step: c.a.step, key: c.a.key, line: task.a.line }) : null,
            c && task.b ? this.options.annotations.mark(c.b.runId, { kind: 'eval', step: c.b.step, key: c.b.key, line: task.b.line }) : null),
        );
        row.addEventListener('click', () => {
          this.update({ promptId: task.promptId });
          this.list.querySelectorAll('.compare-row').forEach((other) => {
            other.classList.toggle('selected', other === row);
            other.setAttribute('aria-selected', other === row ? 'true' : 'false');
          });
          void this.showTask();
        });
        return row;
      }),
    );
    replaceChildren(
      this.list,
      listbox,
      tasks.length > shown.length ? h('p', { class: 'muted' }, `The first ${shown.length} of ${tasks.length} tasks; narrow the list with "show".`) : null,
      tasks.length === 0 ? h('p', { class: 'muted empty' }, 'No task in this class.') : null,
    );
  }

  private async showTask(): Promise<void> {
    const c = this.comparison;
    const tasks = this.filtered();
    if (!c) return;
    let task = tasks.find((t) => t.promptId === this.state.promptId);
    if (!task) {
      task = tasks[0];
      this.update({ promptId: task?.promptId ?? null });
      const row = task ? this.list.querySelector(`[data-prompt="${CSS.escape(task.promptId)}"]`) : null;
      row?.classList.add('selected');
    }
    if (!task) {
      this.shown = [];
      replaceChildren(this.detail);
      return;
    }
    const token = ++this.token;
    const read = (side: EvalComparison['a'], rollout: ComparedRollout | null): Promise<{ record: RolloutRecord; inferredWeights?: string } | null> =>
      rollout ? this.options.host.request(EvalRecordRequest, { runId: side.runId, key: side.key, line: rollout.line }) : Promise.resolve(null);
    const [ra, rb] = await Promise.all([read(c.a, task.a), read(c.b, task.b), this.options.annotations.ensure(c.a.runId), this.options.annotations.ensure(c.b.runId)]);
    if (token !== this.token) return;
    const column = (name: string, side: EvalComparison['a'], read: { record: RolloutRecord; inferredWeights?: string } | null, line: number) => {
      const head = h('div', { class: 'compare-column-head' }, h('strong', null, `${name} `), this.swatch(side.runId), this.sideLabel(side));
      if (!read) return { element: h('div', { class: 'detail-column', 'data-column': name }, head, h('p', { class: 'muted' }, 'This task is not in this evaluation.')), rendered: null };
      const { record, inferredWeights } = read;
      const rendered = renderRollout(record, {
        ...(inferredWeights ? { weightsFrom: inferredWeights } : {}),
        playground: !this.options.host.isStatic,
        imageUrl: (ref) => this.options.host.resourceUrl(side.runId, `images/${ref}.png`),
        zoom: this.options.zoom(),
        openInPlayground: (ref, taskImage, calls) => this.options.openInPlayground(side.runId, ref, taskImage ? record.prompt_id : null, calls),
      });
      const notes = this.options.annotations.section(side.runId, { kind: 'eval', step: side.step, key: side.key, line, prompt_id: record.prompt_id }, () => this.renderList());
      return { element: h('div', { class: 'detail-column', 'data-column': name }, head, rendered.element, notes), rendered };
    };
    const left = column('A', c.a, ra, task.a?.line ?? 0);
    const right = column('B', c.b, rb, task.b?.line ?? 0);
    this.shown = [left.rendered, right.rendered].filter((r): r is RenderedRollout => r !== null);
    const over = button('This task over time', () => this.options.timeline(c.a.runId, task.promptId), { icon: 'history', secondary: true, testid: 'task-timeline-button', title: 'Every training step and evaluation of this run where this task appeared' });
    replaceChildren(this.detail, h('div', { class: 'detail-actions' }, over), left.element, right.element);
  }

  setZoom(zoom: number): void {
    for (const shown of this.shown) for (const compare of shown.compares) compare.setZoom(zoom);
  }
}
