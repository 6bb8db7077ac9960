/**
 * One metric's line chart (Chart.js): a line per run, optional EMA smoothing with the raw values
 * drawn faintly behind (hidden, not dropped, when the dashboard's "show raw" is off), min/max/last in the tooltip, drag across the plot to zoom into a range of
 * x (double-click or the reset button to zoom out), tick labels in one notation per axis, and a
 * PNG export painted on the theme's background.
 *
 * The lines arrive downsampled by the host (metrics/series: about one point per pixel, each
 * bucket's min and max kept), so Chart.js's own decimation is not used: it would decimate again
 * what is already at the chart's resolution, and LTTB would drop the spikes the host kept.
 * `update()` only records what to draw; the canvas is painted by `draw()`, which the dashboard's
 * DrawQueue calls when the chart is on screen. The card records how many points each run has in
 * all (`data-points`), how many the canvas drew (`data-drawn`), how often it was painted
 * (`data-draws`) and the stage changes (`data-phases`), which the tests and the bench read.
 *
 * A click on the plot picks the curve under the pointer (of the shown lines that reach the clicked
 * x, the one passing nearest the pointer; nearest-step.ts) and tells `onPick` its run and x; the dashboard answers with `showPick`, a line under the chart
 * that offers that step's rollouts. The click does not navigate at once: a double-click zooms out,
 * and its first click must not take the page away.
 */
import {
  Chart,
  Legend,
  LinearScale,
  LineController,
  LogarithmicScale,
  LineElement,
  PointElement,
  Tooltip,
  type ChartDataset,
  type Plugin,
  type TooltipItem,
} from 'chart.js';
import { button, formatNumber, h } from '../shared/dom.js';
import { themeColours } from '../shared/theme.js';
import { withAlpha } from '../shared/run-colours.js';
import { formatDurationTicks, formatLogTicks, formatTicks, tickLabeller } from './axis-ticks.js';
import { attachDragZoom } from './drag-zoom.js';
import { curveUnderPointer } from './nearest-step.js';
import type { Drawable } from './draw-queue.js';
import { formatDuration, type Point, type SeriesStats, type XAxis } from './series.js';

Chart.register(LineController, LineElement, PointElement, LinearScale, LogarithmicScale, Legend, Tooltip);

export interface RunSeries {
  runId: string;
  name: string;
  colour: string;
  /** The points to draw (downsampled by the host). */
  raw: Point[];
  smoothed: Point[] | null;
  /** Over every point of the run's series, not only those drawn. */
  stats: SeriesStats | null;
  /** Where the run moved to another stage (SFT → RL), drawn as a dashed line in the run's colour. */
  phases: { x: number; stage: string }[];
  /** The line's dash pattern (a group chart tells runs apart by it); solid without. */
  dash?: number[];
}

export interface XRange {
  min: number;
  max: number;
}

interface TaggedDataset extends ChartDataset<'line', Point[]> {
  runId: string;
  /** The raw values behind a smoothed line. */
  isRaw: boolean;
  /** raw: behind a smoothed line; smoothed: the EMA; line: the raw values without smoothing. */
  kind: 'raw' | 'smoothed' | 'line';
}

/** Fills the canvas with the theme background before drawing, so an exported PNG is readable. */
export const background: Plugin<'line'> = {
  id: 'vistoolBackground',
  beforeDraw(chart) {
    const { ctx, width, height } = chart;
    ctx.save();
    ctx.fillStyle = themeColours().background;
    ctx.fillRect(0, 0, width, height);
    ctx.restore();
  },
};

export interface PhaseMark {
  x: number;
  stage: string;
  colour: string;
}

/** A label's place: its left edge, width and text, in canvas pixels. */
export interface LabelBox {
  x: number;
  width: number;
  text: string;
}

/**
 * The row of each stage label, so none overlaps another: labels from left to right, each on the
 * first row whose last label ends `gap` pixels before it. The same text at the same x (two runs
 * entering RL at one step) is drawn once: its row is null. Pure.
 */
export function labelRows(boxes: readonly LabelBox[], gap = 4): (number | null)[] {
  const order = boxes.map((box, i) => ({ box, i })).sort((a, b) => a.box.x - b.box.x);
  const rowEnds: number[] = [];
  const rows: (number | null)[] = boxes.map(() => null);
  const placed: { box: LabelBox; row: number }[] = [];
  for (const { box, i } of order) {
    if (placed.some((p) => p.box.text === box.text && Math.abs(p.box.x - box.x) < 1)) continue;
    let row = rowEnds.findIndex((end) => end + gap <= box.x);
    if (row < 0) row = rowEnds.length;
    rowEnds[row] = box.x + box.width;
    rows[i] = row;
    placed.push({ box, row });
  }
  return rows;
}

/**
 * A dashed vertical line where a run enters a new stage, with the stage's name at the top; names
 * that would overlap (two runs a few seconds apart on the wall-time axis) go on rows below.
 * `placed` hears where the names went (for the tests).
 */
export function phaseMarks(marks: () => PhaseMark[], placed: (labels: (LabelBox & { row: number })[]) => void = () => {}): Plugin<'line'> {
  return {
    id: 'vistoolPhaseMarks',
    afterDatasetsDraw(chart) {
      const { ctx, chartArea, scales } = chart;
      const x = scales.x;
      if (!x) return;
      ctx.save();
      ctx.setLineDash([4, 3]);
      ctx.lineWidth = 1;
      ctx.font = '10px sans-serif';
      ctx.textBaseline = 'top';
      const shown = marks()
        .map((mark) => ({ mark, px: x.getPixelForValue(mark.x) }))
        .filter(({ px }) => Number.isFinite(px) && px >= chartArea.left && px <= chartArea.right);
      const boxes = shown.map(({ mark, px }) => ({ x: px + 3, width: ctx.measureText(mark.stage).width, text: mark.stage }));
      const rows = labelRows(boxes);
      shown.forEach(({ mark, px }, i) => {
        ctx.strokeStyle = mark.colour;
        ctx.fillStyle = mark.colour;
        ctx.beginPath();
        ctx.moveTo(px, chartArea.top);
        ctx.lineTo(px, chartArea.bottom);
        ctx.stroke();
        const row = rows[i];
        if (row !== null && row !== undefined) ctx.fillText(mark.stage, px + 3, chartArea.top + 2 + row * 12);
      });
      placed(boxes.flatMap((box, i) => (rows[i] === null || rows[i] === undefined ? [] : [{ ...box, row: rows[i] as number }])));
      ctx.restore();
    },
  };
}

export class MetricChart implements Drawable {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly statsLine: HTMLElement;
  private readonly actions: HTMLElement;
  /** Made at the first zoom: a card per chart, each with a hidden button, made the dashboard's first render longer. */
  private resetZoom: HTMLElement | null = null;
  private readonly pickLine: HTMLElement;
  private chart: Chart<'line', Point[]> | null = null;
  private stats = new Map<string, SeriesStats>();
  private xAxis: XAxis = 'step';
  private yRange: { min: number; max: number } | null = null;
  private marks: PhaseMark[] = [];
  private pending: { series: RunSeries[]; xAxis: XAxis; zoom: XRange | null; showRaw: boolean } | null = null;
  private zoom: XRange | null = null;
  private draws = 0;
  /** A log-scale y axis (the dashboard remembers it per chart); the last update, to draw again on a switch. */
  private logY = false;
  private last: MetricChart['pending'] = null;
  private readonly logButton: HTMLElement;
  private readonly logNote: HTMLElement;

  /**
   * `onZoom` hears a range the user dragged out (null: zoom out); the dashboard fetches that
   * range at full resolution and calls `update` with it.
   */
  constructor(
    readonly metric: string,
    private readonly onExportPng: (metric: string, base64: string) => void,
    private readonly onZoom: (metric: string, range: XRange | null) => void,
    private readonly onPick: (metric: string, runId: string, x: number) => void = () => {},
    private readonly onLogY: (metric: string, on: boolean) => void = () => {},
  ) {
    this.canvas = h('canvas', { role: 'img', 'aria-label': `${metric} by step` });
    this.statsLine = h('div', { class: 'chart-stats muted' });
    this.pickLine = h('div', { class: 'chart-pick', 'data-testid': 'chart-pick', hidden: true });
    this.logButton = button('log y', () => this.onLogY(this.metric, !this.logY), { icon: 'graph-line', secondary: true, title: `Log-scale y axis for ${metric} (ticks at powers of ten; values ≤ 0 are not drawn)`, testid: 'log-y' });
    this.logButton.setAttribute('aria-pressed', 'false');
    this.logNote = h('div', { class: 'chart-log-note muted', 'data-testid': 'log-note', hidden: true });
    this.actions = h('span', { class: 'chart-actions' }, this.logButton, button('PNG', () => this.exportPng(), { icon: 'device-camera', secondary: true, title: `Save ${metric} as PNG`, testid: 'export-png' }));
    const box = h('div', { class: 'chart-box', title: 'Click a point for its step\'s rollouts; drag across the chart to zoom into a range; double-click to zoom out' }, this.canvas);
    this.element = h(
      'figure',
      { class: 'chart-card', 'data-metric': metric, 'data-testid': 'chart-card', 'data-y-scale': 'linear' },
      h('figcaption', { class: 'chart-title' }, h('span', { class: 'metric-name' }, metric), this.actions),
      box,
      this.statsLine,
      this.logNote,
      this.pickLine,
    );
    attachDragZoom(box, {
      onSelect: (left, right) => {
        const x = this.chart?.scales.x;
        if (!x) return;
        const min = x.getValueForPixel(left);
        const max = x.getValueForPixel(right);
        if (min !== undefined && max !== undefined && Number.isFinite(min) && Number.isFinite(max) && max > min) this.onZoom(this.metric, { min, max });
      },
      onReset: () => this.zoom && this.onZoom(this.metric, null),
      onClick: (event) => this.pick(event),
    });
  }

  /**
   * The point under a click: of the shown lines (the smoothed ones when smoothing is on, as the
   * tooltip lists them), the one whose curve passes nearest the pointer at the clicked x.
   */
  private pick(event: PointerEvent): void {
    const chart = this.chart;
    const x = chart?.scales.x;
    const y = chart?.scales.y;
    if (!chart || !x || !y) return;
    const rect = this.canvas.getBoundingClientRect();
    const pointer = { x: event.clientX - rect.left, y: event.clientY - rect.top };
    const datasets = chart.data.datasets as TaggedDataset[];
    const smoothed = this.hasSmoothed();
    const lines = datasets.map((d, i) => (!chart.isDatasetVisible(i) || (d.isRaw && smoothed) ? null : d.data.map((p) => ({ x: x.getPixelForValue(p.x), y: y.getPixelForValue(p.y) }))));
    const hit = curveUnderPointer(lines, pointer);
    const dataset = hit ? datasets[hit.line] : undefined;
    const point = hit ? dataset?.data[hit.index] : undefined;
    if (dataset && point) this.onPick(this.metric, dataset.runId, point.x);
  }

  /** What a picked point offers (null: nothing); the dashboard builds it. */
  showPick(content: HTMLElement | null): void {
    this.pickLine.hidden = content === null;
    this.pickLine.replaceChildren(...(content ? [content] : []));
  }

  /**
   * Names the chart by the chosen x axis at once (its lines follow when the host answers); lines
   * on the other axis still waiting to be painted are dropped, so they cannot name it back.
   */
  describe(xAxis: XAxis): void {
    this.canvas.setAttribute('aria-label', `${this.metric} by ${xAxis === 'step' ? 'step' : 'wall time'}`);
    if (this.pending && this.pending.xAxis !== xAxis) this.pending = null;
  }

  /** Records what to draw; the canvas changes at the next draw(). */
  update(series: RunSeries[], xAxis: XAxis, zoom: XRange | null = null, showRaw = true): void {
    this.pending = { series, xAxis, zoom, showRaw };
    this.last = this.pending;
  }

  /** Switches the y axis between linear and log; the lines last given are drawn again at the next draw(). */
  setLogY(on: boolean): void {
    if (on === this.logY) return;
    this.logY = on;
    this.logButton.setAttribute('aria-pressed', String(on));
    this.element.dataset.yScale = on ? 'logarithmic' : 'linear';
    if (!this.pending) this.pending = this.last;
  }

  /**
   * Paints what the last update() gave (nothing when it gave nothing new). The first call only
   * creates the chart, empty, and returns false: Chart.js's first chart is its most expensive
   * (its code compiles as it runs), and the data then follows in a task of its own.
   */
  draw(): boolean {
    const pending = this.pending;
    if (!pending) return true;
    if (!this.chart) {
      this.create([]);
      return false;
    }
    this.pending = null;
    const { series, xAxis, zoom, showRaw } = pending;
    this.xAxis = xAxis;
    this.zoom = zoom;
    if (zoom !== null && !this.resetZoom) {
      this.resetZoom = button('Reset zoom', () => this.onZoom(this.metric, null), { icon: 'zoom-out', secondary: true, title: `Show all of ${this.metric} again`, testid: 'reset-zoom' });
      this.actions.prepend(this.resetZoom);
    }
    if (this.resetZoom) this.resetZoom.hidden = zoom === null;
    this.element.dataset.zoom = zoom ? JSON.stringify(zoom) : '';
    this.stats = new Map(series.flatMap((s) => (s.stats ? [[s.runId, s.stats] as const] : [])));
    this.element.dataset.points = JSON.stringify(Object.fromEntries(series.map((s) => [s.name, s.stats?.count ?? 0])));
    this.describe(xAxis);
    this.statsLine.replaceChildren(
      ...series.map((s) => {
        const stats = this.stats.get(s.runId);
        return h('span', { class: 'run-stat' }, h('span', { class: 'swatch', 'data-colour': s.colour }), `${s.name}: `, stats ? `last ${formatNumber(stats.last)} · min ${formatNumber(stats.min)} · max ${formatNumber(stats.max)} · n=${stats.count}` : 'no data');
      }),
    );
    this.statsLine.querySelectorAll<HTMLElement>('.swatch').forEach((swatch) => (swatch.style.backgroundColor = swatch.dataset.colour ?? ''));

    this.fixFlatRange(series);
    const positive = (points: Point[]) => (this.logY ? points.filter((p) => p.y > 0) : points);
    const skipped = this.logY ? series.map((s) => [s.name, s.raw.length - positive(s.raw).length] as const).filter(([, n]) => n > 0) : [];
    this.logNote.hidden = skipped.length === 0;
    this.logNote.textContent = skipped.length === 0 ? '' : `Log scale: not drawn, as ≤ 0: ${skipped.map(([name, n]) => `${name} ${n} point${n === 1 ? '' : 's'}`).join(' · ')}.`;
    this.marks = series.flatMap((s) => s.phases.map((p) => ({ ...p, colour: s.colour })));
    this.element.dataset.phases = JSON.stringify(Object.fromEntries(series.map((s) => [s.name, s.phases])));
    const datasets: TaggedDataset[] = [];
    for (const s of series) {
      const smoothedOn = s.smoothed !== null;
      datasets.push({
        label: smoothedOn ? `${s.name} (raw)` : s.name,
        runId: s.runId,
        isRaw: smoothedOn,
        kind: smoothedOn ? 'raw' : 'line',
        data: positive(s.raw),
        borderColor: smoothedOn ? withAlpha(s.colour, 0.25) : s.colour,
        backgroundColor: s.colour,
        borderWidth: smoothedOn ? 1 : 1.5,
        borderDash: s.dash ?? [],
        // A line needs two points: a series of one (a run's first step) is drawn as a dot.
        pointRadius: s.raw.length === 1 ? 3 : 0,
        pointHoverRadius: 3,
        indexAxis: 'x',
        // Hidden, not left out: the toggle brings it back without asking the host again.
        hidden: smoothedOn && !showRaw,
      });
      if (s.smoothed) datasets.push({ label: s.name, runId: s.runId, isRaw: false, kind: 'smoothed', data: positive(s.smoothed), borderColor: s.colour, backgroundColor: s.colour, borderWidth: 1.8, borderDash: s.dash ?? [], pointRadius: 0, pointHoverRadius: 3, indexAxis: 'x' });
    }
    if (this.chart) {
      this.chart.data.datasets = datasets;
      this.applyXRange(series);
      this.applyYScale();
      this.applyTheme();
      this.chart.update('none');
      // The labels the axes show, for the tests: what a reader sees under a zoom or a log scale.
      const labels = (axis: 'x' | 'y') => (this.chart?.scales[axis]?.ticks ?? []).map((t) => t.label).filter((l) => l !== '' && l !== undefined);
      this.element.dataset.ticks = JSON.stringify({ x: labels('x'), y: labels('y') });
    }
    this.element.dataset.drawn = String(Math.max(0, ...datasets.map((d) => d.data.length)));
    // What the canvas shows, line by line: each run's smoothed and raw datasets and whether each is visible.
    this.element.dataset.datasets = JSON.stringify(datasets.map((d, i) => ({ run: d.runId, kind: d.kind, points: d.data.length, visible: this.chart?.isDatasetVisible(i) ?? !d.hidden, colour: d.backgroundColor, dash: d.borderDash ?? [] })));
    this.draws += 1;
    this.element.dataset.draws = String(this.draws);
    return true;
  }

  /** The chart's plot width in CSS pixels (0 before its first draw): how many points a line needs. */
  get plotWidth(): number {
    return this.chart ? Math.round(this.chart.chartArea.right - this.chart.chartArea.left) : 0;
  }

  /**
   * A constant series (timing/step_s of a steady run) would make Chart.js zoom into floating-point
   * noise of the smoothed line; pin the axis around the value instead.
   */
  private fixFlatRange(series: RunSeries[]): void {
    const all = [...this.stats.values()];
    const min = Math.min(...all.map((s) => s.min));
    const max = Math.max(...all.map((s) => s.max));
    const flat = all.length > 0 && max - min <= 1e-9 * Math.max(1, Math.abs(max));
    const pad = Math.max(Math.abs(max) * 0.05, 1e-3);
    this.yRange = flat && series.length > 0 ? (this.logY ? (min > 0 ? { min: min / 2, max: max * 2 } : null) : { min: min - pad, max: max + pad }) : null;
    const y = this.chart?.options.scales?.y;
    if (y) {
      y.min = this.yRange?.min;
      y.max = this.yRange?.max;
    }
  }

  /** The y axis's type: log (ticks labelled at powers of ten only) or linear (round ticks inside a pinned range). */
  private applyYScale(): void {
    const scales = this.chart?.options.scales;
    const y = scales?.y;
    if (!scales || !y) return;
    const colours = themeColours();
    const ticks = this.logY
      ? { color: colours.muted, autoSkip: false, callback: tickLabeller(formatLogTicks) }
      : { color: colours.muted, maxTicksLimit: 6, includeBounds: false, callback: tickLabeller(formatTicks) };
    scales.y = { type: this.logY ? 'logarithmic' : 'linear', min: this.yRange?.min, max: this.yRange?.max, grid: { color: colours.grid }, ticks };
  }

  /**
   * The x range: the zoom's, else the data's. Steps are whole numbers, so the step axis only ticks
   * on them; and a chart whose lines all sit at one x (a veRL smoke of one step, a run's first
   * row) spans that x ± 1 step (± a minute of wall time) instead of the ±0.06 Chart.js would
   * widen it to, which labelled a one-step chart 0.94 … 1.06.
   */
  private applyXRange(series: readonly RunSeries[] = []): void {
    const x = this.chart?.options.scales?.x;
    if (!x) return;
    const xs = series.flatMap((s) => s.raw.map((p) => p.x));
    const single = this.zoom === null && xs.length > 0 && xs.every((v) => v === xs[0]) ? (xs[0] as number) : null;
    const pad = this.xAxis === 'step' ? 1 : 60;
    x.min = this.zoom?.min ?? (single === null ? undefined : single - pad);
    x.max = this.zoom?.max ?? (single === null ? undefined : single + pad);
    if (x.ticks) (x.ticks as { precision?: number }).precision = this.xAxis === 'step' ? 0 : undefined;
    // A zoomed range's ends are where the drag let go (12.37…): Chart.js would put a tick on each and
    // the shared notation would then give every label their decimals. Only the round ticks inside are labelled.
    if (x.ticks) (x.ticks as { includeBounds?: boolean }).includeBounds = this.zoom === null;
    this.element.dataset.xRange = JSON.stringify({ min: x.min ?? null, max: x.max ?? null });
  }

  /** Re-reads the theme colours (the body class changed). */
  retheme(): void {
    if (!this.chart) return;
    this.applyTheme();
    this.chart.update('none');
  }

  destroy(): void {
    this.chart?.destroy();
    this.chart = null;
    this.element.remove();
  }

  private create(datasets: TaggedDataset[]): void {
    // The theme's colours go in with the options: the constructor draws once, and a second
    // update only for the colours would double the most expensive draw of the chart.
    const colours = themeColours();
    const axisColours = { ticks: { color: colours.muted }, grid: { color: colours.grid } };
    this.chart = new Chart<'line', Point[]>(this.canvas, {
      type: 'line',
      data: { datasets },
      plugins: [background, phaseMarks(() => this.marks, (labels) => (this.element.dataset.phaseLabels = JSON.stringify(labels.map((l) => ({ ...l, x: Math.round(l.x), width: Math.round(l.width) })))))],
      options: {
        animation: false,
        parsing: false,
        normalized: true,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        scales: {
          x: {
            type: 'linear',
            min: this.zoom?.min,
            max: this.zoom?.max,
            grid: axisColours.grid,
            ticks: { ...axisColours.ticks, maxTicksLimit: 8, callback: tickLabeller((values) => (this.xAxis === 'time' ? formatDurationTicks(values) : formatTicks(values))) },
          },
          // A pinned flat range's ends (value ± 5 %) are not round numbers: only the round ticks inside are labelled.
          y: { type: 'linear', min: this.yRange?.min, max: this.yRange?.max, grid: axisColours.grid, ticks: { ...axisColours.ticks, maxTicksLimit: 6, includeBounds: false, callback: tickLabeller(formatTicks) } },
        },
        plugins: {
          legend: { display: true, labels: { color: colours.foreground, boxWidth: 10, filter: (item, data) => !(data.datasets[item.datasetIndex ?? 0] as TaggedDataset | undefined)?.isRaw } },
          tooltip: {
            filter: (item) => !(item.dataset as TaggedDataset).isRaw || !this.hasSmoothed(),
            callbacks: {
              title: (items) => (items[0] ? `${this.xAxis === 'step' ? 'step' : 'time'} ${this.formatX(items[0].parsed.x ?? 0)}` : ''),
              label: (item: TooltipItem<'line'>) => `${item.dataset.label ?? ''}: ${formatNumber(item.parsed.y)}`,
              afterLabel: (item: TooltipItem<'line'>) => {
                const stats = this.stats.get((item.dataset as TaggedDataset).runId);
                return stats ? `min ${formatNumber(stats.min)} · max ${formatNumber(stats.max)} · last ${formatNumber(stats.last)}` : '';
              },
            },
          },
        },
      },
    });
  }

  private hasSmoothed(): boolean {
    return (this.chart?.data.datasets as TaggedDataset[] | undefined)?.some((d) => d.isRaw) ?? false;
  }

  /** One x value for a tooltip: the step as a whole number, or the elapsed time. */
  private formatX(value: number): string {
    return this.xAxis === 'time' ? formatDuration(value) : String(Math.round(value));
  }

  private applyTheme(): void {
    if (!this.chart) return;
    const colours = themeColours();
    const scales = this.chart.options.scales ?? {};
    for (const key of ['x', 'y'] as const) {
      const scale = scales[key];
      if (!scale) continue;
      if (scale.ticks) scale.ticks.color = colours.muted;
      if (scale.grid) scale.grid.color = colours.grid;
      else scale.grid = { color: colours.grid };
    }
    const legend = this.chart.options.plugins?.legend;
    if (legend?.labels) legend.labels.color = colours.foreground;
  }

  private exportPng(): void {
    if (!this.chart) return;
    const url = this.chart.toBase64Image('image/png', 1);
    this.onExportPng(this.metric, url.slice(url.indexOf(',') + 1));
  }
}
