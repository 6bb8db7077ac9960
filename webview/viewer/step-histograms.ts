/**
 * The step's reward and advantage distributions as two small bar charts (Chart.js), above the
 * list. A researcher sees at once whether a step's rewards are spread (signal for GRPO) or piled
 * on one value (groups dynamic sampling drops), and how wide the advantages run.
 *
 * The counts are also on the element (`data-counts`), so tests and screen readers do not depend
 * on canvas pixels; the chart's own aria-label spells them out.
 *
 * The figures, their counts and labels are there at once; the charts are painted afterwards, one
 * per animation frame, once what the viewer waits for (the first rollout of a step) is shown:
 * the page's first Chart.js chart takes tens of milliseconds, and the rollout a user opened the
 * viewer for came after it (`data-painted` says when both are).
 */
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import type { RolloutSummary } from '../../protocol/panel-protocol.js';
import { formatNumber, h } from '../shared/dom.js';
import { themeColours, watchTheme } from '../shared/theme.js';
import { histogram, type Histogram } from './groups.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

const BINS = 10;

function binLabels(hist: Histogram): string[] {
  return hist.counts.map((_, i) => `${formatNumber(hist.edges[i] ?? 0, 2)}–${formatNumber(hist.edges[i + 1] ?? 0, 2)}`);
}

function describe(name: string, hist: Histogram): string {
  if (hist.counts.length === 0) return `${name}: none recorded`;
  const parts = binLabels(hist).map((label, i) => `${label}: ${hist.counts[i]}`);
  return `${name} histogram, ${parts.join('; ')}${hist.missing ? `; ${hist.missing} without a value` : ''}`;
}

interface ChartToPaint {
  name: string;
  canvas: HTMLCanvasElement;
  hist: Histogram;
  /** Which of the theme's series colours it is drawn in. */
  colour: number;
}

export class StepHistograms {
  readonly element = h('section', { class: 'step-histograms', 'aria-label': 'This step’s distributions', 'data-testid': 'step-histograms' });
  private charts: Chart<'bar'>[] = [];
  private rollouts: readonly RolloutSummary[] = [];
  /** Bumped by every show(): charts still waiting to be painted for an older one are dropped. */
  private shown = 0;

  constructor() {
    watchTheme(() => this.show(this.rollouts));
  }

  /** Shows the step's distributions; their charts are painted once `after` has settled. */
  show(rollouts: readonly RolloutSummary[], after: Promise<unknown> = Promise.resolve()): void {
    this.rollouts = rollouts;
    const shown = ++this.shown;
    for (const chart of this.charts) chart.destroy();
    this.charts = [];
    this.element.replaceChildren();
    this.element.dataset.painted = String(rollouts.length === 0);
    if (rollouts.length === 0) return;
    const toPaint: ChartToPaint[] = [];
    for (const [name, values, colour] of [
      ['reward', rollouts.map((r) => r.reward), 0],
      ['advantage', rollouts.map((r) => r.advantage), 1],
    ] as const) {
      const hist = histogram(values, BINS);
      const canvas = h('canvas', { role: 'img', 'aria-label': describe(name, hist) }) as HTMLCanvasElement;
      const figure = h(
        'figure',
        { class: 'step-histogram', 'data-testid': `histogram-${name}`, 'data-counts': hist.counts.join(','), 'data-missing': hist.missing },
        h('figcaption', null, name, hist.missing ? h('span', { class: 'muted' }, ` · ${hist.missing} without a value`) : null),
        h('div', { class: 'step-histogram-canvas' }, canvas),
      );
      this.element.append(figure);
      if (hist.counts.length === 0) {
        figure.append(h('p', { class: 'muted' }, 'none recorded in this step'));
        continue;
      }
      toPaint.push({ name, canvas, hist, colour });
    }
    void after.catch(() => undefined).then(() => this.paint(shown, toPaint));
  }

  /** One chart per animation frame, so neither makes a long task with the other. */
  private paint(shown: number, toPaint: ChartToPaint[]): void {
    if (shown !== this.shown) return;
    const next = toPaint.shift();
    if (!next) {
      this.element.dataset.painted = 'true';
      return;
    }
    requestAnimationFrame(() => {
      if (shown !== this.shown) return;
      this.charts.push(chartOf(next));
      this.paint(shown, toPaint);
    });
  }
}

function chartOf({ name, canvas, hist, colour }: ChartToPaint): Chart<'bar'> {
  const theme = themeColours();
  return new Chart(canvas, {
    type: 'bar',
    data: { labels: binLabels(hist), datasets: [{ label: name, data: hist.counts, backgroundColor: theme.series[colour] ?? '#1a85ff', barPercentage: 1, categoryPercentage: 0.95 }] },
    options: {
      animation: false,
      maintainAspectRatio: false,
      plugins: { legend: { display: false }, tooltip: { callbacks: { title: (items) => `${name} ${items[0]?.label ?? ''}`, label: (item) => `${item.formattedValue} rollouts` } } },
      scales: {
        x: { ticks: { color: theme.muted, maxRotation: 0, autoSkip: true, maxTicksLimit: 4 }, grid: { display: false } },
        // Counts are whole numbers (precision 0), written as they are: Chart.js's own labels would build an Intl.NumberFormat, tens of ms on the page's first chart.
        y: { beginAtZero: true, ticks: { color: theme.muted, precision: 0, callback: (value) => String(value) }, grid: { color: theme.grid } },
      },
    },
  });
}
