/**
 * Lays out and draws charts with a labelled x axis: vertical bars, grouped vertical bars (with a
 * legend) and line charts. Records x_values_bbox the way ReFocus derives it from tick labels
 * (helper/get_coordinates_for_chart.py): full-height bands split half-way between neighbouring
 * label centres. Here every category owns an equal integer-width slot centred on its label, so
 * the split points are the slot edges; the outer edges sit half a spacing out from the first and
 * last centres, which is exactly the plot's left and right edge. Bands run from the plot top to
 * the bottom of the tick-label zone, so each band holds its label, its bars or points and its
 * value labels; the value axis, title and legend lie outside every band.
 */
import type { BBox } from '../tools/metadata.js';
import { displayCell, type DataTable } from './data-table.js';
import { MIN_FONT_SIZE } from './difficulty.js';
import { chartFrame, formatTick, legendBlock, lineHeight, niceTicks } from './chart-parts.js';
import { BAND_INSET_PX, LayoutError } from './layout-error.js';
import { labelExtent, labelWidth, placeText, type TextStyle } from './place-text.js';
import type { Layer, Scene } from './scene.js';
import { circle, polyline, rect, type Primitive } from './svg.js';

export interface ChartColours {
  text: string;
  axis: string;
  grid: string;
  /** One per series (grouped, line) or one per bar (colourful single-series bars). */
  series: readonly string[];
  perBar: boolean;
}

export interface CategoryChartInput {
  kind: 'vbar' | 'grouped' | 'line';
  data: DataTable;
  canvas: { width: number; height: number };
  fontSize: number;
  title: string | null;
  valueAxisTitle: string | null;
  categoryAxisTitle: string | null;
  valueLabels: boolean;
  /** Rotate tick labels even when they fit flat. */
  preferRotated: boolean;
  gridLines: boolean;
  /** Bar width as a fraction of the slot (vbar) or group width (grouped). */
  barFraction: number;
  colours: ChartColours;
}

export interface ChartLayoutResult {
  scene: Scene;
  /** Whether value labels were drawn (they are dropped when they cannot fit). */
  valueLabels: boolean;
  rotation: number;
}

const ANGLES_FLAT_FIRST = [0, 45, 90];
const ANGLES_ROTATED_FIRST = [45, 90, 0];

function seriesValues(data: DataTable, row: number): number[] {
  return data.columns.slice(1).map((c, i) => {
    const cell = data.rows[row]?.[i + 1];
    if (c.kind !== 'number' || typeof cell !== 'number') throw new Error(`chart column '${c.name}' must be numeric`);
    return cell / 10 ** c.decimals;
  });
}

/** Where a label of each category must fit: its slot (bars, points) or its own bar (grouped). */
function valueRoom(kind: CategoryChartInput['kind'], slot: number, barW: number): number {
  return kind === 'grouped' ? barW + 1 : slot - 2 * (BAND_INSET_PX + 1);
}

function groupedBarWidth(slot: number, seriesCount: number, barFraction: number): number {
  const groupW = Math.max(seriesCount * 2, Math.round(slot * Math.max(0.6, barFraction + 0.15)) - 2 * (BAND_INSET_PX + 1));
  return Math.floor(groupW / seriesCount);
}

/** Where one chart's categories go: the plot's frame as attempt() laid it out. */
interface CategoryPlot {
  input: CategoryChartInput;
  /** The font size attempt() tries (a line's width follows it). */
  fs: number;
  labels: string[];
  series: string[];
  slot: number;
  plotLeft: number;
  plotTop: number;
  plotBottom: number;
  zoneBottom: number;
  labelsTop: number;
  tickLen: number;
  /** The tick labels' style, at the rotation chosen. */
  rotated: TextStyle;
  valueStyle: TextStyle;
  groupedBarW: number;
  pointR: number;
  yOf(value: number): number;
}

/** Each category's band, tick label, tick mark, and its bar, bars or points with their value labels; a line chart's lines. */
function categoryMarks(plot: CategoryPlot): { bands: Record<string, BBox>; marks: Layer[]; valueMarks: Layer[]; tickMarks: Primitive[]; lines: Primitive[] } {
  const { input, fs, labels, series, slot, plotLeft, plotTop, plotBottom, zoneBottom, labelsTop, tickLen, rotated, valueStyle, groupedBarW, pointR, yOf } = plot;
  const { data, colours, kind } = input;
  const bands: Record<string, BBox> = {};
  const marks: Layer[] = [];
  const valueMarks: Layer[] = [];
  const tickMarks: Primitive[] = [];
  const linePoints: [number, number][][] = series.map(() => []);
  labels.forEach((label, i) => {
    const x1 = plotLeft + i * slot;
    const cx = x1 + slot / 2;
    bands[label] = { x1, y1: plotTop, x2: x1 + slot, y2: zoneBottom };
    const t = placeText(label, rotated, { x: cx, y: labelsTop, h: 'center', v: 'top' });
    marks.push({ name: `x tick label "${label}"`, owners: { x_values: label }, draw: (fill) => [t.draw(fill ?? colours.text)] });
    tickMarks.push(rect(Math.floor(cx), plotBottom + 1, 1, tickLen, colours.axis));
    const vs = seriesValues(data, i);
    if (kind === 'vbar') {
      const barW = Math.min(slot - 2 * (BAND_INSET_PX + 1), Math.max(2, Math.round(slot * input.barFraction)));
      const bx = x1 + Math.floor((slot - barW) / 2);
      const by = Math.min(yOf(vs[0] as number), plotBottom - 1);
      const colour = colours.series[(colours.perBar ? i : 0) % colours.series.length] as string;
      marks.push({ name: `bar "${label}"`, owners: { x_values: label }, within: 'plot_bbox', draw: (fill) => [rect(bx, by, barW, plotBottom - by, fill ?? colour)] });
      const text = displayCell(data, i, 1);
      const v = placeText(text, valueStyle, { x: cx, y: by - 2, h: 'center', v: 'bottom' });
      valueMarks.push({ name: `value label "${text}" of "${label}"`, owners: { x_values: label }, within: 'plot_bbox', draw: (fill) => [v.draw(fill ?? colours.text)] });
    } else if (kind === 'grouped') {
      const barW = groupedBarW;
      const gx = x1 + Math.floor((slot - barW * series.length) / 2);
      const bars = vs.map((v, s) => ({ x: gx + s * barW, y: Math.min(yOf(v), plotBottom - 1), colour: colours.series[s % colours.series.length] as string }));
      marks.push({ name: `bars of "${label}"`, owners: { x_values: label }, within: 'plot_bbox', draw: (fill) => bars.map((b) => rect(b.x, b.y, barW, plotBottom - b.y, fill ?? b.colour)) });
      vs.forEach((_, s) => {
        const text = displayCell(data, i, s + 1);
        const b = bars[s] as { x: number; y: number };
        const v = placeText(text, valueStyle, { x: b.x + barW / 2, y: b.y - 2, h: 'center', v: 'bottom' });
        valueMarks.push({ name: `value label "${text}" of "${label}"`, owners: { x_values: label }, within: 'plot_bbox', draw: (fill) => [v.draw(fill ?? colours.text)] });
      });
    } else {
      const r = pointR;
      const points = vs.map((v, s) => ({ x: cx, y: yOf(v), colour: colours.series[s % colours.series.length] as string }));
      points.forEach((p, s) => (linePoints[s] as [number, number][]).push([p.x, p.y]));
      marks.push({ name: `points of "${label}"`, owners: { x_values: label }, within: 'figure_bbox', draw: (fill) => points.map((p) => circle(p.x, p.y, r, fill ?? p.colour)) });
      if (series.length === 1) {
        const text = displayCell(data, i, 1);
        const v = placeText(text, valueStyle, { x: cx, y: (points[0] as { y: number }).y - r - 2, h: 'center', v: 'bottom' });
        valueMarks.push({ name: `value label "${text}" of "${label}"`, owners: { x_values: label }, within: 'plot_bbox', draw: (fill) => [v.draw(fill ?? colours.text)] });
      }
    }
  });
  const lines = kind === 'line' ? linePoints.map((pts, s) => polyline(pts, colours.series[s % colours.series.length] as string, Math.max(1.5, fs * 0.14))) : [];
  return { bands, marks, valueMarks, tickMarks, lines };
}

function attempt(input: CategoryChartInput, fs: number, showValues: boolean, angles: readonly number[]): ChartLayoutResult | string {
  const { data, canvas, colours, kind } = input;
  const { width: W, height: H } = canvas;
  const labels = data.rows.map((r) => String(r[0]));
  const series = data.columns.slice(1).map((c) => c.name);
  const n = labels.length;
  const frame = chartFrame(input.title, W, H, fs, colours.text);
  const { tiny, margin, valueStyle, layers } = frame;
  const tickStyle: TextStyle = { fontSize: fs };
  const grid: Primitive[] = [];

  let top = frame.top;
  if (series.length > 1) {
    const legend = legendBlock(series, colours.series, fs * 0.9, margin, W - 2 * margin, top, colours.text);
    if (!legend) return `the legend does not fit ${W - 2 * margin} px`;
    layers.push(...legend.layers);
    top += legend.height;
  }

  // Value axis: ticks from 0 to a nice maximum. A tiny chart that prints its values drops the
  // axis altogether (as many published charts do) to give the bars the room.
  const values = data.rows.flatMap((_, r) => seriesValues(data, r));
  const vmax = Math.max(...values);
  const valueAxis = !(tiny && showValues);
  const axisTitle = input.valueAxisTitle && !tiny && valueAxis ? input.valueAxisTitle : null;
  const axisTitleW = axisTitle ? lineHeight(fs) + 4 : 0;
  const tickLen = tiny ? 2 : 4;
  const widestTick = Math.ceil(Math.max(...[5, 3, 2, 1].map((t) => { const k = niceTicks(vmax, t); return Math.max(...k.values.map((v) => labelWidth(formatTick(v, k.decimals), tickStyle))); })));
  const plotLeft = valueAxis ? margin + axisTitleW + widestTick + 2 + tickLen : margin + 1;
  const slot = Math.floor((W - margin - plotLeft) / n);
  const minSlot = kind === 'grouped' ? series.length * 3 + 2 * (BAND_INSET_PX + 1) : 2 * (BAND_INSET_PX + 2) + 2;
  if (slot < minSlot) return `${n} categories need ${n * minSlot} px of plot width, only ${W - margin - plotLeft} px are left`;
  const plotRight = plotLeft + n * slot;
  const groupedBarW = groupedBarWidth(slot, series.length, input.barFraction);
  if (showValues) {
    const room = valueRoom(kind, slot, groupedBarW);
    const texts = data.rows.flatMap((_, r) => series.map((_, s) => displayCell(data, r, s + 1)));
    if ((kind === 'line' && series.length > 1) || texts.some((t) => labelWidth(t, valueStyle) > room)) return attempt(input, fs, false, angles);
  }

  // Tick-label rotation: the first angle (in preference order) at which every label fits its slot.
  const room = slot - 2 * (BAND_INSET_PX + 1);
  const angle = angles.find((a) => labels.every((l) => labelWidth(l, { ...tickStyle, rotate: a }) <= room));
  if (angle === undefined) return `tick labels do not fit ${slot} px slots even when rotated`;
  const rotated: TextStyle = { ...tickStyle, rotate: angle };
  const zoneH = Math.ceil(Math.max(...labels.map((l) => { const e = labelExtent(l, rotated); return e.y2 - e.y1; })));
  const catTitle = input.categoryAxisTitle && !tiny ? input.categoryAxisTitle : null;
  const catTitleH = catTitle ? lineHeight(fs) + 2 : 0;
  const labelGap = tiny ? 2 : 3;
  // The bands end a few pixels below the lowest label ink, so the tools' inset never clips it.
  const zoneBottom = H - margin - catTitleH;
  const labelsTop = zoneBottom - (BAND_INSET_PX + 1) - zoneH;
  const plotBottom = labelsTop - labelGap - tickLen;
  // Half a line of air, so the top value tick's label stays clear of the title and legend.
  const plotTop = top + (valueAxis ? Math.ceil(lineHeight(fs) / 2) : 0);
  const plotH = plotBottom - plotTop;
  if (plotH < Math.max(24, fs * 3)) return `the plot would be ${plotH} px tall`;

  // Vertical scale, leaving room above the tallest bar for its value label.
  const valueH = lineHeight(valueStyle.fontSize);
  const pointR = Math.max(2, Math.round(fs * 0.22));
  const markerRoom = kind === 'line' ? pointR + 2 : 0;
  const headroom = (showValues ? valueH + 2 : 0) + markerRoom + BAND_INSET_PX + 1;
  // The fewest-ticks-first search stops at the densest tick set whose labels do not collide.
  let ticks = niceTicks(vmax, 1);
  for (const target of tiny ? [3, 2, 1] : [6, 5, 4, 3, 2, 1]) {
    const candidate = niceTicks(vmax, target);
    const scale = Math.min(plotH / candidate.max, (plotH - headroom) / vmax);
    if (candidate.step * scale >= lineHeight(fs) + 2) { ticks = candidate; break; }
  }
  const pxPerUnit = Math.min(plotH / ticks.max, (plotH - headroom) / vmax);
  const yOf = (v: number) => plotBottom - Math.round(v * pxPerUnit);

  // Axes, ticks, grid.
  const tickLabels = ticks.values.map((v) => formatTick(v, ticks.decimals));
  for (let i = 0; i < ticks.values.length && valueAxis; i++) {
    const v = ticks.values[i] as number;
    const y = plotBottom - Math.round(v * pxPerUnit);
    if (y < plotTop) break;
    if (input.gridLines && v > 0) grid.push(rect(plotLeft, y, plotRight - plotLeft, 1, colours.grid));
    grid.push(rect(plotLeft - 1 - tickLen, y, tickLen, 1, colours.axis));
    const t = placeText(tickLabels[i] as string, tickStyle, { x: plotLeft - 1 - tickLen - 2, y: y + 0.5, h: 'right', v: 'middle' });
    layers.push({ name: `value tick "${tickLabels[i]}"`, owners: {}, draw: (fill) => [t.draw(fill ?? colours.text)] });
  }
  if (valueAxis) grid.push(rect(plotLeft - 1, plotTop, 1, plotBottom - plotTop + 1, colours.axis));
  grid.push(rect(plotLeft - 1, plotBottom, plotRight - plotLeft + 1, 1, colours.axis));
  if (axisTitle) {
    const t = placeText(axisTitle, { fontSize: fs, rotate: 90 }, { x: margin, y: (plotTop + plotBottom) / 2, h: 'left', v: 'middle' });
    if (t.box.y1 >= 0 && t.box.y2 <= H) layers.push({ name: `axis title "${axisTitle}"`, owners: {}, draw: (fill) => [t.draw(fill ?? colours.text)] });
  }
  if (catTitle) {
    const t = placeText(catTitle, { fontSize: fs }, { x: (plotLeft + plotRight) / 2, y: zoneBottom + 1, h: 'center', v: 'top' });
    layers.push({ name: `axis title "${catTitle}"`, owners: {}, draw: (fill) => [t.draw(fill ?? colours.text)] });
  }

  const { bands, marks, valueMarks, tickMarks, lines } = categoryMarks({ input, fs, labels, series, slot, plotLeft, plotTop, plotBottom, zoneBottom, labelsTop, tickLen, rotated, valueStyle, groupedBarW, pointR, yOf });
  grid.push(...tickMarks);
  return {
    scene: {
      width: W,
      height: H,
      background: '#ffffff',
      layers: [...grid, ...lines, ...marks, ...(showValues ? valueMarks : []), ...layers],
      meta: {
        unit: 'pixels',
        source: 'generator',
        figure_bbox: { x1: plotLeft, y1: plotTop, x2: plotRight, y2: zoneBottom },
        plot_bbox: { x1: plotLeft, y1: plotTop, x2: plotRight, y2: plotBottom },
        x_values_bbox: bands,
      },
    },
    valueLabels: showValues,
    rotation: angle,
  };
}

/** Lays the chart out at the largest font (≤ input.fontSize) at which it fits. */
export function layoutCategoryChart(input: CategoryChartInput): ChartLayoutResult {
  let reason = '';
  // Flat tick labels at a somewhat smaller font read better than rotated ones at full size.
  if (!input.preferRotated) {
    for (let fs = input.fontSize; fs >= Math.max(MIN_FONT_SIZE, input.fontSize * 0.6); fs -= 0.5) {
      const result = attempt(input, fs, input.valueLabels, [0]);
      if (typeof result !== 'string') return result;
    }
  }
  const angles = input.preferRotated ? ANGLES_ROTATED_FIRST : ANGLES_FLAT_FIRST;
  for (let fs = input.fontSize; fs >= MIN_FONT_SIZE; fs -= 0.5) {
    const result = attempt(input, fs, input.valueLabels, angles);
    if (typeof result !== 'string') return result;
    reason = result;
  }
  throw new LayoutError(`a ${input.kind} chart with ${input.data.rows.length} categories does not fit ${input.canvas.width}×${input.canvas.height} px even at the smallest font (${MIN_FONT_SIZE} px): ${reason}. Use a larger --image-size or a lower --difficulty.`);
}
