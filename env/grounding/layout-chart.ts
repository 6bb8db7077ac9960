/**
 * Bar-chart layouts from text geometry and flat shapes. The bars (solid rectangles standing on a
 * common baseline, or starting from a common left edge) fix where the plot is; the tick labels
 * are the text right below the baseline (vertical bars) or left of the bars and level with
 * them (horizontal bars). Bands are full-height (or full-width) and split half-way between
 * neighbouring label centres, as ReFocus derives them. Titles, axis titles, value-axis ticks,
 * legends and value labels are never tick labels: they lie elsewhere relative to the plot.
 */
import type { RgbImage } from '../core/image.js';
import type { BBox } from '../tools/metadata.js';
import { centreX, centreY, median, overlap, splitHalfway, unionBox, type LayoutPlan, type PlannedBand } from './layout-plan.js';
import type { TextSegment } from './segments.js';
import type { FlatShape, Shapes } from './shapes.js';
import { findSlantedLabels } from './slanted-labels.js';

/** Bars of one set share this edge to within this many pixels. */
const EDGE_TOLERANCE = 1;
/** Room added outside the outermost label ink, as charts leave it (px). */
const BAND_MARGIN = 3;

export interface BarSet {
  bars: FlatShape[];
  /** The shared edge: baseline y (vertical bars) or left x (horizontal bars). */
  edge: number;
}

/** Bars are solid through and through: a table's stripe or cell fill has text holes in it. */
const MIN_BAR_FILL = 0.97;

/** Solid rectangles with no text on them (a stripe behind a table row has). */
function barCandidates(shapes: Shapes, segments: readonly TextSegment[]): FlatShape[] {
  return shapes.rectangles.filter((r) => r.fill >= MIN_BAR_FILL && !segments.some((s) => overlap(r.box.x1, r.box.x2, s.box.x1, s.box.x2) > 0 && overlap(r.box.y1, r.box.y2, s.box.y1, s.box.y2) > 0));
}

/** The largest set of side-by-side bars standing on one baseline, or null. */
export function findVerticalBars(shapes: Shapes, segments: readonly TextSegment[]): BarSet | null {
  return largestSet(barCandidates(shapes, segments), (b) => b.box.y2, (a, b) => overlap(a.box.x1, a.box.x2, b.box.x1, b.box.x2) === 0);
}

/** The largest set of stacked bars starting from one left edge, or null. */
export function findHorizontalBars(shapes: Shapes, segments: readonly TextSegment[]): BarSet | null {
  return largestSet(barCandidates(shapes, segments), (b) => b.box.x1, (a, b) => overlap(a.box.y1, a.box.y2, b.box.y1, b.box.y2) === 0);
}

function largestSet(candidates: readonly FlatShape[], edgeOf: (b: FlatShape) => number, apart: (a: FlatShape, b: FlatShape) => boolean): BarSet | null {
  let best: BarSet | null = null;
  for (const seed of candidates) {
    const edge = edgeOf(seed);
    const members: FlatShape[] = [];
    for (const c of candidates) {
      if (Math.abs(edgeOf(c) - edge) <= EDGE_TOLERANCE && members.every((m) => apart(m, c))) members.push(c);
    }
    if (members.length >= 2 && (!best || members.length > best.bars.length)) best = { bars: members, edge };
  }
  return best;
}

/**
 * Vertical bars (or any chart with categories along x): the tick labels are the first layer of
 * text below the baseline. The baseline comes from the bars, else from the lowest long
 * horizontal line with text under it.
 */
export function planVerticalBars(image: RgbImage, segments: readonly TextSegment[], shapes: Shapes): LayoutPlan | null {
  const { width, height } = image;
  const bars = findVerticalBars(shapes, segments);
  const baseline = bars?.edge ?? axisBaseline(shapes, segments);
  if (baseline === null) return null;
  const textHeight = median(segments.filter((s) => s.upright).map((s) => s.textHeight));
  const yAxis = shapes.verticalLines.filter((l) => Math.abs(l.box.y2 - baseline) <= 2 || Math.abs(l.box.y2 - 1 - baseline) <= 2).sort((a, b) => a.box.x1 - b.box.x1)[0];
  const zone = { x1: yAxis ? yAxis.box.x2 : 0, y1: baseline + 1, x2: width, y2: height };
  const slanted = findSlantedLabels(image, zone, shapes.background, textHeight);
  const below = slanted ?? segments.filter((s) => s.box.y1 >= baseline - 1);
  if (below.length === 0) return null;
  const firstTop = Math.min(...below.map((s) => s.box.y1));
  // Rotated labels all hang from the same top; flat ones share a line. An axis title sits lower.
  const labels = below.filter((s) => s.box.y1 <= firstTop + 0.6 * textHeight).sort((a, b) => centreX(a.box) - centreX(b.box));
  if (labels.length === 0) return null;
  const plotTop = plotTopOf(shapes, bars, segments, baseline);
  const y2 = Math.min(height, Math.max(...labels.map((s) => s.box.y2)) + BAND_MARGIN);
  const fallback = bars ? median(bars.bars.map((b) => b.box.x2 - b.box.x1)) * 2 : 4 * textHeight;
  const edges = splitHalfway(labels.map((s) => centreX(s.box)), fallback);
  const bands: PlannedBand[] = labels.map((label, i) => {
    const [x1, x2] = edges[i] as [number, number];
    return { label, box: roundBox({ x1: Math.max(0, x1), y1: plotTop, x2: Math.min(width, x2), y2 }) };
  });
  const figure = unionBox(bands.map((b) => b.box));
  return { kind: 'vbar', bands: { x_values: bands }, figure, plot: { x1: figure.x1, y1: plotTop, x2: figure.x2, y2: baseline } };
}

/**
 * Horizontal bars: the tick labels are the text left of the bars' common left edge whose middle
 * is level with the bars. Bands run from the labels' left edge to the right end of the chart.
 * Without bars there is no horizontal-bar layout (a table's rules would pass for axes).
 */
export function planHorizontalBars(image: RgbImage, segments: readonly TextSegment[], shapes: Shapes): LayoutPlan | null {
  const { width, height } = image;
  const bars = findHorizontalBars(shapes, segments);
  if (!bars) return null;
  const axis = bars.edge;
  const span = { y1: Math.min(...bars.bars.map((b) => b.box.y1)), y2: Math.max(...bars.bars.map((b) => b.box.y2)) };
  const pitch = median(bars.bars.map((b) => b.box.y2 - b.box.y1));
  const labels = segments
    .filter((s) => s.upright && s.box.x1 < axis && centreX(s.box) < axis && centreY(s.box) >= span.y1 - pitch / 2 && centreY(s.box) <= span.y2 + pitch / 2)
    .sort((a, b) => centreY(a.box) - centreY(b.box));
  if (labels.length === 0) return null;
  const textHeight = median(labels.map((s) => s.textHeight));
  const x1 = Math.max(0, Math.min(...labels.map((s) => s.box.x1)) - BAND_MARGIN);
  // Everything level with the bars (bars, value labels) belongs to the bands; the right margin mirrors the left.
  const levelInk = [...segments.filter((s) => centreY(s.box) >= span.y1 && centreY(s.box) <= span.y2).map((s) => s.box.x2), ...bars.bars.map((b) => b.box.x2)];
  const x2 = Math.min(width, Math.max(Math.max(...levelInk) + BAND_MARGIN, width - x1));
  const edges = splitHalfway(labels.map((s) => centreY(s.box)), Math.max(pitch * 1.5, 2 * textHeight));
  const bands: PlannedBand[] = labels.map((label, i) => {
    const [y1, y2] = edges[i] as [number, number];
    return { label, box: roundBox({ x1, y1: Math.max(0, y1), x2, y2: Math.min(height, y2) }) };
  });
  const figure = unionBox(bands.map((b) => b.box));
  return { kind: 'hbar', bands: { y_values: bands }, figure, plot: { x1: axis, y1: figure.y1, x2: figure.x2, y2: figure.y2 } };
}

/** The top of the plot: the value axis line's top, else the highest bar or text inside the plot. */
function plotTopOf(shapes: Shapes, bars: BarSet | null, segments: readonly TextSegment[], baseline: number): number {
  const axis = shapes.verticalLines.filter((l) => Math.abs(l.box.y2 - 1 - baseline) <= 2 || Math.abs(l.box.y2 - baseline) <= 2).sort((a, b) => b.box.y2 - b.box.y1 - (a.box.y2 - a.box.y1))[0];
  if (axis) return axis.box.y1;
  const tops = [...(bars?.bars.map((b) => b.box.y1) ?? [])];
  const xs = bars ? { x1: Math.min(...bars.bars.map((b) => b.box.x1)), x2: Math.max(...bars.bars.map((b) => b.box.x2)) } : null;
  for (const s of segments) if (s.box.y2 <= baseline && (!xs || overlap(xs.x1, xs.x2, s.box.x1, s.box.x2) > 0)) tops.push(s.box.y1);
  return tops.length > 0 ? Math.max(0, Math.min(...tops) - BAND_MARGIN) : 0;
}

/**
 * Where a vertical and a horizontal line meet as chart axes do: the vertical line ends at the
 * horizontal line's left end. A table's rules never do that with text under or beside them.
 */
function axesCorner(shapes: Shapes, horizontal: FlatShape): boolean {
  return shapes.verticalLines.some((v) => Math.abs(v.box.x1 - horizontal.box.x1) <= 2 && Math.abs(v.box.y2 - horizontal.box.y2) <= 2);
}

/** The y of the lowest axis line (meeting a y axis at its left end) that has text right under it, or null. */
function axisBaseline(shapes: Shapes, segments: readonly TextSegment[]): number | null {
  const lines = [...shapes.horizontalLines].filter((h) => axesCorner(shapes, h)).sort((a, b) => b.box.y1 - a.box.y1);
  for (const line of lines) {
    const under = segments.filter((s) => s.box.y1 >= line.box.y2 - 1 && s.box.y1 - line.box.y2 < 3 * s.textHeight && overlap(line.box.x1, line.box.x2, s.box.x1, s.box.x2) > 0);
    if (under.length >= 2) return line.box.y1;
  }
  return null;
}

function roundBox(b: BBox): BBox {
  return { x1: Math.round(b.x1), y1: Math.round(b.y1), x2: Math.round(b.x2), y2: Math.round(b.y2) };
}
