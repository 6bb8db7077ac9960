/**
 * The training dashboard: one chart per chosen metric with every open run overlaid, EMA
 * smoothing with the raw values faintly behind (a "show raw" toggle), x by step or wall time,
 * drag-to-zoom, a click on a point to open that step's rollouts in the viewer (and to select its
 * run: drawn at full opacity on every chart, the other runs dimmed), live updates as
 * metrics.jsonl grows, PNG and CSV export, a warning when tool use fades, the runs' evaluations
 * (with and without tools) as a chart by step beside the train reward and accuracy and as a
 * table, and, when runs are compared, the run-config keys that differ. Only UI choices are
 * persisted; data always comes from the host.
 *
 * What a chart draws comes shaped by the host (metrics/series): about one point per pixel of
 * the chart's width, with each bucket's min and max, the EMA and the stats computed over every
 * row, and the tool-fading verdict judged on every row. So neither the answer nor the work in the
 * page grows with the run: a 100k-line run costs what a 1k-line one does. A summary snapshot that
 * says a run has new rows asks again, one round of requests per run in flight at a time, so a
 * burst of appends (or slider moves) costs one round after the one in flight, never a queue; while
 * the host is still reading a big file, a run is asked at most once a second. Each answer is drawn
 * as it comes (the single charts need not wait for the group charts'). Charts are painted by a
 * DrawQueue: in page order, as many per frame as fit in it, and only those on screen.
 */
import type { PanelHost } from '../shared/host.js';
import {
  type EvalResult,
  EvalSetsRequest,
  EvalSummaryRequest,
  type MetricSeries,
  type MetricSeriesResult,
  MetricRowsRequest,
  MetricSeriesRequest,
  MAX_SERIES_POINTS,
  PANEL_TITLES,
  ReadyCommand,
  RolloutStepsRequest,
  type RunConfigEntry,
  RunConfigsRequest,
  type RunSummary,
  RunsChangedNotification,
  RunsListRequest,
} from '../../protocol/panel-protocol.js';
import { button, formatNumber, h, replaceChildren } from '../shared/dom.js';
import { hasFields, isNumberInRange, isStringArray, optional } from '../../protocol/guards.js';
import { COUNTER_SETTING } from '../../protocol/tool-fading.js';
import { STEP_SECONDS_METRICS } from '../../protocol/metric-math.js';
import { aliasesOf, canonicalMetric, loggedName } from '../../protocol/metric-vocabulary.js';
import { panelHeader, startPanel } from '../shared/shell.js';
import { drawnRunColour, runColourIndices } from '../shared/run-colours.js';
import { themeColours, watchTheme } from '../shared/theme.js';
import { type ChartSpec, chartSpecs } from './chart-groups.js';
import { configDiff, stepsRan } from './config-diff.js';
import { defaultMetrics, groupByPrefix, type RunMetricFacts } from './default-metrics.js';
import { DrawQueue } from './draw-queue.js';
import { EvalChart } from './eval-chart.js';
import { evalSummaryView, type SummaryRun } from './eval-summary-view.js';
import { accuracyInterval, EVAL_ACCURACY_METRICS } from './eval-series.js';
import { nearestStep } from './nearest-step.js';
import { MetricChart, type RunSeries, type XRange } from './metric-chart.js';
import { type Point, toCsv, type XAxis } from './series.js';
import { ToolEffectChart } from './tool-effect-chart.js';
import { effectInterval, TOOL_EFFECT } from './tool-effect-series.js';
import { findingsTable, type FindingsRun, type FindingTarget } from './findings-table.js';
import { latestEvalCounts, latestStepCounts, logsScans, SCAN_METRICS } from './scan-counts.js';

interface DashboardState {
  /** null: the defaults for whatever the runs log. */
  metrics: string[] | null;
  hiddenRuns: string[];
  smoothing: number;
  xAxis: XAxis;
  /** Whether the raw values are drawn faintly behind a smoothed line (absent in state saved before the toggle: shown). */
  showRaw?: boolean;
  /** The charts (metric or group keys) drawn on a log-scale y axis (absent in state saved before the toggle: none). */
  logY?: string[];
}

function isDashboardState(value: unknown): value is DashboardState {
  return hasFields(value, {
    metrics: (v) => v === null || isStringArray(v),
    hiddenRuns: isStringArray,
    smoothing: (v) => isNumberInRange(v, 0, 0.99),
    xAxis: (v) => v === 'step' || v === 'time',
    showRaw: optional((v) => typeof v === 'boolean'),
    logY: optional(isStringArray),
  });
}

/** One metric's line as the host last answered it. */
interface AnsweredSeries {
  series: MetricSeries;
  /** The x axis and the range (a zoom; null: all of it) it was answered for: after a switch or a zoom, the chart waits for its new answer. */
  axis: XAxis;
  range: XRange | null;
  /** Unique per answer, so a chart redraws only when one of its lines has new data. */
  stamp: number;
}

interface RunData {
  summary: RunSummary;
  /** The last answer for each metric; the rest of an answer (stage changes, tool fading, x source) in `shape`. */
  series: Map<string, AnsweredSeries>;
  shape: Omit<MetricSeriesResult, 'series'> | null;
  /** Which question the run's answers are complete for (rows, metrics, axis, smoothing, width, zooms). */
  answered: string | null;
  /** When the last complete answer came (performance.now()). */
  answeredAt: number;
  fetching: boolean;
  /** The run's stage and SFT phase changes on the step axis, from its last answer on that axis (the evaluation chart's marks). */
  stepPhases: { x: number; stage: string }[];
  /** The next question while the host is still reading the run's metrics.jsonl (see LOADING_ASK_MS). */
  askLater: ReturnType<typeof setTimeout> | null;
}

/** The fewest points a line is asked for, and the step the chart width is rounded to (a resize by a pixel asks nothing). */
const MIN_POINTS = 100;
/** The fewest points a line of a group chart is asked for. */
const MIN_GROUP_POINTS = 50;
const WIDTH_STEP = 50;
/**
 * While the host is still reading a big metrics.jsonl, each answer is a partial picture that
 * every chart redraws; a run is asked again at most this often then (and at once when the reading
 * is done), so the page's drawing leaves the host's reading the CPU. On two cores, redrawing every
 * chart at each of the host's loading notices (300 ms apart) slowed the reading by as much again.
 */
const LOADING_ASK_MS = 1000;

function points(line: { x: number[]; y: number[] }): Point[] {
  return line.x.map((x, i) => ({ x, y: line.y[i] as number }));
}

class Dashboard {
  private state: DashboardState;
  private readonly runs = new Map<string, RunData>();
  private readonly charts = new Map<string, MetricChart>();
  /** What each chart last drew from, so unchanged charts are not redrawn. */
  private readonly drawnFrom = new Map<string, string>();
  /** Zoomed charts' x ranges; not persisted (they belong to one look at the data). */
  private readonly zooms = new Map<string, XRange>();
  private readonly drawQueue = new DrawQueue();
  /** Accuracy with and without tools against the step, beside the train reward and accuracy; in the grid only while some shown run has an evaluation with a step. */
  private readonly evalChart = new EvalChart((on) => this.setLogY(EVAL_CHART_KEY, on));
  private evalChartShown = false;
  /** The tool effect with its interval beside the call rate (issue 43), right after the evaluation chart; in the grid only while some shown run has an evaluation with a tool effect. */
  private readonly toolEffectChart = new ToolEffectChart();
  private toolEffectShown = false;
  /** The findings table (findings-table.ts): the scanners' counts at each shown run's latest step and evaluation. */
  private readonly findingsPanel = h('div', { class: 'findings-slot' });
  private findingsFor = '';
  private evalChartFor = '';
  private readonly chartGrid = h('section', { class: 'chart-grid', 'aria-label': 'Metric charts' });
  private readonly banners = h('div', { class: 'banners' });
  private readonly evalPanel = h('aside', { class: 'eval-panel', 'aria-label': 'Evaluations' });
  /** The evaluation summary above the charts (eval-summary-view.ts); empty while no shown run kept an evaluation task by task. */
  private readonly summaryPanel = h('div', { class: 'eval-summary-slot' });
  private summaryFor = '';
  private readonly runToggles = h('div', { class: 'run-toggles', role: 'group', 'aria-label': 'Runs' });
  private togglesFor = '';
  private palette: string[] | null = null;
  /**
   * The run whose point was picked on a chart (its pick line open): its lines are drawn at full
   * opacity and the other runs' dimmed, on every chart; null, every run at full opacity. Not
   * persisted, like the pick.
   */
  private selectedRun: string | null = null;
  private linePoints = 600;
  private answers = 0;
  private evaluationsFor = '';
  private readonly configPanel = h('section', { class: 'config-diff', 'aria-label': 'Config differences', 'data-testid': 'config-diff', hidden: true });
  /** Which runs the config diff was last asked for; the configs are read once per set of compared runs (and again while one lacks its config.json: a run just starting writes it soon). */
  private configsFor = '';
  private configsMissing = false;
  private readonly picker = h('div', { class: 'metric-picker', hidden: true });
  /** Kept across re-renders (a new metrics line re-renders the picker), so typing is never lost. */
  private readonly pickerSearch = h('input', { type: 'search', class: 'metric-search', placeholder: 'Search metrics', 'aria-label': 'Search metrics', 'data-testid': 'metric-search' });
  private readonly smoothingValue = h('output', { class: 'smoothing-value' });
  private readonly smoothingInput = h('input', { type: 'range', min: '0', max: '0.99', step: '0.01', 'aria-label': 'EMA smoothing', 'data-testid': 'smoothing' });
  private readonly showRawBox = h('vscode-checkbox', { 'data-testid': 'show-raw', title: 'Draw the raw values faintly behind the smoothed line' }, 'show raw');
  /** Opens the report.html the shown runs are read with (the demo's runs/demo/report.html); shown only when one has one. */
  private readonly reportButton = button('Report', () => this.openReport(), { icon: 'book', secondary: true, title: 'Open the report written beside these runs (report.html)', testid: 'open-report' });
  private readonly xAxisSelect = h('select', { 'aria-label': 'x axis', 'data-testid': 'x-axis' }, h('option', { value: 'step' }, 'step'), h('option', { value: 'time' }, 'wall time'));

  constructor(
    private readonly host: PanelHost,
    private readonly root: HTMLElement,
  ) {
    this.state = host.getState(isDashboardState) ?? { metrics: null, hiddenRuns: [], smoothing: 0.6, xAxis: 'step' };
  }

  async start(): Promise<void> {
    this.pickerSearch.addEventListener('input', () => this.filterPicker());
    this.smoothingInput.value = String(this.state.smoothing);
    this.smoothingInput.addEventListener('input', () => {
      this.state.smoothing = Number(this.smoothingInput.value);
      this.saveState();
      this.smoothingValue.textContent = this.state.smoothing.toFixed(2);
      this.renderShowRaw();
      this.fetchAll();
    });
    this.renderShowRaw();
    this.showRawBox.addEventListener('change', () => {
      this.state.showRaw = (this.showRawBox as HTMLElement & { checked: boolean }).checked;
      this.saveState();
      // Both lines are in every answer already: only the drawing changes.
      this.renderCharts();
    });
    this.xAxisSelect.value = this.state.xAxis;
    this.xAxisSelect.addEventListener('change', () => {
      this.state.xAxis = this.xAxisSelect.value === 'time' ? 'time' : 'step';
      // A range of steps means nothing on the time axis.
      this.zooms.clear();
      this.saveState();
      this.render();
    });
    const header = panelHeader(
      PANEL_TITLES.dashboard,
      this.host,
      this.runToggles,
      h('label', { class: 'control' }, 'x ', this.xAxisSelect),
      h('label', { class: 'control' }, 'smoothing ', this.smoothingInput, this.smoothingValue),
      this.showRawBox,
      button('Metrics', () => this.togglePicker(), { icon: 'list-filter', secondary: true, testid: 'metrics-button' }),
      button('CSV', () => void this.exportCsv(), { icon: 'export', secondary: true, title: 'Export the shown metrics of the shown runs as CSV', testid: 'export-csv' }),
      this.reportButton,
    );
    replaceChildren(this.root, header, this.picker, this.banners, this.summaryPanel, h('main', { class: 'dashboard-body' }, this.chartGrid, h('div', { class: 'side-column' }, this.evalPanel, this.findingsPanel, this.configPanel)));
    this.drawQueue.add(this.evalChart);
    this.drawQueue.add(this.toolEffectChart);
    this.evalChart.setLogY(this.state.logY?.includes(EVAL_CHART_KEY) ?? false);
    watchTheme(() => {
      for (const chart of this.charts.values()) chart.retheme();
      this.evalChart.retheme();
      this.toolEffectChart.retheme();
      this.evalChartFor = '';
      this.palette = null;
      this.togglesFor = '';
      this.drawnFrom.clear();
      this.render();
    });
    // A wider or narrower chart wants more or fewer points per line.
    new ResizeObserver(() => {
      const before = this.linePoints;
      this.measureLinePoints();
      if (this.linePoints !== before) this.fetchAll();
    }).observe(this.chartGrid);
    this.host.onNotification(RunsChangedNotification, ({ runs }) => this.receive(runs));
    const { runs } = await this.host.request(RunsListRequest, {});
    this.receive(runs);
    this.host.command(ReadyCommand, { panel: 'dashboard' });
  }

  /** A new summary snapshot: ask for the lines of every run whose data moved on. */
  private receive(summaries: RunSummary[]): void {
    for (const summary of summaries) {
      const known = this.runs.get(summary.id);
      if (known) known.summary = summary;
      else this.runs.set(summary.id, { summary, series: new Map(), shape: null, answered: null, answeredAt: 0, fetching: false, stepPhases: [], askLater: null });
    }
    for (const [id, run] of [...this.runs]) {
      if (summaries.some((s) => s.id === id)) continue;
      if (run.askLater) clearTimeout(run.askLater);
      this.runs.delete(id);
    }
    this.render();
  }

  /** Asks for the lines of every shown run whose data moved on (a hidden run asks when it is shown again). */
  private fetchAll(): void {
    for (const run of this.visibleRuns()) void this.fetchSeries(run);
  }

  /** The question a run's charts need answered now; equal strings need no new request. */
  private question(run: RunData): string {
    const zooms = this.specs().filter((c) => this.zooms.has(c.key)).map((c) => [c.key, this.zooms.get(c.key)]);
    return JSON.stringify([run.summary.metricRows, this.selectedMetrics(), this.state.xAxis, this.state.smoothing, this.linePoints, zooms]);
  }

  private async fetchSeries(run: RunData): Promise<void> {
    // The host finished reading: a question put off for the loading is asked now.
    if (run.askLater && !run.summary.metricsLoading) {
      clearTimeout(run.askLater);
      run.askLater = null;
    }
    if (run.fetching || run.askLater || this.state.hiddenRuns.includes(run.summary.id)) return; // the request in flight asks again when it is answered
    const question = this.question(run);
    if (question === run.answered) return;
    const wait = run.summary.metricsLoading && run.answered !== null ? run.answeredAt + LOADING_ASK_MS - performance.now() : 0;
    if (wait > 0) {
      run.askLater = setTimeout(() => {
        run.askLater = null;
        void this.fetchSeries(run);
      }, wait);
      return;
    }
    run.fetching = true;
    const { xAxis, smoothing } = this.state;
    const specs = this.specs();
    const maxPoints = this.linePoints;
    const common = { runId: run.summary.id, xAxis, smoothing, maxPoints };
    // Single charts share one request; zoomed charts ask for their own range, and a group chart
    // for all its members at once, with fewer points per line so that the chart draws about as
    // many points as a single one (its many lines in one canvas would otherwise make one long task).
    // Each answer is drawn as it comes: the single charts (the reward first) need not wait for the groups'.
    const whole = specs.filter((c) => !this.zooms.has(c.key) && c.labels === null).flatMap((c) => c.members);
    const own = specs.filter((c) => this.zooms.has(c.key) || c.labels !== null);
    // The run is asked for each metric under the name it logs it by (a veRL run's critic/score/mean
    // for reward/mean: protocol/metric-vocabulary.ts); its answers are kept under the shown name.
    const logged = new Set(run.summary.metricNames);
    const asLogged = (names: string[]) => names.map((name) => loggedName(name, logged) ?? name);
    const asked = [
      { ...common, metrics: asLogged(whole) },
      ...own.map((spec) => {
        const range = this.zooms.get(spec.key);
        const perLine = spec.labels === null ? maxPoints : Math.max(MIN_GROUP_POINTS, Math.floor(maxPoints / spec.members.length));
        return { ...common, metrics: asLogged(spec.members), maxPoints: perLine, ...(range ? { range } : {}) };
      }),
    ];
    const results = await Promise.allSettled(
      asked.map(async (params) => {
        const result = await this.host.request(MetricSeriesRequest, params);
        if (this.runs.get(run.summary.id) !== run) return;
        const { series, ...shape } = result;
        for (const line of series) run.series.set(canonicalMetric(line.metric), { series: line, axis: xAxis, range: params.range ?? null, stamp: ++this.answers });
        run.shape = shape;
        if (xAxis === 'step') run.stepPhases = shape.phases;
        this.renderEvalChart();
        this.renderCharts();
        this.renderBanners();
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) this.host.reportError(failed.reason);
    // Complete, or failed: either way the run's charts no longer wait for it (what it lacks is left out).
    run.answered = question;
    run.answeredAt = performance.now();
    run.fetching = false;
    if (this.runs.get(run.summary.id) !== run) return;
    if (failed) {
      this.renderCharts();
      this.renderBanners();
    }
    void this.fetchSeries(run);
  }

  /**
   * Points per line: about the charts' width in CSS pixels (the host keeps each bucket's min and
   * max). Measured when the grid resizes or gets its first chart, not per question: reading a
   * width makes the browser lay the page out.
   */
  private measureLinePoints(): void {
    const card = this.chartGrid.querySelector<HTMLElement>('.chart-card');
    const width = card?.clientWidth ?? 0;
    const estimate = width > 0 ? width : 600;
    this.linePoints = Math.min(MAX_SERIES_POINTS, Math.max(MIN_POINTS, Math.round(estimate / WIDTH_STEP) * WIDTH_STEP));
  }

  private visibleRuns(): RunData[] {
    return [...this.runs.values()].filter((r) => !this.state.hiddenRuns.includes(r.summary.id));
  }

  private allMetricNames(): string[] {
    const names = new Set<string>();
    for (const run of this.runs.values()) for (const name of run.summary.metricNames) names.add(canonicalMetric(name));
    return [...names].sort();
  }

  /** The charts to show: a chart per chosen metric, the tool and error counts in groups (chart-groups.ts). */
  private specs(): ChartSpec[] {
    return chartSpecs(this.selectedMetrics());
  }

  /** What the defaults know of the shown runs (default-metrics.ts). */
  private metricFacts(): RunMetricFacts[] {
    return this.visibleRuns().map(({ summary }) => {
      const stats = summary.metricStats ? Object.fromEntries(Object.entries(summary.metricStats).map(([name, s]) => [canonicalMetric(name), s])) : undefined;
      return { rows: summary.metricRows, ...(stats ? { stats } : {}) };
    });
  }

  private selectedMetrics(): string[] {
    const available = this.allMetricNames();
    if (this.state.metrics === null) return defaultMetrics(available, this.metricFacts());
    return this.state.metrics.filter((m) => available.includes(m));
  }

  /** The colour a run's lines are drawn in: its own, dimmed while another shown run is selected. */
  private drawnColourOf(runId: string): string {
    const selected = this.selectedRun !== null && !this.state.hiddenRuns.includes(this.selectedRun) ? this.selectedRun : null;
    return drawnRunColour(this.colourOf(runId), runId, selected);
  }

  /** Selects a run (null: none) and draws the charts again in its light. */
  private selectRun(runId: string | null): void {
    if (runId === this.selectedRun) return;
    this.selectedRun = runId;
    this.renderCharts();
    this.renderEvalChart();
  }

  private colourOf(runId: string): string {
    // The theme's colours are read once per theme: each read asks the browser for computed styles.
    this.palette ??= themeColours().series;
    const series = this.palette;
    const ids = [...this.runs.keys()];
    const index = runColourIndices(ids.map((id) => this.runs.get(id)?.summary.name ?? id))[ids.indexOf(runId)] ?? 0;
    return series[index % series.length] ?? '#1a85ff';
  }

  /** The toggle says whether raw values are drawn; without smoothing the raw values are the line, so it is off duty. */
  private renderShowRaw(): void {
    const box = this.showRawBox as HTMLElement & { checked: boolean; disabled: boolean };
    box.checked = this.state.showRaw !== false;
    box.disabled = this.state.smoothing === 0;
  }

  private render(): void {
    this.smoothingValue.textContent = this.state.smoothing.toFixed(2);
    this.renderShowRaw();
    this.renderRunToggles();
    this.renderBanners();
    this.renderEvalChart();
    this.renderCharts();
    this.renderEvaluations();
    void this.renderSummary();
    void this.renderFindings();
    void this.renderConfigDiff();
    if (!this.picker.hidden) this.renderPicker();
    this.fetchAll();
  }

  /** The report of the first shown run that has one (the runs of a folder share theirs). */
  private openReport(): void {
    const run = this.visibleRuns().find((r) => r.summary.report === true) ?? [...this.runs.values()].find((r) => r.summary.report === true);
    if (run) this.host.showReport(run.summary.id);
  }

  private renderRunToggles(): void {
    const runs = [...this.runs.values()].map(({ summary }) => summary);
    const key = JSON.stringify([runs.map((s) => [s.id, s.name, s.path, s.status, s.engine, s.report]), this.state.hiddenRuns]);
    if (key === this.togglesFor) return;
    this.togglesFor = key;
    this.reportButton.hidden = !runs.some((s) => s.report === true);
    replaceChildren(
      this.runToggles,
      ...runs.map((summary) => {
        const box = h('vscode-checkbox', { 'data-run': summary.id, checked: !this.state.hiddenRuns.includes(summary.id), title: summary.path }, summary.name);
        box.addEventListener('change', () => {
          const checked = (box as HTMLElement & { checked: boolean }).checked;
          this.state.hiddenRuns = checked ? this.state.hiddenRuns.filter((id) => id !== summary.id) : [...this.state.hiddenRuns, summary.id];
          this.saveState();
          this.render();
        });
        const swatch = h('span', { class: 'swatch' });
        swatch.style.backgroundColor = this.colourOf(summary.id);
        return h('span', { class: 'run-toggle' }, swatch, box, h('vscode-badge', { variant: 'counter', title: `status from run.json` }, summary.status ?? 'no status'),
          ...(summary.engine ? [h('vscode-badge', { variant: 'counter', title: 'engine from run.json', 'data-testid': 'run-engine' }, summary.engine)] : []));
      }),
    );
  }

  private renderBanners(): void {
    const banners: HTMLElement[] = [];
    const runs = this.visibleRuns();
    for (const run of runs) {
      const verdict = run.shape?.toolFading;
      if (verdict?.fading) {
        banners.push(
          h('div', { class: 'banner warning', role: 'alert', 'data-testid': 'tool-fading-warning', 'data-run': run.summary.id },
            h('span', { class: 'codicon codicon-warning', 'aria-hidden': 'true' }),
            h('strong', null, `Tool use collapsed in ${run.summary.name}: `),
            `${verdict.reason}. The policy may be learning to answer without looking (DeepEyes #55, OpenThinkIMG #13). `,
            'A lower ', h('code', null, COUNTER_SETTING), ' (in the run config\'s rewards section) makes answering without a tool pay less. ',
            button('Show the call-rate chart', () => this.showChart('tool/call_rate'), { secondary: true, testid: 'show-call-rate' }),
          ),
        );
      }
      const loading = run.summary.metricsLoading;
      if (loading) {
        const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
        const sampled = loading.sampledLines ? ` Beyond them the curves are drawn from ${loading.sampledLines} lines sampled across the rest of the file, until it is read.` : '';
        banners.push(h('div', { class: 'banner info', role: 'status', 'data-testid': 'metrics-loading' }, `${run.summary.name}: reading metrics.jsonl, ${mb(loading.bytesRead)} of ${mb(loading.bytesTotal)} MB (${run.summary.metricRows} rows so far)…${sampled}`));
      }
      for (const problem of run.summary.problems) banners.push(h('div', { class: 'banner info', role: 'status' }, `${run.summary.name}: ${problem}`));
    }
    if (this.state.xAxis === 'time' && runs.some((r) => r.shape !== null && r.shape.rows > 0 && r.shape.xSource === null)) {
      banners.push(h('div', { class: 'banner info' }, `Some runs have neither a time field nor ${STEP_SECONDS_METRICS.join(' nor ')} in metrics.jsonl, so they cannot be drawn by wall time.`));
    }
    if (this.runs.size === 0) banners.push(h('div', { class: 'banner info' }, 'No runs are open. Start `vistool view RUN_DIR` with a run directory.'));
    replaceChildren(this.banners, ...banners);
  }

  /** Brings a metric's chart into view, adding it to the shown charts first when it is hidden. */
  private showChart(metric: string): void {
    const shown = this.selectedMetrics();
    if (!shown.includes(metric)) {
      this.state.metrics = [metric, ...shown];
      this.saveState();
      this.render();
    }
    this.charts.get(metric)?.element.scrollIntoView({ block: 'center' });
  }

  /**
   * A clicked point: the chart offers the rollouts of the nearest step that has a rollouts file
   * (the host lists them), which the host opens in the rollout viewer.
   */
  private async pick(metric: string, seriesId: string, x: number): Promise<void> {
    // A group's lines are named run + member (seriesKey); the run is what the viewer opens.
    const runId = seriesId.split(SERIES_SEPARATOR)[0] ?? seriesId;
    const chart = this.charts.get(metric);
    const run = this.runs.get(runId);
    if (!chart || !run) return;
    for (const other of this.charts.values()) if (other !== chart) other.showPick(null);
    this.selectRun(runId);
    const dismiss = button('', () => {
      chart.showPick(null);
      this.selectRun(null);
    }, { icon: 'close', secondary: true, title: 'Dismiss', testid: 'dismiss-pick' });
    if (this.state.xAxis !== 'step') {
      chart.showPick(h('span', { class: 'muted' }, 'Set x to step to open the rollouts of a point. ', dismiss));
      return;
    }
    let steps: number[];
    try {
      steps = (await this.host.request(RolloutStepsRequest, { runId })).steps.map((s) => s.step);
    } catch (err) {
      this.host.reportError(err);
      return;
    }
    const step = nearestStep(steps, x);
    const clicked = Math.round(x);
    const { name, path } = run.summary;
    if (step === null) {
      chart.showPick(h('span', { class: 'muted', 'data-run': runId, 'data-clicked': clicked }, `${name} · step ${clicked}: this run has no rollout files yet. `, dismiss));
      return;
    }
    chart.showPick(
      h('span', { 'data-run': runId, 'data-clicked': clicked, 'data-step': step },
        `${name} · step ${clicked}${step === clicked ? '' : ` (nearest step with rollouts: ${step})`} `,
        button(`Open step ${step}'s rollouts`, () => this.host.showInViewer({ runId, path, step }), { icon: 'go-to-file', testid: 'open-rollouts', title: `Open the rollout viewer on ${name} at step ${step}` }),
        dismiss,
      ),
    );
  }

  /** A chart's log-scale toggle: remembered in the panel's state, drawn again from the lines it has. */
  private setLogY(metric: string, on: boolean): void {
    const others = (this.state.logY ?? []).filter((m) => m !== metric);
    this.state.logY = on ? [...others, metric] : others;
    this.saveState();
    const chart = metric === EVAL_CHART_KEY ? this.evalChart : this.charts.get(metric);
    if (!chart) return;
    chart.setLogY(on);
    this.drawQueue.markDirty(chart);
  }

  private zoom(metric: string, range: XRange | null): void {
    if (range) this.zooms.set(metric, range);
    else this.zooms.delete(metric);
    this.fetchAll();
  }

  /** Gives the evaluation chart the shown runs' evaluations when they changed. */
  private renderEvalChart(): void {
    const runs = this.visibleRuns().map(({ summary, stepPhases }) => ({ runId: summary.id, name: summary.name, colour: this.drawnColourOf(summary.id), evaluations: summary.evaluations, phases: stepPhases }));
    const key = JSON.stringify(runs);
    if (key === this.evalChartFor) return;
    this.evalChartFor = key;
    this.evalChartShown = this.evalChart.update(runs);
    if (this.evalChartShown) this.drawQueue.markDirty(this.evalChart);
    this.toolEffectShown = this.toolEffectChart.update(runs);
    if (this.toolEffectShown) this.drawQueue.markDirty(this.toolEffectChart);
  }

  private renderCharts(): void {
    const specs = this.specs();
    const metrics = specs.map((c) => c.key);
    for (const [metric, chart] of this.charts) {
      if (!metrics.includes(metric)) {
        this.drawQueue.remove(chart);
        chart.destroy();
        this.charts.delete(metric);
        this.drawnFrom.delete(metric);
        this.zooms.delete(metric);
      }
    }
    // The held-out accuracy is the run's result: the evaluation chart comes right after the train
    // reward, on the first row beside it (first, when the reward is not shown). It was after the
    // reward's components and acc/mean too, the fourth card, on the second row of a wide panel.
    // The tool effect follows it: beside the accuracy, what the tools did to it (issue 43).
    const rewardAt = metrics.findIndex((m) => EVAL_BESIDE.includes(m));
    const evalCards = [...(this.evalChartShown ? [this.evalChart.element] : []), ...(this.toolEffectShown ? [this.toolEffectChart.element] : [])];
    if (!this.evalChartShown) this.evalChart.element.remove();
    if (!this.toolEffectShown) this.toolEffectChart.element.remove();
    const evalAt = evalCards.length > 0 ? rewardAt + 1 : -1;
    evalCards.forEach((card, i) => {
      if (this.chartGrid.children[evalAt + i] !== card) this.chartGrid.insertBefore(card, this.chartGrid.children[evalAt + i] ?? null);
    });
    const runs = this.visibleRuns();
    this.chartGrid.classList.toggle('empty', metrics.length === 0);
    // A chart waits while a shown run still owes it an answer for its axis and range: the first
    // picture does not gain runs one by one, a metric just chosen waits for its data, and after a
    // switch of x axis or a zoom no chart draws the old lines under the new axis. Other answers
    // still owed (new rows, another smoothing) leave the chart as it is until they come. A run
    // whose answer for the current question is complete owes nothing (a failed one is left out).
    const owing = runs.filter((run) => run.answered !== this.question(run));
    const hadCharts = this.charts.size > 0;
    const showRaw = this.state.showRaw !== false;
    const xAxis = this.state.xAxis;
    for (const [position, spec] of specs.entries()) {
      const metric = spec.key;
      let chart = this.charts.get(metric);
      if (!chart) {
        chart = new MetricChart(
          metric,
          (name, base64) => this.host.saveFile(`${name.replace(/[^A-Za-z0-9._-]+/g, '_')}.png`, 'image/png', base64),
          (name, range) => this.zoom(name, range),
          (name, runId, x) => void this.pick(name, runId, x),
          (name, on) => this.setLogY(name, on),
        );
        chart.setLogY(this.state.logY?.includes(metric) ?? false);
        this.charts.set(metric, chart);
        this.drawQueue.add(chart);
      }
      // The metrics the card draws (a group's members), for the bench and the tests.
      chart.element.dataset.members = JSON.stringify(spec.members);
      // In the chosen order; a card already in place is not moved (moving one reconnects its buttons).
      const at = evalAt >= 0 && position >= evalAt ? position + evalCards.length : position;
      if (this.chartGrid.children[at] !== chart.element) this.chartGrid.insertBefore(chart.element, this.chartGrid.children[at] ?? null);
      chart.describe(xAxis);
      const zoom = this.zooms.get(metric) ?? null;
      const answered = (run: RunData) =>
        spec.members.every((m) => {
          const line = run.series.get(m);
          return line?.axis === xAxis && line.range?.min === zoom?.min && line.range?.max === zoom?.max;
        });
      if (owing.some((run) => !answered(run))) continue;
      const ready = runs.filter(answered);
      const from = JSON.stringify([ready.map((r) => [r.summary.id, spec.members.map((m) => r.series.get(m)?.stamp), this.drawnColourOf(r.summary.id)]), xAxis, zoom, showRaw]);
      if (this.drawnFrom.get(metric) === from) continue;
      this.drawnFrom.set(metric, from);
      const series: RunSeries[] = ready.flatMap((run) =>
        spec.members.flatMap((member, i): RunSeries[] => {
          const data = run.series.get(member)?.series;
          const label = spec.labels?.[i];
          const line = {
            raw: data ? points(data.raw) : [],
            smoothed: data?.smoothed ? points(data.smoothed) : null,
            stats: data?.stats ?? null,
            // A group marks the stage changes once per run.
            phases: i === 0 ? (run.shape?.phases ?? []) : [],
          };
          if (label === undefined) return [{ ...line, runId: run.summary.id, name: run.summary.name, colour: this.drawnColourOf(run.summary.id) }];
          // A run that does not log a member (a tool it never called) has no line for it in a group.
          if (line.stats === null) return [];
          // A group's line per member: the run's colour (one colour per run on every chart), the member's dash.
          return [{
            ...line,
            runId: `${run.summary.id}${SERIES_SEPARATOR}${member}`,
            name: ready.length > 1 ? `${run.summary.name} · ${label}` : label,
            colour: this.drawnColourOf(run.summary.id),
            dash: memberDash(label, i),
          }];
        }),
      );
      chart.update(series, xAxis, zoom, showRaw);
      // Where a run's line goes on from sampled lines (the host still reads its file): for the tests and the bench.
      const previews = ready.flatMap((run) => (run.shape?.preview ? [[run.summary.id, run.shape.preview.after] as const] : []));
      if (previews.length > 0) chart.element.dataset.previewAfter = JSON.stringify(Object.fromEntries(previews));
      else delete chart.element.dataset.previewAfter;
      this.drawQueue.markDirty(chart);
    }
    if (!hadCharts && this.charts.size > 0) this.measureLinePoints();
  }

  private renderEvaluations(): void {
    const runs = this.visibleRuns().filter((r) => r.summary.evaluations.length > 0);
    const key = JSON.stringify(runs.map((r) => [r.summary.name, r.summary.evaluations]));
    if (key === this.evaluationsFor) return;
    this.evaluationsFor = key;
    if (runs.length === 0) {
      replaceChildren(this.evalPanel, h('h2', null, 'Evaluations'), h('p', { class: 'muted' }, 'No evaluations yet. The trainer writes them before and after training (eval lines in metrics.jsonl, run.json "evaluations", results.json or eval/*.json).'));
      return;
    }
    replaceChildren(this.evalPanel, h('h2', null, 'Evaluations'), ...runs.map((run) => evaluationTable(run.summary.name, run.summary.evaluations)));
  }

  /** The evaluation summary of the shown runs: asked again when their evaluations change. */
  private async renderSummary(): Promise<void> {
    const runs = this.visibleRuns().map((r) => r.summary).filter((s) => s.evaluations.length > 0);
    const key = JSON.stringify(runs.map((r) => [r.id, r.name, r.group ?? null, r.evaluations, r.rolloutSteps]));
    if (key === this.summaryFor) return;
    this.summaryFor = key;
    let summaries: SummaryRun[];
    try {
      summaries = await Promise.all(runs.map(async (r) => ({ id: r.id, name: r.name, group: r.group ?? null, evaluations: r.evaluations, summary: await this.host.request(EvalSummaryRequest, { runId: r.id }) })));
    } catch (err) {
      this.host.reportError(err);
      return;
    }
    if (key !== this.summaryFor) return; // the shown runs changed while this was asked
    const view = evalSummaryView(summaries, (target) => {
      const run = this.runs.get(target.runId)?.summary;
      if (!run) return;
      const { runId, key: evalKey, arm, gold, answer, finding } = target;
      this.host.showInViewer({ runId, path: run.path, step: 0, evals: { key: evalKey, arm, ...(gold !== undefined && answer !== undefined ? { gold, answer } : {}), ...(finding ? { finding } : {}) } });
    });
    replaceChildren(this.summaryPanel, view);
  }

  /** The findings table of the shown runs that log the scanners: their latest step's counts (the last rows read again when rows are added) and latest evaluation's. */
  private async renderFindings(): Promise<void> {
    const runs = this.visibleRuns().map((r) => r.summary).filter((s) => logsScans(s.metricNames, s.evaluations));
    const key = JSON.stringify(runs.map((r) => [r.id, r.name, r.metricRows, r.evaluations]));
    if (key === this.findingsFor) return;
    this.findingsFor = key;
    let rows: FindingsRun[];
    try {
      rows = await Promise.all(runs.map(async (r) => {
        // The last rows are enough: every RL step logs every scanner (0 when none fired).
        const from = Math.max(0, r.metricRows - FINDINGS_ROWS);
        const table = r.metricNames.some((n) => SCAN_METRICS.includes(n)) ? (await this.host.request(MetricRowsRequest, { runId: r.id, from, columns: [...SCAN_METRICS] })).table : null;
        const evaluation = latestEvalCounts(r.evaluations);
        // The evaluation's episodes, when it kept them task by task (its set has its label).
        const sets = evaluation ? (await this.host.request(EvalSetsRequest, { runId: r.id })).sets : [];
        const key = sets.find((s) => s.label === evaluation?.label)?.key ?? null;
        return { id: r.id, name: r.name, step: table ? latestStepCounts(table) : null, evaluation: evaluation ? { ...evaluation, key } : null };
      }));
    } catch (err) {
      this.host.reportError(err);
      return;
    }
    if (key !== this.findingsFor) return; // the shown runs changed while this was asked
    replaceChildren(this.findingsPanel, findingsTable(rows, (target) => void this.openFinding(target)));
  }

  /** Opens the viewer on one finding's rollouts: a step's (the nearest with a rollouts file), or a kept evaluation's episodes in the tools arm (the arm that calls). */
  private async openFinding(target: FindingTarget): Promise<void> {
    const { runId, finding } = target;
    const run = this.runs.get(runId)?.summary;
    if (!run) return;
    if ('evalKey' in target) {
      this.host.showInViewer({ runId, path: run.path, step: 0, evals: { key: target.evalKey, arm: 'tools', finding } });
      return;
    }
    try {
      const steps = (await this.host.request(RolloutStepsRequest, { runId })).steps.map((s) => s.step);
      const at = nearestStep(steps, target.step);
      if (at !== null) this.host.showInViewer({ runId, path: run.path, step: at, finding });
    } catch (err) {
      this.host.reportError(err);
    }
  }

  /** When two or more runs are shown: the run-config keys whose values differ, a column per run. */
  private async renderConfigDiff(): Promise<void> {
    const runs = this.visibleRuns().map((r) => r.summary);
    const key = JSON.stringify(runs.map((r) => [r.id, r.name, r.startedAt, this.configsMissing ? [r.updatedAt, r.metricRows] : null]));
    if (key === this.configsFor) return;
    this.configsFor = key;
    if (runs.length < 2) {
      this.configPanel.hidden = true;
      replaceChildren(this.configPanel);
      return;
    }
    let configs: RunConfigEntry[];
    try {
      configs = (await this.host.request(RunConfigsRequest, { runIds: runs.map((r) => r.id) })).configs;
    } catch (err) {
      this.host.reportError(err);
      return;
    }
    if (this.configsFor !== key) return; // the shown runs changed while this was asked
    this.configsMissing = configs.some((c) => c.config === null);
    replaceChildren(this.configPanel, ...configDiffView(runs, configs));
    this.configPanel.hidden = false;
  }

  private togglePicker(): void {
    this.picker.hidden = !this.picker.hidden;
    if (!this.picker.hidden) this.renderPicker();
  }

  private renderPicker(): void {
    const selected = new Set(this.selectedMetrics());
    const groups = [...groupByPrefix(this.allMetricNames())].map(([prefix, names]) =>
      h('fieldset', { class: 'metric-group' }, h('legend', null, prefix), ...names.map((name) => {
        const box = h('input', { type: 'checkbox', value: name, checked: selected.has(name), 'data-testid': 'metric-option' });
        box.addEventListener('change', () => {
          const current = new Set(this.selectedMetrics());
          if (box.checked) current.add(name);
          else current.delete(name);
          const order = [...defaultMetrics(this.allMetricNames(), this.metricFacts()), ...this.allMetricNames()];
          this.state.metrics = [...new Set(order)].filter((m) => current.has(m));
          this.saveState();
          this.render();
        });
        const aliases = aliasesOf(name);
        return h('label', { class: 'metric-option', ...(aliases.length > 0 ? { title: `veRL runs log it as ${aliases.join(', ')}` } : {}) }, box, name);
      })),
    );
    replaceChildren(this.picker, h('div', { class: 'picker-actions' }, this.pickerSearch, button('Defaults', () => { this.state.metrics = null; this.saveState(); this.render(); }, { secondary: true }), button('Close', () => this.togglePicker(), { secondary: true })), h('div', { class: 'metric-groups' }, ...groups));
    this.filterPicker();
  }

  /** Shows the metric options whose name holds every word typed (any order, any case); a group with none left hides. */
  private filterPicker(): void {
    const words = this.pickerSearch.value.toLowerCase().split(/\s+/).filter((w) => w !== '');
    this.picker.querySelectorAll<HTMLElement>('.metric-group').forEach((group) => {
      let shown = 0;
      group.querySelectorAll<HTMLElement>('.metric-option').forEach((option) => {
        const name = option.querySelector('input')?.value.toLowerCase() ?? '';
        option.hidden = !words.every((w) => name.includes(w));
        if (!option.hidden) shown++;
      });
      group.hidden = shown === 0;
    });
  }

  /** Every row of the shown metrics, fetched for the export only (the charts never hold them). */
  private async exportCsv(): Promise<void> {
    const metrics = this.selectedMetrics();
    try {
      const tables = await Promise.all(
        this.visibleRuns().map(async (run) => {
          // The seconds per step come too: without a time field the wall clock is summed from them.
          const logged = new Set(run.summary.metricNames);
          const asked = metrics.map((m) => loggedName(m, logged) ?? m);
          const reply = await this.host.request(MetricRowsRequest, { runId: run.summary.id, from: 0, columns: [...asked, ...STEP_SECONDS_METRICS] });
          // Columns under the names the dashboard shows (a veRL run's critic/score/mean is its reward/mean column).
          const columns = Object.fromEntries(Object.entries(reply.table.columns).map(([name, values]) => [metrics.includes(canonicalMetric(name)) ? canonicalMetric(name) : name, values]));
          return { name: run.summary.name, table: { ...reply.table, columns } };
        }),
      );
      const bytes = new TextEncoder().encode(toCsv(tables, metrics));
      let binary = '';
      for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      this.host.saveFile('metrics.csv', 'text/csv', btoa(binary));
    } catch (err) {
      this.host.reportError(err);
    }
  }

  private saveState(): void {
    this.host.setState(this.state);
  }
}

/** Longer values are cut in the table (the whole value is the cell's tooltip). */
const CONFIG_VALUE_CHARS = 48;

/** The config diff's heading, table and notes; every value goes in as text (configs hold user and model text). */
function configDiffView(runs: RunSummary[], configs: RunConfigEntry[]): HTMLElement[] {
  const byId = new Map(configs.map((c) => [c.runId, c]));
  const withConfig = runs.filter((r) => byId.get(r.id)?.config);
  const missing = runs.filter((r) => !byId.get(r.id)?.config).map((r) => h('p', { class: 'muted', 'data-testid': 'config-missing' }, `${r.name}: ${byId.get(r.id)?.problem ?? 'no config'}`));
  const heading = h('h2', null, 'Config differences');
  if (withConfig.length < 2) return [heading, ...missing, h('p', { class: 'muted' }, 'Fewer than two of the shown runs have a config.json to compare.')];
  const rows = configDiff(withConfig.map((r) => byId.get(r.id)?.config ?? {}));
  if (rows.length === 0) return [heading, h('p', { class: 'muted', 'data-testid': 'config-same' }, `The ${withConfig.length} runs' configs are the same.`), ...missing];
  const table = h(
    'table',
    { 'data-testid': 'config-diff-table' },
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'key'), ...withConfig.map((r) => h('th', { scope: 'col', title: r.path }, r.name)))),
    h(
      'tbody',
      null,
      ...rows.map((row) =>
        h(
          'tr',
          { 'data-key': row.key },
          // A long key path may wrap after its dots, and only there.
          h('th', { scope: 'row', class: 'config-key', title: row.key }, ...row.key.split(/(?<=\.)/).flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), part]))),
          ...row.values.map((v, i) => {
            // A step budget: what ran beside what was asked (a stage may end before its budget).
            const ran = stepsRan(row.key, withConfig[i]);
            const where = ran?.from === 'run.json' ? "run.json's final state" : 'its metrics, while it runs';
            const ranNote = ran === null ? null : h('span', { class: 'muted', 'data-testid': 'config-ran', 'data-from': ran.from, title: `steps this run ran (${where}), beside what its config asked${ran.timeCap ? '; a time cap stopped this stage' : ''}` }, ` · ran ${ran.steps}${ran.timeCap ? ' (time cap)' : ''}`);
            return v === null ? h('td', { class: 'muted', title: 'not in this run\'s config' }, '—', ranNote) : h('td', { class: 'config-value', title: v }, v.length > CONFIG_VALUE_CHARS ? `${v.slice(0, CONFIG_VALUE_CHARS - 1)}…` : v, ranNote);
          }),
        ),
      ),
    ),
  );
  return [heading, h('p', { class: 'muted' }, `${rows.length} key${rows.length === 1 ? '' : 's'} differ (from each run's config.json)`), table, ...missing];
}

/** Between a run's id and a member's name in a group chart's line ids (neither holds it). */
const SERIES_SEPARATOR = '\u0000';
/** A group chart's member lines (first, second, … member): solid, dashed, dotted, dash-dot, long dash, dash-dot-dot. */
const MEMBER_DASHES: number[][] = [[], [6, 3], [2, 2], [8, 3, 2, 3], [12, 4], [8, 3, 2, 3, 2, 3]];

/** An error class keeps its dash whichever classes are shown (E1 solid, … E6 the sixth); other members go by position. */
function memberDash(label: string, index: number): number[] {
  const errorClass = /^E([1-6])$/.exec(label)?.[1];
  const at = errorClass ? Number(errorClass) - 1 : index;
  return MEMBER_DASHES[at % MEMBER_DASHES.length] ?? [];
}

/** The evaluation chart's key in the state's log-scale list (no metric is named so). */
const EVAL_CHART_KEY = 'eval-chart';

/** The train charts the evaluation chart follows. */
const EVAL_BESIDE = ['reward/mean', 'critic/score/mean'];

const EVAL_COLUMNS: { key: string; title: string }[] = [
  { key: 'eval/acc_tools', title: 'acc (tools)' },
  { key: 'eval/acc_no_tools', title: 'acc (no tools)' },
  { key: 'eval/tool_call_rate', title: 'call rate' },
  { key: 'eval/call_on_target_rate', title: 'on target' },
  { key: TOOL_EFFECT, title: 'tool effect' },
  { key: 'eval/n', title: 'n' },
];

/** Training rows the findings table reads back from a run's end to find its latest step with the scanners' counts. */
const FINDINGS_ROWS = 20;

/** Columns shown only for a run that has them in some evaluation (a counterfactual replay's, issue 43): other runs' tables stay as they were. */
const IF_LOGGED = new Set(['eval/call_on_target_rate', TOOL_EFFECT]);

function evaluationTable(runName: string, evaluations: EvalResult[]): HTMLElement {
  const known = new Set(EVAL_COLUMNS.map((c) => c.key));
  const columns = EVAL_COLUMNS.filter((c) => !IF_LOGGED.has(c.key) || evaluations.some((e) => e.metrics[c.key] !== undefined));
  const head = h('thead', null, h('tr', null, h('th', null, 'label'), h('th', null, 'step'), ...columns.map((c) => h('th', null, c.title)), h('th', { title: 'accuracy with tools minus without' }, 'Δ tools')));
  const rows = evaluations.map((e) => {
    const withTools = e.metrics['eval/acc_tools'];
    const without = e.metrics['eval/acc_no_tools'];
    const delta = withTools !== undefined && without !== undefined ? withTools - without : null;
    const others = Object.entries(e.metrics).filter(([k]) => !known.has(k));
    return h(
      'tr',
      { title: `${e.source}${others.length ? '\n' + others.map(([k, v]) => `${k} = ${formatNumber(v)}`).join('\n') : ''}` },
      h('td', null, e.label),
      h('td', null, e.step ?? '–'),
      ...columns.map((c) => h('td', { class: 'num', ...intervalTitle(e, c.key) }, formatNumber(e.metrics[c.key] ?? null))),
      h('td', { class: `num ${delta === null ? '' : delta >= 0 ? 'good' : 'bad'}` }, delta === null ? '–' : `${delta >= 0 ? '+' : ''}${formatNumber(delta)}`),
    );
  });
  // A table wider than the side column scrolls in its own box (.table-scroll) rather than being cut at the edge.
  return h('section', { class: 'eval-run', 'data-testid': 'eval-table' }, h('h3', null, runName), h('div', { class: 'table-scroll' }, h('table', null, head, h('tbody', null, ...rows))));
}

/** An accuracy cell's tooltip: its 95 % Wilson interval over the evaluation's tasks (eval-series.ts); the tool effect's, the interval the evaluation reports. */
function intervalTitle(e: EvalResult, key: string): { title?: string } {
  if (key === TOOL_EFFECT && e.metrics[key] !== undefined) {
    const { low, high } = effectInterval(e.metrics, e.metrics[key]);
    const changed = e.metrics['eval/answer_changed_rate'];
    const words = low === null || high === null ? 'no interval reported' : `95 % paired interval [${formatNumber(low)}, ${formatNumber(high)}]`;
    return { title: `accuracy as run − with the tools' results withheld: ${words}${changed !== undefined ? `; answers changed by withholding: ${formatNumber(changed)}` : ''}` };
  }
  const accuracy = EVAL_ACCURACY_METRICS.find((m) => m.metric === key);
  const value = e.metrics[key];
  if (!accuracy || value === undefined) return {};
  const { n, low, high } = accuracyInterval(e.metrics, value, accuracy.correct);
  return low === null || high === null ? {} : { title: `95 % Wilson interval [${formatNumber(low)}, ${formatNumber(high)}] over ${n} tasks` };
}

startPanel(async (host, root) => {
  await new Dashboard(host, root).start();
});
