/**
 * Lays out and draws a horizontal bar chart: category labels on the left, bars growing right,
 * the value axis at the bottom. Records y_values_bbox as full-width bands (from the left margin,
 * so the label is inside, to the right margin, so the value label is inside), split half-way
 * between neighbouring label centres: each category owns an equal integer-height slot centred
 * on its label, the outer edges are half a spacing from the outer centres (the plot's top and
 * bottom). The value axis, its labels, the title and the legend lie outside every band.
 */
import type { BBox } from '../tools/metadata.js';
import { displayCell } from './data-table.js';
import { MIN_FONT_SIZE } from './difficulty.js';
import { chartFrame, formatTick, lineHeight, niceTicks } from './chart-parts.js';
import type { CategoryChartInput, ChartLayoutResult } from './category-chart-layout.js';
import { BAND_INSET_PX, LayoutError } from './layout-error.js';
import { labelWidth, placeText, type TextStyle } from './place-text.js';
import type { Layer, Scene } from './scene.js';
import { rect, type Primitive } from './svg.js';

export type HBarInput = Omit<CategoryChartInput, 'kind' | 'preferRotated'>;

function attempt(input: HBarInput, fs: number): ChartLayoutResult | string {
  const { data, canvas, colours } = input;
  const { width: W, height: H } = canvas;
  const labels = data.rows.map((r) => String(r[0]));
  const n = labels.length;
  const frame = chartFrame(input.title, W, H, fs, colours.text);
  const { tiny, margin, valueStyle, layers } = frame;
  const style: TextStyle = { fontSize: fs };
  const grid: Primitive[] = [];

  const top = frame.top;
  const values = data.rows.map((r, i) => {
    const column = data.columns[1];
    const cell = r[1];
    if (column?.kind !== 'number' || typeof cell !== 'number') throw new Error(`horizontal bar row ${i} needs a numeric second column`);
    return cell / 10 ** column.decimals;
  });
  const vmax = Math.max(...values);
  // A tiny chart that prints its values drops the value axis, as many published charts do.
  const valueAxis = !(tiny && input.valueLabels);

  const labelW = Math.ceil(Math.max(...labels.map((l) => labelWidth(l, style))));
  if (labelW > W * 0.5) return `labels need ${labelW} px, more than half the ${W} px canvas`;
  const bandLeft = margin;
  const labelRight = bandLeft + BAND_INSET_PX + 1 + labelW;
  const tickLen = tiny ? 2 : 4;
  const plotLeft = labelRight + 3 + tickLen;
  const bandRight = W - margin;
  const valueTexts = data.rows.map((_, i) => displayCell(data, i, 1));
  const valueW = input.valueLabels ? Math.ceil(Math.max(...valueTexts.map((t) => labelWidth(t, valueStyle)))) + 3 : 0;
  const widestTick = Math.ceil(Math.max(...[5, 3, 2, 1].map((t) => { const k = niceTicks(vmax, t); return Math.max(...k.values.map((v) => labelWidth(formatTick(v, k.decimals), style))); })));
  const plotRight = bandRight - Math.max(BAND_INSET_PX + 1 + valueW, valueAxis ? Math.ceil(widestTick / 2) - margin + 1 : 0);
  const plotW = plotRight - plotLeft;
  if (plotW < Math.max(30, fs * 3)) return `the plot would be ${plotW} px wide`;

  const axisTitle = input.valueAxisTitle && !tiny && valueAxis ? input.valueAxisTitle : null;
  const axisTitleH = axisTitle ? lineHeight(fs) + 2 : 0;
  const tickZoneH = valueAxis ? tickLen + 2 + lineHeight(fs) : 0;
  const plotTop = top + Math.round(fs * 0.3);
  const slot = Math.floor((H - margin - axisTitleH - tickZoneH - plotTop) / n);
  const minSlot = lineHeight(fs) + 2 * (BAND_INSET_PX + 1);
  if (slot < minSlot) return `${n} categories need ${n * minSlot} px of plot height, only ${H - margin - axisTitleH - tickZoneH - plotTop} px are left`;
  const plotBottom = plotTop + n * slot;

  // The densest tick set whose labels keep at least a few pixels apart.
  let ticks = niceTicks(vmax, 1);
  for (const target of tiny ? [3, 2, 1] : [6, 5, 4, 3, 2, 1]) {
    const candidate = niceTicks(vmax, target);
    const scale = Math.min(plotW / candidate.max, (plotW - 1) / vmax);
    const widest = Math.max(...candidate.values.map((v) => labelWidth(formatTick(v, candidate.decimals), style)));
    if (candidate.step * scale >= widest + 4) { ticks = candidate; break; }
  }
  const tickLabels = ticks.values.map((v) => formatTick(v, ticks.decimals));
  const pxPerUnit = Math.min(plotW / ticks.max, (plotW - 1) / vmax);
  for (let i = 0; i < ticks.values.length && valueAxis; i++) {
    const v = ticks.values[i] as number;
    const x = plotLeft + Math.round(v * pxPerUnit);
    if (x > plotRight) break;
    if (input.gridLines && v > 0) grid.push(rect(x, plotTop, 1, plotBottom - plotTop, colours.grid));
    grid.push(rect(x, plotBottom + 1, 1, tickLen, colours.axis));
    const t = placeText(tickLabels[i] as string, style, { x: x + 0.5, y: plotBottom + 1 + tickLen + 2, h: 'center', v: 'top' });
    layers.push({ name: `value tick "${tickLabels[i]}"`, owners: {}, draw: (fill) => [t.draw(fill ?? colours.text)] });
  }
  grid.push(rect(plotLeft - 1, plotTop, 1, plotBottom - plotTop + 1, colours.axis));
  if (valueAxis) grid.push(rect(plotLeft - 1, plotBottom, plotRight - plotLeft + 1, 1, colours.axis));
  if (axisTitle) {
    const t = placeText(axisTitle, style, { x: (plotLeft + plotRight) / 2, y: H - margin, h: 'center', v: 'bottom' });
    layers.push({ name: `axis title "${axisTitle}"`, owners: {}, draw: (fill) => [t.draw(fill ?? colours.text)] });
  }

  const bands: Record<string, BBox> = {};
  const marks: Layer[] = [];
  const valueMarks: Layer[] = [];
  labels.forEach((label, i) => {
    const y1 = plotTop + i * slot;
    const cy = y1 + slot / 2;
    bands[label] = { x1: bandLeft, y1, x2: bandRight, y2: y1 + slot };
    const t = placeText(label, style, { x: labelRight, y: cy, h: 'right', v: 'middle' });
    marks.push({ name: `y tick label "${label}"`, owners: { y_values: label }, draw: (fill) => [t.draw(fill ?? colours.text)] });
    grid.push(rect(plotLeft - 1 - tickLen, Math.floor(cy), tickLen, 1, colours.axis));
    const barH = Math.min(slot - 2 * (BAND_INSET_PX + 1), Math.max(2, Math.round(slot * input.barFraction)));
    const by = y1 + Math.floor((slot - barH) / 2);
    const bw = Math.max(1, Math.round((values[i] as number) * pxPerUnit));
    const colour = colours.series[(colours.perBar ? i : 0) % colours.series.length] as string;
    marks.push({ name: `bar "${label}"`, owners: { y_values: label }, within: 'plot_bbox', draw: (fill) => [rect(plotLeft, by, bw, barH, fill ?? colour)] });
    const v = placeText(valueTexts[i] as string, valueStyle, { x: plotLeft + bw + 3, y: cy, h: 'left', v: 'middle' });
    valueMarks.push({ name: `value label "${valueTexts[i]}" of "${label}"`, owners: { y_values: label }, draw: (fill) => [v.draw(fill ?? colours.text)] });
  });
  const scene: Scene = {
    width: W,
    height: H,
    background: '#ffffff',
    layers: [...grid, ...marks, ...(input.valueLabels ? valueMarks : []), ...layers],
    meta: {
      unit: 'pixels',
      source: 'generator',
      figure_bbox: { x1: bandLeft, y1: plotTop, x2: bandRight, y2: plotBottom },
      plot_bbox: { x1: plotLeft, y1: plotTop, x2: plotRight, y2: plotBottom },
      y_values_bbox: bands,
    },
  };
  return { scene, valueLabels: input.valueLabels, rotation: 0 };
}

export function layoutHBarChart(input: HBarInput): ChartLayoutResult {
  let reason = '';
  for (let fs = input.fontSize; fs >= MIN_FONT_SIZE; fs -= 0.5) {
    const result = attempt(input, fs);
    if (typeof result !== 'string') return result;
    reason = result;
  }
  throw new LayoutError(`an hbar chart with ${input.data.rows.length} categories does not fit ${input.canvas.width}×${input.canvas.height} px even at the smallest font (${MIN_FONT_SIZE} px): ${reason}. Use a larger --image-size or a lower --difficulty.`);
}
