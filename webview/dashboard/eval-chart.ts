/**
 * The evaluation chart: each shown run's accuracy with tools (solid, circles) and without tools
 * (dashed, triangles) against the step, on a fixed 0–1 axis, each point with its 95 % Wilson
 * interval as an error bar. Lines join only the evaluations made during a phase; the evaluations
 * at a phase's edge (before, after_sft, after_rl) are marks, never joined (eval-series.ts has the
 * rule). The x axis spans the evaluations' own steps (a run evaluated only at the end of a long
 * SFT would otherwise squeeze them into the last few percent of the width), and the runs' stage
 * and SFT phase changes are marked on it as on every training chart. Points and bars at 0 and 1
 * are drawn whole (the plot does not clip them at the frame). It sits in the chart grid beside the
 * train reward and accuracy, so train and eval read side by side.
 *
 * Like MetricChart it is painted by the dashboard's DrawQueue. The card records what it draws
 * (`data-series`: per run and metric, the curve's and the marks' points) for the tests.
 */
import { Chart, type ChartData, type ChartDataset, type LegendItem, type Plugin, type TooltipItem } from 'chart.js';
import type { EvalResult } from '../../protocol/panel-protocol.js';
import { button, formatNumber, h } from '../shared/dom.js';
import { themeColours } from '../shared/theme.js';
import { formatLogTicks, formatTicks, tickLabeller } from './axis-ticks.js';
import type { Drawable } from './draw-queue.js';
import { EVAL_ACCURACY_METRICS, type EvalLine, type EvalMark, evalLines } from './eval-series.js';
import { background, type PhaseMark, phaseMarks } from './metric-chart.js';

export interface RunEvaluations {
  runId: string;
  name: string;
  colour: string;
  evaluations: readonly EvalResult[];
  /** The run's stage and SFT phase changes on the step axis (metrics/series phases). */
  phases?: readonly { x: number; stage: string }[];
}

/** The x range of the evaluations' steps, with a little room on each side so the end points are not on the frame. */
export function evalRange(steps: readonly number[]): { min: number; max: number } | null {
  if (steps.length === 0) return null;
  const low = Math.min(...steps);
  const high = Math.max(...steps);
  const pad = Math.max(1, (high - low) * 0.04);
  return { min: low - pad, max: high + pad };
}

/** Overflow allowed past the plot's frame, in pixels: a point (radius 5) or a bar's cap at 0 or 1 is drawn whole. */
export const OVERFLOW_PX = 8;

/** Each point's Wilson interval as a vertical bar with caps, in its dataset's colour, under the points. */
export const errorBars: Plugin<'line'> = {
  id: 'vistoolErrorBars',
  beforeDatasetsDraw(chart) {
    const { ctx, scales } = chart;
    const x = scales.x;
    const y = scales.y;
    if (!x || !y) return;
    ctx.save();
    ctx.lineWidth = 1.2;
    chart.data.datasets.forEach((dataset, index) => {
      if (!chart.isDatasetVisible(index)) return;
      ctx.strokeStyle = String(dataset.borderColor ?? '#888');
      for (const point of dataset.data as unknown as EvalMark[]) {
        if (point.low === null || point.high === null) continue;
        const px = x.getPixelForValue(point.x);
        const top = y.getPixelForValue(point.high);
        // On a log axis an interval reaching 0 runs to the bottom of the plot.
        const bottom = point.low > 0 || y.type !== 'logarithmic' ? y.getPixelForValue(point.low) : chart.chartArea.bottom;
        ctx.beginPath();
        ctx.moveTo(px, top);
        ctx.lineTo(px, bottom);
        ctx.moveTo(px - 3, top);
        ctx.lineTo(px + 3, top);
        ctx.moveTo(px - 3, bottom);
        ctx.lineTo(px + 3, bottom);
        ctx.stroke();
      }
    });
    ctx.restore();
  },
};

export interface EvalDataset extends ChartDataset<'line', EvalMark[]> {
  /** The run × metric it belongs to: the legend names each once, though a curve and its marks are two datasets. */
  series: string;
}

const TITLES = new Map<string, string>(EVAL_ACCURACY_METRICS.map((m) => [m.metric, m.title]));

/** How each kind of line is drawn, in the order the title names them. */
const LINE_KEYS: readonly [string, string][] = [
  ['eval/acc_tools', 'with tools: solid ●'],
  ['eval/acc_no_tools', 'without tools: dashed ▲'],
  ['perception/acc', 'a curriculum\'s perception: dotted ◆'],
];

/** The chart's title with a key to the lines it draws only: no perception key without a curriculum's perception line. */
export function evalChartTitle(metrics: readonly string[]): string {
  const keys = LINE_KEYS.filter(([metric]) => metrics.includes(metric)).map(([, words]) => words);
  return keys.length === 0 ? 'eval accuracy' : `eval accuracy (${keys.join(', ')})`;
}

export class EvalChart implements Drawable {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private chart: Chart<'line', EvalMark[]> | null = null;
  private pending: { runs: { run: RunEvaluations; lines: EvalLine[] }[] } | null = null;
  private marks: PhaseMark[] = [];
  private readonly title = h('span', { class: 'metric-name', 'data-testid': 'eval-chart-title' }, 'eval accuracy');
  private logY = false;
  private last: EvalChart['pending'] = null;
  private readonly logButton: HTMLElement;
  private readonly logNote = h('div', { class: 'chart-log-note muted', 'data-testid': 'log-note', hidden: true });

  /** `onLogY` hears the "log y" toggle (the dashboard remembers it, as for every chart). */
  constructor(private readonly onLogY: (on: boolean) => void = () => {}) {
    this.logButton = button('log y', () => this.onLogY(!this.logY), { icon: 'graph-line', secondary: true, title: 'Log-scale y axis for the evaluation accuracy (ticks at powers of ten; accuracies of 0 are not drawn)', testid: 'log-y' });
    this.logButton.setAttribute('aria-pressed', 'false');
    this.canvas = h('canvas', { role: 'img', 'aria-label': 'Evaluation accuracy with and without tools by step' });
    this.element = h(
      'figure',
      { class: 'chart-card eval-chart', 'data-testid': 'eval-chart', 'data-y-scale': 'linear' },
      h('figcaption', { class: 'chart-title' }, this.title, h('span', { class: 'chart-actions' }, this.logButton)),
      h('div', { class: 'chart-box' }, this.canvas),
      this.logNote,
      h('div', { class: 'chart-stats muted' }, 'Bars: 95 % Wilson intervals over the evaluation\'s tasks. Lines join evaluations made during a phase; before, after_sft and after_rl (one per phase) are marks, not joined.'),
    );
  }

  /**
   * Records what to draw; false when no run has an accuracy evaluation with a step (then the
   * dashboard leaves the card out).
   */
  update(runs: RunEvaluations[]): boolean {
    const drawn = runs.map((run) => ({ run, lines: evalLines(run.evaluations) })).filter((r) => r.lines.length > 0);
    this.pending = { runs: drawn };
    this.last = this.pending;
    this.element.dataset.series = JSON.stringify(
      drawn.flatMap(({ run, lines }) => lines.map((l) => ({ run: run.name, metric: l.metric, curve: l.curve.map((p) => [p.x, p.y]), marks: l.marks.map((p) => [p.x, p.y, p.label]) }))),
    );
    // What the bars and the axis are, for the tests: each point's interval, the x range, the marks.
    this.element.dataset.intervals = JSON.stringify(
      drawn.flatMap(({ run, lines }) => lines.flatMap((l) => [...l.curve, ...l.marks].map((p) => ({ run: run.name, metric: l.metric, label: p.label, x: p.x, y: p.y, n: p.n, low: p.low, high: p.high })))),
    );
    this.title.textContent = evalChartTitle(drawn.flatMap(({ lines }) => lines.map((l) => l.metric)));
    const range = evalRange(drawn.flatMap(({ lines }) => lines.flatMap((l) => [...l.curve, ...l.marks].map((p) => p.x))));
    this.element.dataset.range = JSON.stringify(range);
    this.marks = drawn.flatMap(({ run }) => (run.phases ?? []).filter((p) => range !== null && p.x >= range.min && p.x <= range.max).map((p) => ({ ...p, colour: run.colour })));
    this.element.dataset.phases = JSON.stringify(this.marks.map(({ x, stage }) => ({ x, stage })));
    return drawn.length > 0;
  }

  /** Switches the y axis between linear (0–1) and log; the evaluations last given are drawn again at the next draw(). */
  setLogY(on: boolean): void {
    if (on === this.logY) return;
    this.logY = on;
    this.logButton.setAttribute('aria-pressed', String(on));
    this.element.dataset.yScale = on ? 'logarithmic' : 'linear';
    if (!this.pending) this.pending = this.last;
  }

  /** Like MetricChart.draw: the first call only creates the chart, empty (the page's first Chart.js chart is its most expensive). */
  draw(): boolean {
    const pending = this.pending;
    if (!pending) return true;
    if (!this.chart) {
      this.create([]);
      return false;
    }
    this.pending = null;
    const datasets: EvalDataset[] = [];
    let skipped = 0;
    const shown = (points: EvalMark[]) => {
      if (!this.logY) return points;
      const positive = points.filter((p) => p.y > 0);
      skipped += points.length - positive.length;
      return positive;
    };
    for (const { run, lines: all } of pending.runs) {
      const lines = all.map((l) => ({ ...l, curve: shown(l.curve), marks: shown(l.marks) }));
      for (const line of lines) {
        const tools = line.metric === 'eval/acc_tools';
        const perception = line.metric === 'perception/acc';
        const title = TITLES.get(line.metric) ?? line.metric;
        const common = { series: `${run.runId}\u0000${line.metric}`, borderColor: run.colour, backgroundColor: run.colour, pointStyle: tools ? 'circle' : perception ? 'rectRot' : 'triangle', pointHoverRadius: 6 } as const;
        if (line.curve.length > 0) datasets.push({ ...common, label: `${run.name} · ${title}`, data: line.curve, showLine: true, borderWidth: 1.8, borderDash: tools ? [] : perception ? [2, 3] : [5, 4], pointRadius: 3, clip: OVERFLOW_PX });
        if (line.marks.length > 0) datasets.push({ ...common, label: `${run.name} · ${title}`, data: line.marks, showLine: false, pointRadius: 5, clip: OVERFLOW_PX, ...(tools ? {} : { backgroundColor: 'transparent', borderWidth: 2 }) });
      }
    }
    this.chart.data.datasets = datasets;
    this.logNote.hidden = skipped === 0;
    this.logNote.textContent = skipped === 0 ? '' : `Log scale: ${skipped} evaluation${skipped === 1 ? '' : 's'} at accuracy 0 not drawn.`;
    this.applyYScale(datasets);
    const range = JSON.parse(this.element.dataset.range ?? 'null') as { min: number; max: number } | null;
    const x = this.chart.options.scales?.x;
    if (x && range) Object.assign(x, { min: range.min, max: range.max });
    this.applyTheme();
    this.chart.update('none');
    this.element.dataset.datasets = JSON.stringify(datasets.map((d) => ({ label: d.label, line: d.showLine === true, points: d.data.length })));
    this.element.dataset.ticks = JSON.stringify({ y: (this.chart.scales.y?.ticks ?? []).map((t) => t.label).filter((l) => l !== '' && l !== undefined) });
    return true;
  }

  retheme(): void {
    if (!this.chart) return;
    this.applyTheme();
    this.chart.update('none');
  }

  private create(datasets: EvalDataset[]): void {
    const colours = themeColours();
    this.chart = new Chart<'line', EvalMark[]>(this.canvas, {
      type: 'line',
      data: { datasets },
      plugins: [background, errorBars, phaseMarks(() => this.marks)],
      options: {
        animation: false,
        // Room for what is drawn past the frame at 0 and 1 (OVERFLOW_PX).
        layout: { padding: { top: OVERFLOW_PX, right: OVERFLOW_PX } },
        parsing: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'nearest', intersect: false },
        scales: {
          // The padded ends are not steps: no tick is put on them (includeBounds), only on round steps inside.
          x: { type: 'linear', grid: { color: colours.grid }, ticks: { color: colours.muted, maxTicksLimit: 8, includeBounds: false, callback: tickLabeller(formatTicks) } },
          // Accuracy is a fraction: the whole 0–1 range, so a small difference is not drawn as a large one.
          // Labels by formatTicks too: Chart.js's own would build an Intl.NumberFormat, tens of ms on a page's first chart.
          y: { type: 'linear', min: 0, max: 1, grid: { color: colours.grid }, ticks: { color: colours.muted, maxTicksLimit: 6, callback: tickLabeller(formatTicks) } },
        },
        plugins: {
          legend: seriesLegend(colours.foreground),
          tooltip: {
            callbacks: {
              title: (items) => (items[0] ? `step ${Math.round(items[0].parsed.x ?? 0)}` : ''),
              label: (item: TooltipItem<'line'>) => {
                const mark = item.raw as EvalMark;
                const interval = mark.low !== null && mark.high !== null ? ` [${formatNumber(mark.low)}, ${formatNumber(mark.high)}] of ${mark.n}` : '';
                return `${item.dataset.label ?? ''}: ${formatNumber(item.parsed.y)}${interval} (${mark.label}${(item.dataset as EvalDataset).showLine ? '' : ', a phase edge'})`;
              },
            },
          },
        },
      },
    });
  }

  /** Linear: the whole 0–1 range. Log: from the power of ten at or below the smallest point or interval end drawn, to 1, labelled at powers of ten. */
  private applyYScale(datasets: EvalDataset[]): void {
    const scales = this.chart?.options.scales;
    if (!scales) return;
    const colours = themeColours();
    if (!this.logY) {
      scales.y = { type: 'linear', min: 0, max: 1, grid: { color: colours.grid }, ticks: { color: colours.muted, maxTicksLimit: 6, callback: tickLabeller(formatTicks) } };
      return;
    }
    const lows = datasets.flatMap((d) => d.data.flatMap((p) => [p.y, ...(p.low !== null && p.low > 0 ? [p.low] : [])]));
    const smallest = Math.min(0.1, ...lows.filter((v) => v > 0));
    scales.y = { type: 'logarithmic', min: 10 ** Math.floor(Math.log10(smallest)), max: 1, grid: { color: colours.grid }, ticks: { color: colours.muted, autoSkip: false, callback: tickLabeller(formatLogTicks) } };
  }

  private applyTheme(): void {
    if (!this.chart) return;
    const colours = themeColours();
    for (const key of ['x', 'y'] as const) {
      const scale = this.chart.options.scales?.[key];
      if (!scale) continue;
      if (scale.ticks) scale.ticks.color = colours.muted;
      if (scale.grid) scale.grid.color = colours.grid;
    }
    const legend = this.chart.options.plugins?.legend;
    if (legend?.labels) legend.labels.color = colours.foreground;
  }
}

/** One legend entry per run and metric: the first of its datasets (the curve when there is one). */
export function seriesLegend(foreground: string) {
  return {
    display: true,
    labels: {
      color: foreground,
      boxWidth: 8,
      usePointStyle: true,
      filter: (item: LegendItem, data: ChartData) => {
        const sets = data.datasets as EvalDataset[];
        const index = item.datasetIndex ?? 0;
        return sets.findIndex((d) => d.series === sets[index]?.series) === index;
      },
    },
  };
}
