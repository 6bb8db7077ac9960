/**
 * The rollout viewer: step → prompt groups (question, gold, reward spread, kept or filtered by
 * dynamic sampling) → rollouts sorted by reward with their advantages → turns. Filters, search,
 * keyboard navigation (j/k rollouts, [ ] turns), and two rollouts side by side.
 *
 * Loads lazily: the step list is a directory listing, a step's index (one summary per line, built
 * by the host) is fetched when the step is opened, and a full record only when it is shown.
 * Only navigation and UI state is persisted. Model text is only ever set as text.
 */
import type { PanelHost } from '../shared/host.js';
import {
  PANEL_TITLES,
  ReadyCommand,
  type RolloutRecord,
  RolloutIndexRequest,
  RolloutRecordRequest,
  RolloutStepsRequest,
  RunImageRequest,
  type RunSummary,
  RunsChangedNotification,
  RunsListRequest,
  type StepFileInfo,
  type StepIndex,
  ViewerShowStepNotification,
  type EvalCell,
  type ReplayAvailability,
  ReplayAvailabilityRequest,
  type WithheldReplayResult,
  WithheldReplayRequest,
} from '../../protocol/panel-protocol.js';
import { button, formatNumber, h, replaceChildren } from '../shared/dom.js';
import { hasFields, isNumberInRange, isRecord, isString, optional } from '../../protocol/guards.js';
import { panelHeader, startPanel } from '../shared/shell.js';
import { filterChoices, filterGroups, mergeChoices, GROUP_ORDERS, type GroupBadge, groupBadge, type GroupOrder, groupRollouts, isGroupOrder, navigationOrder, NO_FILTER, type PromptGroup, type RolloutFilter, sortGroups, stepThrough } from './groups.js';
import { StepHistograms } from './step-histograms.js';
import { preferredRun } from './preferred-run.js';
import { RunSearch } from './run-search.js';
import type { RolloutFacets } from '../../protocol/rollout-filter.js';
import { type RenderedRollout, renderRollout } from './rollout-view.js';
import { errorLegend, toolUseWords } from '../../protocol/tool-use.js';
import { type CompareState, EvalCompareView, isOutcomeFilter } from './eval-compare.js';
import { TaskTimelineView } from './task-timeline.js';
import { viewOf, withView } from './view-link.js';
import { type AnnotationFilter, Annotations, isAnnotationFilter, passes } from './annotations-view.js';
import type { PlaygroundCall, TimelineEntry } from '../../protocol/panel-protocol.js';
import { FINDING_LEGEND, FINDING_NAMES, type FindingName, isFindingName } from '../../protocol/findings.js';
import { findingBadge } from './findings-view.js';

interface ViewerState {
  runId: string | null;
  step: number | null;
  line: number | null;
  compareLine: number | null;
  compare: boolean;
  turn: number;
  filter: RolloutFilter;
  zoom: number;
  /** Absent in states saved before the list could be sorted. */
  order?: GroupOrder;
  /** The text of the search across steps (its results are data, not kept). */
  runSearch?: string;
  /** Training steps, or two evaluations side by side (absent in states saved before: steps). */
  mode?: ViewerMode;
  /** The evaluations compared, the outcome shown and the task (eval-compare.ts). */
  evals?: CompareState;
  /** The list's annotation filter (annotations-view.ts). */
  annotation?: AnnotationFilter;
}

type ViewerMode = 'steps' | 'evals';

const isSide = (v: unknown) => v === null || hasFields(v, { runId: isString, key: isString, arm: (a) => a === 'tools' || a === 'no_tools' });
const isCompareState = (v: unknown): v is CompareState =>
  hasFields(v, { a: isSide, b: isSide, outcome: isOutcomeFilter, promptId: (p) => p === null || isString(p), cell: (c) => c === undefined || c === null || hasFields(c, { gold: isString, answer: isString }), finding: optional((f) => f === null || isFindingName(f)) });

const nullableNumber = (v: unknown) => v === null || typeof v === 'number';

function isViewerState(value: unknown): value is ViewerState {
  return hasFields(value, {
    runId: (v) => v === null || isString(v),
    step: nullableNumber,
    line: nullableNumber,
    compareLine: nullableNumber,
    compare: (v) => typeof v === 'boolean',
    turn: (v) => typeof v === 'number',
    filter: (v) => hasFields(v, { outcome: isString, tools: isString, search: isString, finding: optional((f) => f === null || f === 'none' || isFindingName(f)) }) && isRecord(v),
    zoom: (v) => isNumberInRange(v, 0.25, 4),
    order: optional(isGroupOrder),
    runSearch: optional(isString),
    mode: optional((v) => v === 'steps' || v === 'evals'),
    annotation: optional(isAnnotationFilter),
    evals: optional(isCompareState),
  });
}

const LIST_PAGE = 250;

/** A prompt group's kept / filtered / dropped badge (groups.ts says which and why). */
function groupBadgeElement(badge: GroupBadge): HTMLElement {
  return h('vscode-badge', { class: `badge-${badge.status}`, title: badge.title, 'data-testid': 'group-badge' }, badge.status);
}

function answerText(answer: string | string[] | null): string {
  if (answer === null) return '–';
  return Array.isArray(answer) ? answer.join(' || ') : answer;
}

function select(label: string, testid: string, options: [string, string][], value: string, onChange: (value: string) => void): HTMLElement {
  const element = h('select', { 'aria-label': label, 'data-testid': testid }, ...options.map(([v, text]) => h('option', { value: v }, text)));
  element.value = value;
  element.addEventListener('change', () => onChange(element.value));
  return h('label', { class: 'control' }, `${label} `, element);
}

class Viewer {
  private state: ViewerState;
  private runs: RunSummary[] = [];
  private steps: StepFileInfo[] = [];
  private index: StepIndex | null = null;
  private groups: PromptGroup[] = [];
  private readonly records = new Map<string, { record: RolloutRecord; inferredWeights?: string }>();
  /** Whether the host can replay a rollout without its tool's result, asked once when the viewer starts. */
  private replayAvailability: ReplayAvailability | null = null;
  /** Replays asked in this page, by run/step/line, shown again when their rollout is. */
  private readonly replays = new Map<string, WithheldReplayResult>();
  private shown: RenderedRollout[] = [];
  /** The list's row elements by line, so selection changes touch two rows, not the whole list. */
  private rows = new Map<number, HTMLElement>();
  private readonly controls: HTMLElement;
  private readonly list = h('nav', { class: 'group-list', 'aria-label': 'Prompt groups', 'data-testid': 'group-list' });
  private readonly detail = h('main', { class: 'rollout-detail', 'data-testid': 'rollout-detail' });
  private readonly status = h('div', { class: 'viewer-status muted', role: 'status' });
  private readonly histograms = new StepHistograms();
  private readonly runSearch: RunSearch;
  /** The error classes and tool names the last search across steps read in the whole run. */
  private runFacets: { errorClasses: string[]; toolNames: string[] } | null = null;
  private loadToken = 0;
  /** Groups drawn in the list; a step with thousands of prompts grows it page by page instead of building every row at once. */
  private listLimit = LIST_PAGE;
  /**
   * The controls are rebuilt on every step opened, but the step chooser (an option per step file)
   * only when the list of steps changed, and it never leaves the page in between: on a run of a
   * thousand steps, making it or moving it made the browser restyle a thousand options, some 30 ms
   * each time. So the controls bar has three parts that stay in place (display: contents).
   */
  private readonly controlsBefore = h('span', { class: 'controls-part' });
  private readonly stepChooser = h('span', { class: 'controls-part' });
  private readonly controlsAfter = h('span', { class: 'controls-part' });
  private stepsOffered: StepFileInfo[] | null = null;
  /** Training steps or evaluations side by side: what the body and the controls show. */
  private readonly modeChooser = h('span', { class: 'controls-part' });
  private readonly stepsBody: HTMLElement;
  private readonly evalBody: HTMLElement;
  private readonly compareView: EvalCompareView;
  private compareOpened = false;
  private readonly timeline: TaskTimelineView;
  private readonly annotations: Annotations;

  constructor(
    private readonly host: PanelHost,
    private readonly root: HTMLElement,
  ) {
    this.state = host.getState(isViewerState) ?? { runId: null, step: null, line: null, compareLine: null, compare: false, turn: 0, filter: { ...NO_FILTER }, zoom: 0.5 };
    // A link (the page's URL) names what to show: it replaces the saved place (view-link.ts).
    const linked = viewOf(host.pageQuery() ?? new URLSearchParams());
    if (linked?.mode === 'evals') {
      this.state.mode = 'evals';
      this.state.evals = { a: linked.a ?? null, b: linked.b ?? null, outcome: isOutcomeFilter(linked.outcome) ? linked.outcome : 'all', promptId: linked.task ?? null, cell: linked.cell ?? null, finding: linked.finding === 'none' ? null : (linked.finding ?? null) };
      if (linked.runId) this.state.runId = linked.runId;
    } else if (linked) {
      const compareLine = linked.compareLine ?? null;
      Object.assign(this.state, { mode: 'steps', runId: linked.runId ?? null, step: linked.step ?? null, line: linked.line ?? null, compareLine, compare: compareLine !== null || this.state.compare, turn: linked.turn ?? 0 });
      // A link names the finding filter it wants, or none: a saved one would hide what the link points at.
      this.state.filter = { ...this.state.filter, finding: linked.finding ?? null };
    }
    this.annotations = new Annotations(host, host.isStatic);
    this.compareView = new EvalCompareView(this.state.evals ?? { a: null, b: null, outcome: 'all', promptId: null }, {
      host,
      annotations: this.annotations,
      zoom: () => this.state.zoom,
      changed: (evals) => {
        this.state.evals = evals;
        this.save();
      },
      timeline: (runId, promptId) => void this.showTimeline(runId, promptId),
      openInPlayground: (runId, ref, promptId, calls) => void this.openInPlayground(runId, ref, promptId, calls),
    });
    this.timeline = new TaskTimelineView(host, (runId, promptId, entry) => void this.openTimelineEntry(runId, promptId, entry));
    this.controls = h('div', { class: 'viewer-controls' }, this.modeChooser, this.controlsBefore, this.stepChooser, this.controlsAfter, this.compareView.controls);
    this.stepsBody = h('div', { class: 'viewer-body' }, h('div', { class: 'list-column' }, h('span', { hidden: true }), this.list), this.detail);
    this.evalBody = h('div', { class: 'viewer-body', hidden: true }, h('div', { class: 'list-column' }, this.compareView.list), this.compareView.detail);
    this.runSearch = new RunSearch(host, {
      query: this.state.runSearch ?? '',
      queried: (query) => {
        this.state.runSearch = query;
        this.save();
      },
      runId: () => this.state.runId,
      facets: () => {
        const { outcome, tools, errorClass, toolName, finding } = this.state.filter;
        return { outcome, tools, errorClass, toolName, finding: finding ?? null };
      },
      jump: (step, line, turn, facets) => void this.jumpTo(step, line, turn, facets),
      answered: (result) => {
        // The run's error classes and tools join the step's in the filters, so a search can ask for what other steps hold.
        this.runFacets = result?.seen ?? null;
        this.renderControls();
      },
    });
  }

  async start(): Promise<void> {
    replaceChildren(this.stepsBody.firstElementChild as HTMLElement, this.runSearch.element, this.histograms.element, this.list);
    replaceChildren(this.root, panelHeader(PANEL_TITLES.viewer, this.host, this.controls), this.status, this.compareView.summary, this.timeline.element, this.stepsBody, this.evalBody);
    document.addEventListener('keydown', (event) => this.onKey(event));
    this.host.onNotification(RunsChangedNotification, ({ runs }) => void this.onRunsChanged(runs));
    // A step asked for from outside (a dashboard's chart point): in VS Code as a notification, in a browser in the page's URL.
    this.host.onNotification(ViewerShowStepNotification, ({ runId, step, evals, finding }) => void (evals ? this.showEvaluation(runId, evals) : this.showStep(runId, step, finding)));
    this.runs = (await this.host.request(RunsListRequest, {})).runs;
    await this.openRun(this.runs.some((r) => r.id === this.state.runId) ? this.state.runId : preferredRun(this.runs));
    await this.setMode(this.state.mode ?? 'steps');
    this.host.command(ReadyCommand, { panel: 'viewer' });
  }

  /** Shows the training steps or the evaluations side by side (opened on first use). */
  private async setMode(mode: ViewerMode): Promise<void> {
    this.state.mode = mode;
    this.save();
    const evals = mode === 'evals';
    this.stepsBody.hidden = evals;
    this.status.hidden = evals;
    for (const part of [this.controlsBefore, this.stepChooser, this.controlsAfter]) part.hidden = evals;
    this.evalBody.hidden = !evals;
    this.compareView.controls.hidden = !evals;
    this.compareView.summary.hidden = !evals;
    this.renderModeChooser();
    if (evals && !this.compareOpened) {
      this.compareOpened = true;
      await this.compareView.open(this.runs, this.state.runId ?? preferredRun(this.runs));
    }
  }

  private renderModeChooser(): void {
    replaceChildren(
      this.modeChooser,
      select('show', 'viewer-mode', [['steps', 'training steps'], ['evals', 'evaluations side by side']], this.state.mode ?? 'steps', (v) => {
        // A task's timeline belongs to what was shown: a person who changes mode leaves it behind
        // (a timeline entry that changes mode keeps it: that is where the person came from).
        this.timeline.hide();
        void this.setMode(v === 'evals' ? 'evals' : 'steps');
      }),
    );
  }

  private async showTimeline(runId: string, promptId: string): Promise<void> {
    const run = this.runs.find((r) => r.id === runId);
    await this.timeline.show(runId, run?.name ?? runId, promptId);
    this.timeline.element.scrollIntoView({ block: 'nearest' });
  }

  /** A timeline entry: a training rollout opens at its step and line, an evaluation's beside the run's last evaluation. */
  private async openTimelineEntry(runId: string, promptId: string, entry: TimelineEntry): Promise<void> {
    if (entry.kind === 'step' && entry.step !== null) {
      await this.setMode('steps');
      if (runId !== this.state.runId) await this.openRun(runId);
      const { outcome, tools, errorClass, toolName } = NO_FILTER;
      await this.jumpTo(entry.step, entry.line, 0, { outcome, tools, errorClass, toolName });
      return;
    }
    if (entry.kind === 'eval' && entry.key && entry.arm) {
      await this.setMode('evals');
      await this.compareView.openSide({ runId, key: entry.key, arm: entry.arm }, promptId);
    }
  }

  /** Opens a run at a step (a step without a rollouts file leaves the viewer where openRun put it). */
  /** One evaluation in one arm, optionally one cell of its answer grid (the dashboard's evaluation summary, in VS Code). */
  private async showEvaluation(runId: string, evals: EvalCell): Promise<void> {
    if (!this.runs.some((r) => r.id === runId)) return;
    const side = { runId, key: evals.key, arm: evals.arm };
    const cell = evals.gold !== undefined && evals.answer !== undefined ? { gold: evals.gold, answer: evals.answer } : null;
    this.compareOpened = true;
    await this.setMode('evals');
    await this.compareView.openCell(side, cell, evals.finding ?? null);
  }

  private async showStep(runId: string, step: number, finding?: FindingName): Promise<void> {
    if (!this.runs.some((r) => r.id === runId)) return;
    if (finding !== undefined) {
      this.state.filter = { ...this.state.filter, finding };
      this.renderControls();
      this.renderList();
    }
    if (runId !== this.state.runId || this.steps.length === 0) await this.openRun(runId);
    if (step !== this.state.step && this.steps.some((s) => s.step === step)) await this.openStep(step);
  }

  private save(): void {
    this.host.setState(this.state);
    // The address names what is shown (a browser page): a copied link opens the same view.
    const query = this.host.pageQuery();
    if (!query) return;
    const evals = this.state.evals;
    const group = this.index?.rollouts.find((r) => r.line === this.state.line)?.promptId ?? null;
    this.host.setPageQuery(
      withView(query, {
        runId: this.state.runId,
        step: this.state.step,
        line: this.state.line,
        compareLine: this.state.compare ? this.state.compareLine : null,
        turn: this.state.turn,
        mode: this.state.mode ?? 'steps',
        a: evals?.a ?? null,
        b: evals?.b ?? null,
        outcome: evals?.outcome ?? 'all',
        task: evals?.promptId ?? null,
        cell: evals?.cell ?? null,
        finding: (this.state.mode ?? 'steps') === 'evals' ? (evals?.finding ?? null) : (this.state.filter.finding ?? null),
      }, group),
    );
  }

  private async openRun(runId: string | null): Promise<void> {
    if (runId !== this.state.runId) {
      Object.assign(this.state, { step: null, line: null, compareLine: null, turn: 0 });
      this.runSearch.clear();
    }
    this.state.runId = runId;
    if (runId !== null) await this.annotations.load(runId);
    this.steps = runId === null ? [] : (await this.host.request(RolloutStepsRequest, { runId })).steps;
    const step = this.steps.some((s) => s.step === this.state.step) ? this.state.step : (this.steps[this.steps.length - 1]?.step ?? null);
    await this.openStep(step);
  }

  private async openStep(step: number | null): Promise<void> {
    if (step !== this.state.step) Object.assign(this.state, { line: null, compareLine: null, turn: 0 });
    this.state.step = step;
    this.save();
    this.index = null;
    this.groups = [];
    this.renderControls();
    if (step === null || this.state.runId === null) {
      this.status.textContent = this.runs.length === 0 ? 'No runs are open.' : 'This run has no rollout files yet (rollouts/step-NNNNNN.jsonl).';
      replaceChildren(this.list);
      replaceChildren(this.detail);
      this.histograms.show([]);
      return;
    }
    const token = ++this.loadToken;
    replaceChildren(this.list, h('vscode-progress-ring', null));
    const index = await this.host.request(RolloutIndexRequest, { runId: this.state.runId, step });
    if (token !== this.loadToken) return;
    this.setIndex(index);
    // The step's histograms are painted once its first rollout is on screen, which they would otherwise hold up.
    const selection = this.showSelection();
    this.histograms.show(index.rollouts, selection);
    await selection;
  }

  /**
   * Opens a match of the search across steps: its step, its rollout and turn. The list's own
   * filters may hide it (its text search looks only at questions, the run's at turns too), and
   * then they become the search's facets with no text, so the rollout chosen is in the list.
   */
  private async jumpTo(step: number, line: number | null, turn: number | null, facets: RolloutFacets): Promise<void> {
    await this.openStep(step);
    if (line === null || this.state.step !== step || !this.index?.rollouts.some((r) => r.line === line)) return;
    if (!navigationOrder(this.matchingGroups()).includes(line)) {
      this.state.filter = { ...facets, search: '' };
      this.renderControls();
    }
    const groups = this.matchingGroups();
    const at = groups.findIndex((g) => g.rollouts.some((r) => r.line === line));
    if (at >= this.listLimit) this.listLimit = (Math.floor(at / LIST_PAGE) + 1) * LIST_PAGE;
    this.renderList();
    Object.assign(this.state, { line, compareLine: null, turn: turn ?? 0 });
    this.markSelection();
    this.rows.get(line)?.scrollIntoView({ block: 'nearest' });
    await this.showSelection();
    this.focusTurn(this.state.turn, true);
  }

  private setIndex(index: StepIndex): void {
    if (index.step !== this.index?.step) this.listLimit = LIST_PAGE;
    this.index = index;
    this.groups = groupRollouts(index.rollouts);
    this.renderControls();
    this.renderList();
  }

  /** The groups that pass the filters, up to the list's current length. */
  private visibleGroups(): PromptGroup[] {
    return this.matchingGroups().slice(0, this.listLimit);
  }

  /** The groups that pass the filters, in the chosen order (the list and j/k walk the same one). */
  private matchingGroups(): PromptGroup[] {
    const filter = this.state.annotation ?? 'any';
    const runId = this.state.runId ?? '';
    // The annotation filter keeps the rollouts it passes; their groups are made again from them.
    const groups = filter === 'any' || !this.index ? this.groups : groupRollouts(this.index.rollouts.filter((r) => passes(filter, this.annotations.of(runId, { kind: 'step', step: this.state.step, line: r.line }))));
    return sortGroups(filterGroups(groups, this.state.filter), this.state.order ?? 'file');
  }

  private renderControls(): void {
    const runOptions: [string, string][] = this.runs.map((r) => [r.id, r.name]);
    const filter = this.state.filter;
    const choices = mergeChoices(filterChoices(this.index?.rollouts ?? []), this.runFacets, filter);
    const setFilter = (patch: Partial<RolloutFilter>) => {
      this.state.filter = { ...this.state.filter, ...patch };
      this.listLimit = LIST_PAGE;
      this.save();
      this.renderList();
      void this.showSelection();
    };
    const search = h('vscode-textfield', { placeholder: 'Search questions', 'aria-label': 'Search questions', 'data-testid': 'search', value: filter.search });
    search.addEventListener('input', () => setFilter({ search: (search as HTMLElement & { value: string }).value }));
    const zoom = h('input', { type: 'range', min: '0.25', max: '4', step: '0.25', 'aria-label': 'image zoom', 'data-testid': 'zoom' });
    const zoomValue = h('output', { class: 'zoom-value' }, `${Math.round(this.state.zoom * 100)}%`);
    zoom.value = String(this.state.zoom);
    zoom.addEventListener('input', () => {
      this.state.zoom = Number(zoom.value);
      zoomValue.textContent = `${Math.round(this.state.zoom * 100)}%`;
      this.save();
      for (const shown of this.shown) for (const compare of shown.compares) compare.setZoom(this.state.zoom);
      this.compareView.setZoom(this.state.zoom);
    });
    const compare = h('vscode-checkbox', { checked: this.state.compare, 'data-testid': 'compare-toggle', title: 'Show two rollouts of a group side by side: click one, then another' }, 'compare');
    compare.addEventListener('change', () => {
      this.state.compare = (compare as HTMLElement & { checked: boolean }).checked;
      if (!this.state.compare) this.state.compareLine = null;
      this.save();
      this.renderList();
      void this.showSelection();
    });
    const stepIndex = this.steps.findIndex((s) => s.step === this.state.step);
    const slider = this.steps.length > 1 ? this.stepSlider(stepIndex) : null;
    const order = select('sort', 'group-order', GROUP_ORDERS.map(([o, text]) => [o, text]), this.state.order ?? 'file', (v) => {
      this.state.order = isGroupOrder(v) ? v : 'file';
      this.listLimit = LIST_PAGE;
      this.save();
      this.renderList();
      void this.showSelection();
    });
    replaceChildren(
      this.controlsBefore,
      runOptions.length > 1 ? select('run', 'run-select', runOptions, this.state.runId ?? '', (v) => void this.openRun(v)) : null,
      button('', () => void this.openStep(this.steps[stepIndex - 1]?.step ?? this.state.step), { icon: 'chevron-left', secondary: true, title: 'Previous step' }),
    );
    this.renderStepChooser();
    replaceChildren(
      this.controlsAfter,
      button('', () => void this.openStep(this.steps[stepIndex + 1]?.step ?? this.state.step), { icon: 'chevron-right', secondary: true, title: 'Next step' }),
      slider,
      search,
      order,
      select('outcome', 'filter-outcome', [['all', 'all'], ['correct', 'correct'], ['incorrect', 'incorrect']], filter.outcome, (v) => setFilter({ outcome: v as RolloutFilter['outcome'] })),
      select('tools', 'filter-tools', [['all', 'all'], ['tools', 'used tools'], ['none', 'no tools']], filter.tools, (v) => setFilter({ tools: v as RolloutFilter['tools'] })),
      select('error', 'filter-error', [['', 'any'], ['none', 'no errors'], ...choices.errorClasses.map((c): [string, string] => [c, c])], filter.errorClass ?? '', (v) => setFilter({ errorClass: v === '' ? null : v })),
      select('tool', 'filter-tool', [['', 'any'], ...choices.toolNames.map((t): [string, string] => [t, t])], filter.toolName ?? '', (v) => setFilter({ toolName: v === '' ? null : v })),
      select('finding', 'filter-finding', [['', 'any'], ['none', 'no findings'], ...FINDING_NAMES.map((f): [string, string] => [f, FINDING_LEGEND[f].label])], filter.finding ?? '', (v) => setFilter({ finding: v === 'none' || isFindingName(v) ? v : null })),
      select('notes', 'filter-annotation', [['any', 'any'], ['annotated', 'annotated'], ['none', 'not annotated'], ...this.annotations.tags(this.state.runId ?? '').map((tag): [string, string] => [`tag:${tag}`, `tag ${tag}`])], this.state.annotation ?? 'any', (v) => {
        this.state.annotation = isAnnotationFilter(v) ? v : 'any';
        this.listLimit = LIST_PAGE;
        this.save();
        this.renderList();
        void this.showSelection();
      }),
      h('label', { class: 'control' }, 'zoom ', zoom, zoomValue),
      compare,
      h('span', { class: 'muted keys', title: 'j / k: next / previous rollout · [ / ]: previous / next turn' }, 'j/k · [ ]'),
    );
  }

  /** Offers the steps (made again only when the list of steps changed) with the open one chosen. */
  private renderStepChooser(): void {
    if (this.stepsOffered !== this.steps) {
      this.stepsOffered = this.steps;
      const options: [string, string][] = this.steps.map((s) => [String(s.step), `step ${s.step}`]);
      replaceChildren(this.stepChooser, select('step', 'step-select', options, '', (v) => void this.openStep(Number(v))));
    }
    const chooser = this.stepChooser.querySelector('select');
    if (chooser) chooser.value = String(this.state.step ?? '');
  }

  /** A range over the step files (not step numbers: steps may be sparse); it opens the step on release. */
  private stepSlider(stepIndex: number): HTMLElement {
    const slider = h('input', { type: 'range', min: '0', max: String(this.steps.length - 1), step: '1', 'aria-label': 'step', 'data-testid': 'step-slider' }) as HTMLInputElement;
    slider.value = String(Math.max(0, stepIndex));
    const label = h('output', { class: 'step-slider-value' }, `step ${this.state.step ?? '–'}`);
    const stepAt = () => this.steps[Number(slider.value)]?.step ?? null;
    slider.addEventListener('input', () => {
      label.textContent = `step ${stepAt() ?? '–'}`;
      slider.setAttribute('aria-valuetext', label.textContent);
    });
    slider.addEventListener('change', () => void this.openStep(stepAt()));
    slider.setAttribute('aria-valuetext', label.textContent ?? '');
    return h('label', { class: 'control step-slider' }, slider, label);
  }

  private renderList(): void {
    const matching = this.matchingGroups();
    const groups = matching.slice(0, this.listLimit);
    const total = this.index?.rollouts.length ?? 0;
    const shownCount = matching.reduce((n, g) => n + g.rollouts.length, 0);
    const skipped = this.index?.skipped.length ?? 0;
    this.rows = new Map();
    this.status.textContent = `${shownCount} of ${total} rollouts in ${matching.length} of ${this.groups.length} groups${skipped ? ` · ${skipped} unreadable line(s) skipped` : ''}`;
    const more =
      matching.length > groups.length
        ? button(`Show ${Math.min(LIST_PAGE, matching.length - groups.length)} more groups`, () => {
            this.listLimit += LIST_PAGE;
            this.renderList();
          }, { secondary: true, testid: 'more-groups' })
        : null;
    replaceChildren(
      this.list,
      ...groups.map((group) =>
        h(
          'section',
          { class: `group ${group.kept ? 'kept' : 'filtered'}`, 'data-testid': 'group', 'data-prompt': group.promptId },
          h('header', { class: 'group-head' },
            h('div', { class: 'group-question', title: group.question }, group.question || group.promptId),
            h('div', { class: 'group-meta' },
              h('span', null, h('span', { class: 'muted' }, 'gold '), h('strong', null, answerText(group.gold))),
              h('span', { class: 'muted' }, `reward ${formatNumber(group.rewardMin)}–${formatNumber(group.rewardMax)}`),
              h('span', { class: 'muted' }, `${group.correct}/${group.size} correct`),
              groupBadgeElement(groupBadge(group)),
            ),
          ),
          h('ul', { class: 'rollout-list', role: 'listbox', 'aria-label': `rollouts of ${group.promptId}` }, ...group.rollouts.map((r) => {
            const selected = r.line === this.state.line;
            const compared = r.line === this.state.compareLine;
            const item = h(
              'li',
              { class: `rollout-row ${selected ? 'selected' : ''} ${compared ? 'compared' : ''}`, role: 'option', 'aria-selected': selected ? 'true' : 'false', 'data-testid': 'rollout-row', 'data-line': r.line, tabindex: '-1' },
              h('span', { class: r.correct === true ? 'good' : r.correct === false ? 'bad' : 'muted' }, h('span', { class: `codicon codicon-${r.correct === true ? 'pass' : r.correct === false ? 'error' : 'circle-outline'}`, 'aria-hidden': 'true' })),
              h('span', { class: 'num reward' }, formatNumber(r.reward)),
              h('span', { class: 'num advantage', title: 'advantage' }, `adv ${formatNumber(r.advantage, 2)}`),
              h('span', { class: 'tools', title: r.toolNames.join(', ') }, toolUseWords({ ran: r.toolCalls, failed: r.toolErrors, formatErrors: r.formatErrors })),
              r.envFailed === true ? h('span', { class: 'bad env-failed', title: 'the env server could not take a turn of this episode or score it (its reward notes say why)' }, 'env failed') : null,
              r.errorClasses.length ? h('span', { class: 'errors', title: errorLegend(r.errorClasses) }, r.errorClasses.join(' ')) : null,
              ...(r.findings ?? []).map((f) => findingBadge(f, true)),
              h('span', { class: 'answer muted' }, answerText(r.answer)),
              this.annotations.mark(this.state.runId ?? '', { kind: 'step', step: this.state.step, line: r.line }),
            );
            item.addEventListener('click', () => this.choose(r.line));
            this.rows.set(r.line, item);
            return item;
          })),
        ),
      ),
      more,
    );
  }

  private choose(line: number): void {
    if (this.state.compare && this.state.line !== null && line !== this.state.line) this.state.compareLine = line;
    else {
      this.state.line = line;
      this.state.turn = 0;
    }
    this.save();
    this.markSelection();
    void this.showSelection();
  }

  /** Moves the selected and compared marks in the list without rebuilding it. */
  private markSelection(): void {
    for (const [line, row] of this.rows) {
      const selected = line === this.state.line;
      row.classList.toggle('selected', selected);
      row.classList.toggle('compared', line === this.state.compareLine);
      row.setAttribute('aria-selected', selected ? 'true' : 'false');
    }
  }

  private async record(line: number): Promise<{ record: RolloutRecord; inferredWeights?: string }> {
    const key = `${this.state.runId}/${this.state.step}/${line}`;
    const cached = this.records.get(key);
    if (cached) return cached;
    const { record, inferredWeights } = await this.host.request(RolloutRecordRequest, { runId: this.state.runId ?? '', step: this.state.step ?? 0, line });
    const entry = { record, ...(inferredWeights ? { inferredWeights } : {}) };
    this.records.set(key, entry);
    if (this.records.size > 200) this.records.delete(this.records.keys().next().value as string);
    return entry;
  }

  private async showSelection(): Promise<void> {
    const order = navigationOrder(this.visibleGroups());
    if (this.state.line === null || !order.includes(this.state.line)) {
      this.state.line = order[0] ?? null;
      this.state.turn = 0;
      this.markSelection();
    }
    if (this.state.compareLine !== null && (!this.state.compare || !order.includes(this.state.compareLine))) this.state.compareLine = null;
    this.save();
    const lines = [this.state.line, this.state.compare ? this.state.compareLine : null].filter((l): l is number => l !== null);
    if (lines.length === 0) {
      this.shown = [];
      replaceChildren(this.detail, h('p', { class: 'muted empty' }, this.groups.length === 0 ? 'No rollouts in this step.' : 'No rollout matches the filters.'));
      return;
    }
    const token = ++this.loadToken;
    const records = await Promise.all(lines.map((line) => this.record(line)));
    if (token !== this.loadToken) return;
    const runId = this.state.runId ?? '';
    const step = this.state.step ?? 0;
    const availability = await this.replayAvailable();
    if (token !== this.loadToken) return;
    this.shown = records.map(({ record, inferredWeights }, i) =>
      renderRollout(record, {
        ...(inferredWeights ? { weightsFrom: inferredWeights } : {}),
        playground: !this.host.isStatic,
        replay: this.replayControl(availability, runId, step, lines[i] as number),
        imageUrl: (ref) => this.host.resourceUrl(runId, `images/${ref}.png`),
        zoom: this.state.zoom,
        openInPlayground: (ref, taskImage, calls) => void this.openInPlayground(runId, ref, taskImage ? record.prompt_id : null, calls),
      }),
    );
    this.detail.classList.toggle('comparing', this.shown.length > 1);
    const promptId = records[0]?.record.prompt_id;
    const over = promptId ? button('This task over time', () => void this.showTimeline(runId, promptId), { icon: 'history', secondary: true, testid: 'task-timeline-button', title: 'Every training step and evaluation of this run where this task appeared' }) : null;
    const notes = (line: number, promptId: string) =>
      this.annotations.section(runId, { kind: 'step', step: this.state.step, line, prompt_id: promptId }, () => {
        // A saved or removed annotation changes the row's mark and the filter's tags.
        this.renderControls();
        this.renderList();
      });
    replaceChildren(
      this.detail,
      h('div', { class: 'detail-actions' }, over),
      ...this.shown.map((s, i) => h('div', { class: 'detail-column', 'data-column': i, 'data-line': lines[i] }, s.element, notes(lines[i] as number, records[i]?.record.prompt_id ?? ''))),
    );
    if (this.state.compare && this.shown.length === 1) this.detail.append(h('p', { class: 'muted hint' }, 'Compare: click another rollout in the list to show it beside this one.'));
    this.focusTurn(this.state.turn, false);
  }

  private async replayAvailable(): Promise<ReplayAvailability> {
    if (this.replayAvailability === null) {
      try {
        this.replayAvailability = await this.host.request(ReplayAvailabilityRequest, {});
      } catch (err) {
        this.replayAvailability = { available: false, policy: null, reason: `the host did not say whether it can replay: ${(err as Error).message}` };
      }
    }
    return this.replayAvailability;
  }

  private replayControl(availability: ReplayAvailability, runId: string, step: number, line: number) {
    const key = `${runId}/${step}/${line}`;
    return {
      availability,
      previous: () => this.replays.get(key),
      run: async () => {
        const result = await this.host.request(WithheldReplayRequest, { runId, step, line });
        this.replays.set(key, result);
        return result;
      },
    };
  }

  private async openInPlayground(runId: string, ref: string, promptId: string | null, calls: PlaygroundCall[] = []): Promise<void> {
    try {
      const { path, metadata } = await this.host.request(RunImageRequest, { runId, ref, promptId });
      await this.host.showInPlayground(path, metadata, calls);
    } catch (err) {
      this.status.textContent = `Could not open the image in the playground: ${(err as Error).message}`;
    }
  }

  private focusTurn(turn: number, scroll: boolean): void {
    const turns = this.shown[0]?.turns ?? [];
    if (turns.length === 0) return;
    this.state.turn = Math.max(0, Math.min(turns.length - 1, turn));
    this.save();
    turns.forEach((element, i) => element.classList.toggle('active', i === this.state.turn));
    this.detail.dataset.activeTurn = String(this.state.turn);
    if (scroll) turns[this.state.turn]?.scrollIntoView({ block: 'nearest' });
  }

  private onKey(event: KeyboardEvent): void {
    const target = event.target as HTMLElement | null;
    if (target && (/^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName) || target.tagName === 'VSCODE-TEXTFIELD' || target.isContentEditable)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const order = navigationOrder(this.visibleGroups());
    if (event.key === 'j' || event.key === 'k') {
      const next = stepThrough(order, this.state.line, event.key === 'j' ? 1 : -1);
      if (next !== null && next !== this.state.line) {
        this.state.line = next;
        this.state.turn = 0;
        this.markSelection();
        this.rows.get(next)?.scrollIntoView({ block: 'nearest' });
        void this.showSelection();
      }
      event.preventDefault();
    } else if (event.key === ']' || event.key === '[') {
      this.focusTurn(this.state.turn + (event.key === ']' ? 1 : -1), true);
      event.preventDefault();
    }
  }

  private async onRunsChanged(runs: RunSummary[]): Promise<void> {
    const before = this.runs.find((r) => r.id === this.state.runId);
    this.runs = runs;
    const now = runs.find((r) => r.id === this.state.runId);
    if (!now || !before || now.rolloutSteps === before.rolloutSteps) return;
    this.steps = (await this.host.request(RolloutStepsRequest, { runId: now.id })).steps;
    if (this.state.step === null) await this.openStep(this.steps[this.steps.length - 1]?.step ?? null);
    else this.renderControls();
  }
}

startPanel(async (host, root) => {
  await new Viewer(host, root).start();
});
