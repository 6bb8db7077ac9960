/**
 * The tool-effect chart (issue 43), beside the evaluation accuracy: each shown run's tool effect
 * (accuracy as run − with the tools' results withheld, on the same tasks; solid, circles) with its
 * 95 % interval as an error bar, and its call rate (dashed, triangles) and share of calls on target
 * (dotted, diamonds) at the same evaluations, on a fixed −1 to 1 axis so an effect of zero sits in
 * the middle and a negative one reads as such. A high call rate beside an effect whose interval
 * holds zero is the "called the tool, did not use it" pattern. The series and the honesty rule are
 * tool-effect-series.ts's; the bars, points and legend are drawn as the evaluation chart draws its
 * own (eval-chart.ts).
 *
 * Painted by the dashboard's DrawQueue. The card records what it draws (`data-series`,
 * `data-intervals`) for the tests.
 */
import { Chart, type TooltipItem } from 'chart.js';
import { formatNumber, h } from '../shared/dom.js';
import { themeColours } from '../shared/theme.js';
import { formatTicks, tickLabeller } from './axis-ticks.js';
import type { Drawable } from './draw-queue.js';
import { errorBars, type EvalDataset, evalRange, OVERFLOW_PX, type RunEvaluations, seriesLegend } from './eval-chart.js';
import type { EvalLine, EvalMark } from './eval-series.js';
import { background } from './metric-chart.js';
import { TOOL_EFFECT, TOOL_EFFECT_LINES, toolEffectLines } from './tool-effect-series.js';

const STYLES: Readonly<Record<string, { pointStyle: string; dash: number[] }>> = {
  'eval/tool_effect': { pointStyle: 'circle', dash: [] },
  'eval/tool_call_rate': { pointStyle: 'triangle', dash: [5, 4] },
  'eval/call_on_target_rate': { pointStyle: 'rectRot', dash: [2, 3] },
};

/** The title with a key to the lines drawn. */
export function toolEffectTitle(metrics: readonly string[]): string {
  const keys = TOOL_EFFECT_LINES.filter((l) => metrics.includes(l.metric)).map((l) => l.key);
  return `eval tool effect (${keys.join(', ')})`;
}

export class ToolEffectChart implements Drawable {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private chart: Chart<'line', EvalMark[]> | null = null;
  private pending: { run: RunEvaluations; lines: EvalLine[] }[] | null = null;
  private readonly title = h('span', { class: 'metric-name', 'data-testid': 'tool-effect-title' }, 'eval tool effect');

  constructor() {
    this.canvas = h('canvas', { role: 'img', 'aria-label': "Tool effect by step: accuracy as run minus accuracy with the tools' results withheld, with 95 % intervals, beside the call rate and the share of calls on target" });
    this.element = h(
      'figure',
      { class: 'chart-card eval-chart tool-effect-chart', 'data-testid': 'tool-effect-chart' },
      h('figcaption', { class: 'chart-title' }, this.title),
      h('div', { class: 'chart-box' }, this.canvas),
      h('div', { class: 'chart-stats muted' },
        "Tool effect: accuracy as run − accuracy when each call's result is withheld (the same calls, the unedited image), on the same tasks. Bars: the 95 % paired interval the evaluation reports (eval/tool_effect_lo, _hi). An interval holding 0 means the calls did not measurably change the answers, whatever the call rate."),
    );
  }

  /** Records what to draw; false when no shown run has an evaluation with a tool effect (the dashboard leaves the card out). */
  update(runs: RunEvaluations[]): boolean {
    const drawn = runs.map((run) => ({ run, lines: toolEffectLines(run.evaluations) })).filter((r) => r.lines.length > 0);
    this.pending = drawn;
    this.element.dataset.series = JSON.stringify(drawn.flatMap(({ run, lines }) => lines.map((l) => ({ run: run.name, metric: l.metric, curve: l.curve.map((p) => [p.x, p.y]), marks: l.marks.map((p) => [p.x, p.y, p.label]) }))));
    this.element.dataset.intervals = JSON.stringify(
      drawn.flatMap(({ run, lines }) => lines.filter((l) => l.metric === TOOL_EFFECT).flatMap((l) => [...l.curve, ...l.marks].map((p) => ({ run: run.name, label: p.label, x: p.x, y: p.y, n: p.n, low: p.low, high: p.high })))),
    );
    this.title.textContent = toolEffectTitle(drawn.flatMap(({ lines }) => lines.map((l) => l.metric)));
    return drawn.length > 0;
  }

  draw(): boolean {
    const pending = this.pending;
    if (!pending) return true;
    if (!this.chart) {
      this.create();
      return false;
    }
    this.pending = null;
    const datasets: EvalDataset[] = [];
    for (const { run, lines } of pending) {
      for (const line of lines) {
        const style = STYLES[line.metric] ?? { pointStyle: 'circle', dash: [] };
        const effect = line.metric === TOOL_EFFECT;
        const title = TOOL_EFFECT_LINES.find((l) => l.metric === line.metric)?.title ?? line.metric;
        const common = { series: `${run.runId}\u0000${line.metric}`, label: `${run.name} · ${title}`, borderColor: run.colour, backgroundColor: run.colour, pointStyle: style.pointStyle, pointHoverRadius: 6, clip: OVERFLOW_PX } as const;
        if (line.curve.length > 0) datasets.push({ ...common, data: line.curve, showLine: true, borderWidth: 1.8, borderDash: style.dash, pointRadius: 3 });
        if (line.marks.length > 0) datasets.push({ ...common, data: line.marks, showLine: false, pointRadius: 5, ...(effect ? {} : { backgroundColor: 'transparent', borderWidth: 2 }) });
      }
    }
    this.chart.data.datasets = datasets;
    const range = evalRange(pending.flatMap(({ lines }) => lines.flatMap((l) => [...l.curve, ...l.marks].map((p) => p.x))));
    const x = this.chart.options.scales?.x;
    if (x && range) Object.assign(x, { min: range.min, max: range.max });
    this.applyTheme();
    this.chart.update('none');
    this.element.dataset.datasets = JSON.stringify(datasets.map((d) => ({ label: d.label, line: d.showLine === true, points: d.data.length })));
    return true;
  }

  retheme(): void {
    if (!this.chart) return;
    this.applyTheme();
    this.chart.update('none');
  }

  private create(): void {
    const colours = themeColours();
    this.chart = new Chart<'line', EvalMark[]>(this.canvas, {
      type: 'line',
      data: { datasets: [] },
      plugins: [background, errorBars],
      options: {
        animation: false,
        layout: { padding: { top: OVERFLOW_PX, right: OVERFLOW_PX } },
        parsing: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'nearest', intersect: false },
        scales: {
          x: { type: 'linear', grid: { color: colours.grid }, ticks: { color: colours.muted, maxTicksLimit: 8, includeBounds: false, callback: tickLabeller(formatTicks) } },
          // An effect is a difference of two accuracies: −1 to 1, zero in the middle; the rates (0–1) share the axis.
          y: { type: 'linear', min: -1, max: 1, grid: { color: colours.grid }, ticks: { color: colours.muted, stepSize: 0.5, callback: tickLabeller(formatTicks) } },
        },
        plugins: {
          legend: seriesLegend(colours.foreground),
          tooltip: {
            callbacks: {
              title: (items) => (items[0] ? `step ${Math.round(items[0].parsed.x ?? 0)}` : ''),
              label: (item: TooltipItem<'line'>) => {
                const mark = item.raw as EvalMark;
                const interval = mark.low !== null && mark.high !== null ? ` [${formatNumber(mark.low)}, ${formatNumber(mark.high)}]${mark.n !== null ? ` over ${mark.n} tasks` : ''}` : '';
                return `${item.dataset.label ?? ''}: ${formatNumber(item.parsed.y)}${interval} (${mark.label})`;
              },
            },
          },
        },
      },
    });
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
