/**
 * Detected regions → text segments: the units that are read and laid out. The detector often
 * joins neighbouring table cells (or a whole header line) into one region; upright regions are
 * split again wherever the ink leaves a gap much wider than a space, and each piece gets a box
 * that hugs its ink. The word gaps inside a segment are kept for words.ts. Rotated regions
 * (slanted tick labels, vertical axis titles) stay whole. Pixels only; no models.
 */
import type { RgbImage } from '../core/image.js';
import type { BBox } from '../tools/metadata.js';
import { boundingBox } from './detect-text.js';
import { inkProfile, inkRowsWithin, inkRuns, type InkProfile } from './ink.js';
import type { DetectedRegion, OrientedBox } from './types.js';

export interface TextSegment {
  /** What the recogniser reads: the ink box grown by a margin (upright), or the detector's rotated box. */
  region: OrientedBox;
  /** The ink's box (upright), or the axis-aligned hull of the rotated region. */
  box: BBox;
  upright: boolean;
  /** Upright: the ink boxes of the words, as the ink gaps separate them (left to right). */
  wordBoxes: BBox[];
  /** Upright: how many separate runs of ink columns each word has (one per letter, for letters that do not touch). */
  wordRuns: number[];
  /** Upright: the blank column ranges between the ink runs inside each word (image x, half-open). */
  wordGaps?: { x1: number; x2: number }[][];
  /** Slanted labels found from ink: where each word lies along `region.direction`, as offsets from the region's start. */
  wordOffsets?: [number, number][];
  /** Height of the ink of the region the segment came from (upright) or the region's thickness. */
  textHeight: number;
  /** Index of the detected region it came from. */
  source: number;
  score: number;
}

/** A gap at least this many ink heights wide separates two cells (a space is ~0.3–0.7). */
export const CELL_GAP = 0.9;
/** A gap at least this many ink heights wide separates two words (letters sit ≤ ~0.3 apart). */
export const WORD_GAP = 0.38;
/** Margin around the ink for the recogniser, in ink heights (the detector's own boxes leave about this much). */
const READ_MARGIN = 0.2;
/** Short text (a lone digit) is read with extra blank on both sides, up to this many ink heights long: alone in a tight crop it is often misread. */
const MIN_READ_LENGTH = 1.5;

/** A segment this much inside another one is the same text found twice. */
const DUPLICATE_SHARE = 0.8;
/** Text taller than this many times the typical height is a false detection (a block of bars). */
const MAX_HEIGHT_RATIO = 3.5;

export function segmentRegions(image: RgbImage, regions: readonly DetectedRegion[]): TextSegment[] {
  return withoutDuplicates(withoutGiants(splitRegions(image, regions)));
}

function splitRegions(image: RgbImage, regions: readonly DetectedRegion[]): TextSegment[] {
  const segments: TextSegment[] = [];
  regions.forEach((region, source) => {
    const upright = region.box.direction.x === 1 && region.box.direction.y === 0;
    if (!upright) {
      segments.push({ region: region.box, box: boundingBox(region.box, image.width, image.height), upright: false, wordBoxes: [], wordRuns: [], textHeight: region.box.thickness, source, score: region.score });
      return;
    }
    const profile = inkProfile(image, boundingBox(region.box, image.width, image.height));
    const inkHeight = profile.bottom - profile.top;
    const runs = inkRuns(profile);
    if (inkHeight <= 0 || runs.length === 0) return; // nothing visibly inked: a false detection
    for (const cell of groupRuns(runs, CELL_GAP * inkHeight)) {
      const segment = segmentFromRuns(image, profile, cell, inkHeight, source, region.score);
      if (segment) segments.push(segment);
    }
  });
  return segments;
}

function area(b: BBox): number {
  return Math.max(0, b.x2 - b.x1) * Math.max(0, b.y2 - b.y1);
}

function intersection(a: BBox, b: BBox): number {
  return Math.max(0, Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1)) * Math.max(0, Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1));
}

/** Drops a segment lying mostly inside a larger one (the detector found the same text twice). */
function withoutDuplicates(segments: TextSegment[]): TextSegment[] {
  const bySize = [...segments].sort((a, b) => area(b.box) - area(a.box));
  const kept: TextSegment[] = [];
  for (const s of bySize) {
    if (!kept.some((k) => intersection(k.box, s.box) >= DUPLICATE_SHARE * area(s.box))) kept.push(s);
  }
  return segments.filter((s) => kept.includes(s));
}

function withoutGiants(segments: TextSegment[]): TextSegment[] {
  const heights = segments.map((s) => s.textHeight).sort((a, b) => a - b);
  const typical = heights[heights.length >> 1] ?? 0;
  return segments.filter((s) => s.textHeight <= MAX_HEIGHT_RATIO * typical);
}

function groupRuns(runs: { x1: number; x2: number }[], gap: number): { x1: number; x2: number }[][] {
  const groups: { x1: number; x2: number }[][] = [];
  for (const run of runs) {
    const current = groups[groups.length - 1];
    const last = current?.[current.length - 1];
    if (current && last && run.x1 - last.x2 < gap) current.push(run);
    else groups.push([run]);
  }
  return groups;
}

function segmentFromRuns(image: RgbImage, profile: InkProfile, runs: { x1: number; x2: number }[], inkHeight: number, source: number, score: number): TextSegment | null {
  const x1 = (runs[0] as { x1: number }).x1;
  const x2 = (runs[runs.length - 1] as { x2: number }).x2;
  const rows = inkRowsWithin(profile, x1, x2);
  if (!rows) return null;
  const box = { x1, y1: rows.y1, x2, y2: rows.y2 };
  const words = groupRuns(runs, WORD_GAP * inkHeight);
  const wordBoxes = words.map((g) => {
    const wx1 = (g[0] as { x1: number }).x1;
    const wx2 = (g[g.length - 1] as { x2: number }).x2;
    const wordRows = inkRowsWithin(profile, wx1, wx2) ?? rows;
    return { x1: wx1, y1: wordRows.y1, x2: wx2, y2: wordRows.y2 };
  });
  const wordGaps = words.map((g) => g.slice(1).map((run, k) => ({ x1: (g[k] as { x2: number }).x2, x2: run.x1 })));
  return { region: readingBox(box, inkHeight, image), box, upright: true, wordBoxes, wordRuns: words.map((g) => g.length), wordGaps, textHeight: inkHeight, source, score };
}

/** The upright box the recogniser reads: the ink box grown by a margin, clamped to the image. */
function readingBox(box: BBox, inkHeight: number, image: RgbImage): OrientedBox {
  const m = Math.max(2, Math.round(READ_MARGIN * inkHeight));
  const mx = Math.max(m, Math.round((MIN_READ_LENGTH * inkHeight - (box.x2 - box.x1)) / 2));
  const x1 = Math.max(0, box.x1 - mx);
  const x2 = Math.min(image.width, box.x2 + mx);
  const y1 = Math.max(0, box.y1 - m);
  const y2 = Math.min(image.height, box.y2 + m);
  return { center: { x: (x1 + x2) / 2, y: (y1 + y2) / 2 }, direction: { x: 1, y: 0 }, normal: { x: 0, y: 1 }, length: x2 - x1, thickness: y2 - y1 };
}
