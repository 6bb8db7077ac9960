/**
 * What a layout decides before any text is read: which segments are labels, and the band each
 * label owns. Reading only the labels (a table's header and first column, a chart's tick
 * labels) is what keeps grounding fast: the recogniser is the expensive model.
 * Also the small geometry helpers the layouts share. No pixels, no models here.
 */
import type { BandFamily, BBox } from '../tools/metadata.js';
import type { TextSegment } from './segments.js';

export type GroundedKind = 'table' | 'vbar' | 'hbar';

export interface PlannedBand {
  /** The segment whose text names the band. */
  label: TextSegment;
  box: BBox;
}

export interface LayoutPlan {
  kind: GroundedKind;
  bands: Partial<Record<BandFamily, PlannedBand[]>>;
  figure: BBox;
  /** Kept in the metadata for tools that want it (plot area of a chart). */
  plot?: BBox;
}

export function centreX(box: BBox): number {
  return (box.x1 + box.x2) / 2;
}

export function centreY(box: BBox): number {
  return (box.y1 + box.y2) / 2;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Length of the overlap of [a1, a2) and [b1, b2), 0 when they are apart. */
export function overlap(a1: number, a2: number, b1: number, b2: number): number {
  return Math.max(0, Math.min(a2, b2) - Math.max(a1, b1));
}

export function unionBox(boxes: readonly BBox[]): BBox {
  return {
    x1: Math.min(...boxes.map((b) => b.x1)),
    y1: Math.min(...boxes.map((b) => b.y1)),
    x2: Math.max(...boxes.map((b) => b.x2)),
    y2: Math.max(...boxes.map((b) => b.y2)),
  };
}

/**
 * Band edges along one axis from label centres, as ReFocus splits chart bands: half-way
 * between neighbours, and half a spacing beyond the first and last centre. `centres` must be
 * sorted; a single centre gets a band `fallbackWidth` wide.
 */
export function splitHalfway(centres: readonly number[], fallbackWidth: number): [number, number][] {
  if (centres.length === 0) return [];
  if (centres.length === 1) {
    const c = centres[0] as number;
    return [[c - fallbackWidth / 2, c + fallbackWidth / 2]];
  }
  const edges: number[] = [];
  for (let i = 0; i + 1 < centres.length; i++) edges.push(((centres[i] as number) + (centres[i + 1] as number)) / 2);
  const first = (centres[0] as number) - ((edges[0] as number) - (centres[0] as number));
  const lastCentre = centres[centres.length - 1] as number;
  const last = lastCentre + (lastCentre - (edges[edges.length - 1] as number));
  const all = [first, ...edges, last];
  return centres.map((_, i) => [all[i] as number, all[i + 1] as number]);
}

/** Groups items into rows: an item joins the row whose vertical span overlaps it by at least half the smaller height. */
export function groupIntoRows<T>(items: readonly T[], boxOf: (item: T) => BBox): T[][] {
  const sorted = [...items].sort((a, b) => centreY(boxOf(a)) - centreY(boxOf(b)));
  const rows: { y1: number; y2: number; items: T[] }[] = [];
  for (const item of sorted) {
    const b = boxOf(item);
    const row = rows.find((r) => overlap(r.y1, r.y2, b.y1, b.y2) >= 0.5 * Math.min(r.y2 - r.y1, b.y2 - b.y1));
    if (row) {
      row.items.push(item);
      row.y1 = Math.min(row.y1, b.y1);
      row.y2 = Math.max(row.y2, b.y2);
    } else {
      rows.push({ y1: b.y1, y2: b.y2, items: [item] });
    }
  }
  return rows.sort((a, b) => a.y1 + a.y2 - (b.y1 + b.y2)).map((r) => r.items.sort((a, b) => boxOf(a).x1 - boxOf(b).x1));
}
