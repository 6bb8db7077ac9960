/**
 * Pieces every chart layout shares: "nice" axis ticks, tick-label formatting, the title and the
 * legend. The title and legend are marks with no band owner: they sit above the plot, outside
 * every band, and the checker holds them to that.
 */
import { MIN_FONT_SIZE } from './difficulty.js';
import { placeText, labelWidth, type TextStyle } from './place-text.js';
import type { Layer } from './scene.js';
import { rect } from './svg.js';
import { lineInk } from './text-metrics.js';

export interface AxisTicks {
  step: number;
  max: number;
  values: number[];
  decimals: number;
}

/** Ticks from 0 to at least `max`, about `target` of them, on a 1–2–2.5–5 × 10^k step. */
export function niceTicks(max: number, target: number): AxisTicks {
  if (!(max > 0)) throw new Error(`axis maximum must be positive, got ${max}`);
  const raw = max / Math.max(1, target);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].map((f) => f * power).find((s) => s >= raw) ?? 10 * power);
  const count = Math.ceil(max / step - 1e-9);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) + (Math.round(step / power) === 2.5 && step < 10 ? 1 : 0);
  const values = Array.from({ length: count + 1 }, (_, i) => Number((i * step).toFixed(decimals)));
  return { step, max: count * step, values, decimals };
}

export function formatTick(value: number, decimals: number): string {
  return value.toFixed(decimals);
}

export function lineHeight(fontSize: number): number {
  const ink = lineInk(fontSize);
  return Math.ceil(ink.bottom - ink.top);
}

export interface Block {
  layers: Layer[];
  height: number;
}

/** A centred bold title whose ink top is at `top`. */
export function titleBlock(title: string, fontSize: number, width: number, top: number, colour: string): Block {
  const style: TextStyle = { fontSize, weight: 'bold' };
  const t = placeText(title, style, { x: width / 2, y: top, h: 'center', v: 'top' });
  return { layers: [{ name: `title "${title}"`, owners: {}, draw: (fill) => [t.draw(fill ?? colour)] }], height: lineHeight(fontSize) + Math.round(fontSize * 0.5) };
}

export function titleFits(title: string, fontSize: number, width: number): boolean {
  return labelWidth(title, { fontSize, weight: 'bold' }) <= width;
}

/**
 * Legend: a swatch and a label per series, packed into centred rows within `width`. Each entry
 * is one mark (swatch and label together). Returns null when even one entry cannot fit a row.
 */
export function legendBlock(series: readonly string[], colours: readonly string[], fontSize: number, left: number, width: number, top: number, textColour: string): Block | null {
  const style: TextStyle = { fontSize };
  const swatch = Math.round(fontSize * 0.8);
  const gap = Math.round(fontSize * 0.4);
  const spacing = Math.round(fontSize * 1.2);
  const entries = series.map((name) => ({ name, width: swatch + gap + Math.ceil(labelWidth(name, style)) }));
  if (entries.some((e) => e.width > width)) return null;
  const rows: { name: string; width: number; index: number }[][] = [];
  entries.forEach((e, index) => {
    const row = rows[rows.length - 1];
    const used = row ? row.reduce((a, r) => a + r.width, 0) + spacing * row.length : 0;
    if (row && used + e.width <= width) row.push({ ...e, index });
    else rows.push([{ ...e, index }]);
  });
  const rowH = lineHeight(fontSize) + 2;
  const layers: Layer[] = [];
  rows.forEach((row, r) => {
    const total = row.reduce((a, e) => a + e.width, 0) + spacing * (row.length - 1);
    let x = Math.round(left + (width - total) / 2);
    const y = top + r * rowH;
    for (const e of row) {
      const colour = colours[e.index % colours.length] as string;
      const sy = Math.round(y + (rowH - swatch) / 2);
      const sx = x;
      const t = placeText(e.name, style, { x: x + swatch + gap, y, h: 'left', v: 'top' });
      layers.push({ name: `legend "${e.name}"`, owners: {}, draw: (fill) => [rect(sx, sy, swatch, swatch, fill ?? colour), t.draw(fill ?? textColour)] });
      x += e.width + spacing;
    }
  });
  return { layers, height: rows.length * rowH + Math.round(fontSize * 0.5) };
}

/** Where every category chart starts: its size class, margin, value-label style, and the title placed at the top. */
export interface ChartFrame {
  tiny: boolean;
  margin: number;
  valueStyle: TextStyle;
  layers: Layer[];
  /** The first free row below the title. */
  top: number;
}

export function chartFrame(title: string | null | undefined, width: number, height: number, fontSize: number, textColour: string): ChartFrame {
  const tiny = width < 260 || height < 200;
  const margin = tiny ? 3 : Math.max(4, Math.round(fontSize * 0.6));
  const valueStyle: TextStyle = { fontSize: Math.max(MIN_FONT_SIZE, fontSize * 0.85) };
  const layers: Layer[] = [];
  let top = margin;
  if (title && !tiny && titleFits(title, fontSize * 1.2, width - 2 * margin)) {
    const t = titleBlock(title, fontSize * 1.2, width, top, textColour);
    layers.push(...t.layers);
    top += t.height;
  }
  return { tiny, margin, valueStyle, layers, top };
}
