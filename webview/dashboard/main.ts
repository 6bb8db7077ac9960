/**
 * The training dashboard: one chart per chosen metric with every open run overlaid, EMA
 * smoothing, x by step or wall time, live updates as metrics.jsonl grows, PNG and CSV export,
 * a warning when tool use fades, and the runs' evaluations (with and without tools) beside the
 * curves. Data comes only from the host (metrics/rows); only UI choices are persisted.
 */
import type { PanelHost } from '../host.js';
import { type MetricTable, MetricRowsRequest, PANEL_TITLES, ReadyCommand, type RunSummary, RunsChangedNotification, RunsListRequest, type EvalResult } from '../../protocol/panel-protocol.js';
import { button, formatNumber, h, replaceChildren } from '../shared/dom.js';
import { hasFields, isNumberInRange, isStringArray } from '../../protocol/guards.js';
import { panelHeader, startPanel } from '../shared/shell.js';
import { themeColours, watchTheme } from '../shared/theme.js';
import { defaultMetrics, groupByPrefix } from './default-metrics.js';
import { MetricChart, type RunSeries } from './metric-chart.js';
import { appendRows, emptyTable, metricPoints, phaseChanges, smooth, toCsv, wallClock, type XAxis } from './series.js';
import { COUNTER_SETTING, detectToolFading } from './tool-fading.js';

interface DashboardState {
  /** null: the defaults for whatever the runs log. */
  metrics: string[] | null;
  hiddenRuns: string[];
  smoothing: number;
  xAxis: XAxis;
}

function isDashboardState(value: unknown): value is DashboardState {
  return hasFields(value, {
    metrics: (v) => v === null || isStringArray(v),
    hiddenRuns: isStringArray,
    smoothing: (v) => isNumberInRange(v, 0, 0.99),
    xAxis: (v) => v === 'step' || v === 'time',
  });
}

interface RunData {
  summary: RunSummary;
  table: MetricTable;
  fetching: boolean;
}

class Dashboard {
  private state: DashboardState;
  private readonly runs = new Map<string, RunData>();
  private readonly charts = new Map<string, MetricChart>();
  private readonly chartGrid = h('section', { class: 'chart-grid', 'aria-label': 'Metric charts' });
  private readonly banners = h('div', { class: 'banners' });
  private readonly evalPanel = h('aside', { class: 'eval-panel', 'aria-label': 'Evaluations' });
  private readonly runToggles = h('div', { class: 'run-toggles', role: 'group', 'aria-label': 'Runs' });
  private readonly picker = h('div', { class: 'metric-picker', hidden: true });
  /** Kept across re-renders (a new metrics line re-renders the picker), so typing is never lost. */
  private readonly pickerSearch = h('input', { type: 'search', class: 'metric-search', placeholder: 'Search metrics', 'aria-label': 'Search metrics', 'data-testid': 'metric-search' });
  private readonly smoothingValue = h('output', { class: 'smoothing-value' });
  private readonly smoothingInput = h('input', { type: 'range', min: '0', max: '0.99', step: '0.01', 'aria-label': 'EMA smoothing', 'data-testid': 'smoothing' });
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
      this.render();
    });
    this.xAxisSelect.value = this.state.xAxis;
    this.xAxisSelect.addEventListener('change', () => {
      this.state.xAxis = this.xAxisSelect.value === 'time' ? 'time' : 'step';
      this.saveState();
      this.render();
    });
    const header = panelHeader(
      PANEL_TITLES.dashboard,
      this.host,
      this.runToggles,
      h('label', { class: 'control' }, 'x ', this.xAxisSelect),
      h('label', { class: 'control' }, 'smoothing ', this.smoothingInput, this.smoothingValue),
      button('Metrics', () => this.togglePicker(), { icon: 'list-filter', secondary: true, testid: 'metrics-button' }),
      button('CSV', () => this.exportCsv(), { icon: 'export', secondary: true, title: 'Export the shown metrics of the shown runs as CSV', testid: 'export-csv' }),
    );
    replaceChildren(this.root, header, this.picker, this.banners, h('main', { class: 'dashboard-body' }, this.chartGrid, this.evalPanel));
    watchTheme(() => {
      for (const chart of this.charts.values()) chart.retheme();
      this.render();
    });
    this.host.onNotification(RunsChangedNotification, ({ runs }) => this.receive(runs));
    const { runs } = await this.host.request(RunsListRequest, {});
    this.receive(runs);
    this.host.command(ReadyCommand, { panel: 'dashboard' });
  }

  /** A new summary snapshot: fetch whatever rows each run has that we lack. */
  private receive(summaries: RunSummary[]): void {
    for (const summary of summaries) {
      const known = this.runs.get(summary.id);
      if (known) known.summary = summary;
      else this.runs.set(summary.id, { summary, table: emptyTable(), fetching: false });
    }
    for (const id of [...this.runs.keys()]) if (!summaries.some((s) => s.id === id)) this.runs.delete(id);
    for (const run of this.runs.values()) void this.fetchRows(run);
    this.render();
  }

  private async fetchRows(run: RunData): Promise<void> {
    if (run.fetching) return;
    const have = run.table.steps.length;
    if (run.summary.metricRows === have) return;
    run.fetching = true;
    try {
      // Fewer rows than we hold means the file was rewritten (a resumed run): start over.
      const from = run.summary.metricRows < have ? 0 : have;
      const reply = await this.host.request(MetricRowsRequest, { runId: run.summary.id, from });
      if (from === 0) run.table = emptyTable();
      if (reply.from === run.table.steps.length) appendRows(run.table, reply.table);
      run.summary = { ...run.summary, metricRows: Math.max(run.summary.metricRows, reply.total) };
    } catch (err) {
      this.host.reportError(err);
    } finally {
      run.fetching = false;
    }
    this.render();
    if (run.summary.metricRows !== run.table.steps.length) void this.fetchRows(run);
  }

  private visibleRuns(): RunData[] {
    return [...this.runs.values()].filter((r) => !this.state.hiddenRuns.includes(r.summary.id));
  }

  private allMetricNames(): string[] {
    const names = new Set<string>();
    for (const run of this.runs.values()) for (const name of Object.keys(run.table.columns)) names.add(name);
    return [...names].sort();
  }

  private selectedMetrics(): string[] {
    const available = this.allMetricNames();
    if (this.state.metrics === null) return defaultMetrics(available);
    return this.state.metrics.filter((m) => available.includes(m));
  }

  private colourOf(runId: string): string {
    const series = themeColours().series;
    const index = [...this.runs.keys()].indexOf(runId);
    return series[index % series.length] ?? '#1a85ff';
  }

  private render(): void {
    this.smoothingValue.textContent = this.state.smoothing.toFixed(2);
    this.renderRunToggles();
    this.renderBanners();
    this.renderCharts();
    this.renderEvaluations();
    if (!this.picker.hidden) this.renderPicker();
  }

  private renderRunToggles(): void {
    replaceChildren(
      this.runToggles,
      ...[...this.runs.values()].map(({ summary }) => {
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
    for (const run of this.visibleRuns()) {
      const verdict = detectToolFading(run.table.steps, run.table.columns['tool/call_rate'] ?? [], run.table.columns['reward/mean'] ?? run.table.columns['critic/score/mean'] ?? []);
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
      for (const problem of run.summary.problems) banners.push(h('div', { class: 'banner info', role: 'status' }, `${run.summary.name}: ${problem}`));
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

  private renderCharts(): void {
    const metrics = this.selectedMetrics();
    for (const [metric, chart] of this.charts) {
      if (!metrics.includes(metric)) {
        chart.destroy();
        this.charts.delete(metric);
      }
    }
    const runs = this.visibleRuns();
    const timeSourceMissing = this.state.xAxis === 'time' && runs.some((r) => r.table.steps.length > 0 && wallClock(r.table).source === null);
    this.chartGrid.classList.toggle('empty', metrics.length === 0);
    for (const metric of metrics) {
      let chart = this.charts.get(metric);
      if (!chart) {
        chart = new MetricChart(metric, (name, base64) => this.host.saveFile(`${name.replace(/[^A-Za-z0-9._-]+/g, '_')}.png`, 'image/png', base64));
        this.charts.set(metric, chart);
      }
      this.chartGrid.append(chart.element); // keeps the chosen order
      const series: RunSeries[] = runs.map((run) => {
        const raw = metricPoints(run.table, metric, this.state.xAxis);
        return { runId: run.summary.id, name: run.summary.name, colour: this.colourOf(run.summary.id), raw, smoothed: this.state.smoothing > 0 ? smooth(raw, this.state.smoothing) : null,
          phases: phaseChanges(run.table, this.state.xAxis) };
      });
      chart.update(series, this.state.xAxis);
    }
    if (timeSourceMissing) this.banners.append(h('div', { class: 'banner info' }, 'Some runs have neither a time field nor timing/step_s in metrics.jsonl, so they cannot be drawn by wall time.'));
  }

  private renderEvaluations(): void {
    const runs = this.visibleRuns().filter((r) => r.summary.evaluations.length > 0);
    if (runs.length === 0) {
      replaceChildren(this.evalPanel, h('h2', null, 'Evaluations'), h('p', { class: 'muted' }, 'No evaluations yet. The trainer writes them before and after training (eval lines in metrics.jsonl, run.json "evaluations", results.json or eval/*.json).'));
      return;
    }
    replaceChildren(this.evalPanel, h('h2', null, 'Evaluations'), ...runs.map((run) => evaluationTable(run.summary.name, run.summary.evaluations)));
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
          const order = [...defaultMetrics(this.allMetricNames()), ...this.allMetricNames()];
          this.state.metrics = [...new Set(order)].filter((m) => current.has(m));
          this.saveState();
          this.render();
        });
        return h('label', { class: 'metric-option' }, box, name);
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

  private exportCsv(): void {
    const csv = toCsv(this.visibleRuns().map((r) => ({ name: r.summary.name, table: r.table })), this.selectedMetrics());
    const bytes = new TextEncoder().encode(csv);
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    this.host.saveFile('metrics.csv', 'text/csv', btoa(binary));
  }

  private saveState(): void {
    this.host.setState(this.state);
  }
}

const EVAL_COLUMNS: { key: string; title: string }[] = [
  { key: 'eval/acc_tools', title: 'acc (tools)' },
  { key: 'eval/acc_no_tools', title: 'acc (no tools)' },
  { key: 'eval/tool_call_rate', title: 'call rate' },
  { key: 'eval/n', title: 'n' },
];

function evaluationTable(runName: string, evaluations: EvalResult[]): HTMLElement {
  const known = new Set(EVAL_COLUMNS.map((c) => c.key));
  return h(
    'section',
    { class: 'eval-run', 'data-testid': 'eval-table' },
    h('h3', null, runName),
    h(
      'table',
      null,
      h('thead', null, h('tr', null, h('th', null, 'label'), h('th', null, 'step'), ...EVAL_COLUMNS.map((c) => h('th', null, c.title)), h('th', { title: 'accuracy with tools minus without' }, 'Δ tools'))),
      h(
        'tbody',
        null,
        ...evaluations.map((e) => {
          const withTools = e.metrics['eval/acc_tools'];
          const without = e.metrics['eval/acc_no_tools'];
          const delta = withTools !== undefined && without !== undefined ? withTools - without : null;
          const others = Object.entries(e.metrics).filter(([k]) => !known.has(k));
          return h(
            'tr',
            { title: `${e.source}${others.length ? '\n' + others.map(([k, v]) => `${k} = ${formatNumber(v)}`).join('\n') : ''}` },
            h('td', null, e.label),
            h('td', null, e.step ?? '–'),
            ...EVAL_COLUMNS.map((c) => h('td', { class: 'num' }, formatNumber(e.metrics[c.key] ?? null))),
            h('td', { class: `num ${delta === null ? '' : delta >= 0 ? 'good' : 'bad'}` }, delta === null ? '–' : `${delta >= 0 ? '+' : ''}${formatNumber(delta)}`),
          );
        }),
      ),
    ),
  );
}

startPanel(async (host, root) => {
  await new Dashboard(host, root).start();
});
