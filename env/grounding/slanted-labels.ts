/**
 * Slanted tick labels (rotated 30–90°, as charts print long category names) found from ink,
 * not from the text detector, which misses small rotated words or gets their angle wrong. In a
 * zone that holds only tick labels (under a chart's x axis), ink is grouped into blobs, the
 * labels' common slant is measured from the elongated blobs, blobs on one slanted line are
 * joined into labels, and each label gets a rotated box at exactly that slant for the
 * recogniser. Returns null when the labels in the zone are not slanted. Pixels only; no models.
 */
import type { RgbImage } from '../core/image.js';
import type { BBox } from '../tools/metadata.js';
import type { TextSegment } from './segments.js';
import type { Point } from './types.js';

/** Ink differs from the background colour by at least this much in some channel. */
const INK_CONTRAST = 64;
/** Slants under this many degrees are upright text: the detector handles those. */
const MIN_SLANT_DEG = 10;
/** Blobs at least this elongated (long axis over short) vote on the slant. */
const MIN_ELONGATION = 2;
/** Blobs on one line join when the ink gap along the line is under this many text heights (a word space). */
const WORD_GAP = 1.2;
/** Ink this close (in text heights) is one blob: letters of a word touch, neighbouring labels do not. */
const LETTER_REACH = 0.2;
/** A blob votes on the slant only when its long axis is at least this many text heights long. */
const MIN_VOTER_LENGTH = 1.8;
/** Blobs of one label further apart than this many ink thicknesses are separate words (letters sit ≤ ~0.3 apart). */
const SPACE_GAP = 0.38;
/** How far (degrees) around the principal-axis estimate the slant is searched. */
const SLANT_SEARCH_DEG = 15;
/** Margin around the ink for the recogniser, in text heights. */
const READ_MARGIN = 0.2;

interface Blob {
  xs: number[];
  ys: number[];
}

export function findSlantedLabels(image: RgbImage, zone: BBox, background: number, textHeight: number): TextSegment[] | null {
  const x1 = Math.max(0, Math.floor(zone.x1));
  const y1 = Math.max(0, Math.floor(zone.y1));
  const w = Math.min(image.width, Math.ceil(zone.x2)) - x1;
  const h = Math.min(image.height, Math.ceil(zone.y2)) - y1;
  if (w <= 0 || h <= 0) return null;
  const ink = inkMask(image, x1, y1, w, h, background);
  const blobs = blobsOf(ink, w, h, Math.max(2, Math.round(textHeight * LETTER_REACH))).map((b) => ({ xs: b.xs.map((x) => x + x1), ys: b.ys.map((y) => y + y1) }));
  // Only word-sized blobs vote: a lone upright 'l' is as elongated as a slanted word.
  const axes = blobs.map(principalAxis);
  const voters = blobs.filter((_, i) => (axes[i] as { elongation: number }).elongation >= MIN_ELONGATION && (axes[i] as { length: number }).length >= MIN_VOTER_LENGTH * textHeight);
  if (voters.length === 0) return null;
  const angles = voters.map((b) => principalAxis(b).angle).sort((a, b) => a - b);
  const rough = angles[angles.length >> 1] as number;
  if (Math.abs(rough) < MIN_SLANT_DEG) return null;
  const slant = refineSlant(voters, rough);
  if (Math.abs(slant) < MIN_SLANT_DEG) return null;

  const rad = (slant * Math.PI) / 180;
  let d: Point = { x: Math.cos(rad), y: Math.sin(rad) };
  if (Math.abs(d.x) < 1e-6 || Math.abs(Math.abs(slant) - 90) < 1) d = { x: 0, y: -1 };
  else if (d.x < 0) d = { x: -d.x, y: -d.y };
  const n: Point = { x: -d.y, y: d.x };
  const spans = blobs.map((b) => projectSpan(b, d, n));
  const labels = joinAlongLine(spans, textHeight);
  return labels.map((group) => segmentOf(group, d, n));
}

function inkMask(image: RgbImage, x1: number, y1: number, w: number, h: number, background: number): Uint8Array {
  const br = (background >> 16) & 255;
  const bg = (background >> 8) & 255;
  const bb = background & 255;
  const mask = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    let i = ((y + y1) * image.width + x1) * 3;
    for (let x = 0; x < w; x++, i += 3) {
      const dist = Math.max(Math.abs((image.data[i] as number) - br), Math.abs((image.data[i + 1] as number) - bg), Math.abs((image.data[i + 2] as number) - bb));
      if (dist >= INK_CONTRAST) mask[y * w + x] = 1;
    }
  }
  return mask;
}

/** Connected ink, where pixels up to `reach` apart (letters of one word) count as touching. */
function blobsOf(mask: Uint8Array, w: number, h: number, reach: number): Blob[] {
  const label = new Int32Array(w * h).fill(-1);
  const blobs: Blob[] = [];
  const stack: number[] = [];
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || label[start] !== -1) continue;
    const blob: Blob = { xs: [], ys: [] };
    const id = blobs.length;
    blobs.push(blob);
    label[start] = id;
    stack.push(start);
    while (stack.length > 0) {
      const i = stack.pop() as number;
      const x = i % w;
      const y = (i - x) / w;
      blob.xs.push(x);
      blob.ys.push(y);
      for (let dy = -reach; dy <= reach; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= h) continue;
        for (let dx = -reach; dx <= reach; dx++) {
          const nx = x + dx;
          if (nx < 0 || nx >= w) continue;
          const j = ny * w + nx;
          if (mask[j] && label[j] === -1) {
            label[j] = id;
            stack.push(j);
          }
        }
      }
    }
  }
  return blobs;
}

/** Direction of a blob's long axis in degrees (image axes, −90 < a ≤ 90) and how elongated it is. */
function principalAxis(blob: Blob): { angle: number; elongation: number; length: number } {
  const count = blob.xs.length;
  let mx = 0;
  let my = 0;
  for (let k = 0; k < count; k++) {
    mx += blob.xs[k] as number;
    my += blob.ys[k] as number;
  }
  mx /= count;
  my /= count;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let k = 0; k < count; k++) {
    const dx = (blob.xs[k] as number) - mx;
    const dy = (blob.ys[k] as number) - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  const angle = (0.5 * Math.atan2(2 * sxy, sxx - syy) * 180) / Math.PI;
  const mean = (sxx + syy) / 2;
  const spread = Math.sqrt(((sxx - syy) / 2) ** 2 + sxy * sxy);
  const major = mean + spread;
  const minor = Math.max(1e-9, mean - spread);
  // A uniform bar of length L has variance L²/12 along it.
  return { angle: angle <= -90 ? angle + 180 : angle, elongation: Math.sqrt(major / minor), length: Math.sqrt((12 * major) / count) };
}

/**
 * The slant at which the words are thinnest, searched a few degrees around the principal-axis
 * estimate (ascenders and descenders tilt that estimate by up to ~10°). Text is laid out at a
 * round angle, so a result within a degree or two of a multiple of 15° is taken as that angle.
 */
function refineSlant(blobs: readonly Blob[], rough: number): number {
  let best = rough;
  let bestCost = Infinity;
  for (let a = Math.round(rough) - SLANT_SEARCH_DEG; a <= Math.round(rough) + SLANT_SEARCH_DEG; a++) {
    const rad = (a * Math.PI) / 180;
    const n = { x: -Math.sin(rad), y: Math.cos(rad) };
    let cost = 0;
    for (const b of blobs) {
      let lo = Infinity;
      let hi = -Infinity;
      for (let k = 0; k < b.xs.length; k++) {
        const c = (b.xs[k] as number) * n.x + (b.ys[k] as number) * n.y;
        if (c < lo) lo = c;
        if (c > hi) hi = c;
      }
      cost += hi - lo;
    }
    if (cost < bestCost - 1e-9) {
      bestCost = cost;
      best = a;
    }
  }
  const round = Math.round(best / 15) * 15;
  const snapped = Math.abs(best - round) <= 2 ? round : best;
  return snapped <= -90 ? snapped + 180 : snapped > 90 ? snapped - 180 : snapped;
}

interface Span {
  blob: Blob;
  along: [number, number];
  across: [number, number];
}

function projectSpan(blob: Blob, d: Point, n: Point): Span {
  let a1 = Infinity;
  let a2 = -Infinity;
  let c1 = Infinity;
  let c2 = -Infinity;
  for (let k = 0; k < blob.xs.length; k++) {
    // Pixel centres: the ink box is then the pixels' full extent.
    const px = (blob.xs[k] as number) + 0.5;
    const py = (blob.ys[k] as number) + 0.5;
    const a = px * d.x + py * d.y;
    const c = px * n.x + py * n.y;
    if (a < a1) a1 = a;
    if (a > a2) a2 = a;
    if (c < c1) c1 = c;
    if (c > c2) c2 = c;
  }
  return { blob, along: [a1 - 0.5, a2 + 0.5], across: [c1 - 0.5, c2 + 0.5] };
}

/** Joins blobs that sit on one slanted line with at most a word space between them. */
function joinAlongLine(spans: Span[], textHeight: number): Span[][] {
  const groups: Span[][] = [];
  const sorted = [...spans].sort((a, b) => a.along[0] - b.along[0]);
  for (const span of sorted) {
    const home = groups.find((g) => {
      const last = g[g.length - 1] as Span;
      const across1 = Math.min(...g.map((s) => s.across[0]));
      const across2 = Math.max(...g.map((s) => s.across[1]));
      const shared = Math.min(across2, span.across[1]) - Math.max(across1, span.across[0]);
      const smaller = Math.min(across2 - across1, span.across[1] - span.across[0]);
      return shared >= 0.5 * smaller && span.along[0] - last.along[1] <= WORD_GAP * textHeight;
    });
    if (home) home.push(span);
    else groups.push([span]);
  }
  return groups;
}

function segmentOf(group: Span[], d: Point, n: Point): TextSegment {
  const a1 = Math.min(...group.map((s) => s.along[0]));
  const a2 = Math.max(...group.map((s) => s.along[1]));
  const c1 = Math.min(...group.map((s) => s.across[0]));
  const c2 = Math.max(...group.map((s) => s.across[1]));
  const thickness = c2 - c1;
  const m = Math.max(2, READ_MARGIN * thickness);
  const ca = (a1 + a2) / 2;
  const cc = (c1 + c2) / 2;
  const center = { x: ca * d.x + cc * n.x, y: ca * d.y + cc * n.y };
  // Words: blobs closer than a space stay together (letters that did not touch).
  const start = ca - (a2 - a1 + 2 * m) / 2;
  const ordered = [...group].sort((p, q) => p.along[0] - q.along[0]);
  const wordOffsets: [number, number][] = [];
  for (const s of ordered) {
    const last = wordOffsets[wordOffsets.length - 1];
    if (last && s.along[0] - start - last[1] < SPACE_GAP * thickness) last[1] = Math.max(last[1], s.along[1] - start);
    else wordOffsets.push([s.along[0] - start, s.along[1] - start]);
  }
  const box = { x1: Infinity, y1: Infinity, x2: -Infinity, y2: -Infinity };
  for (const { blob } of group) {
    for (let k = 0; k < blob.xs.length; k++) {
      const x = blob.xs[k] as number;
      const y = blob.ys[k] as number;
      if (x < box.x1) box.x1 = x;
      if (y < box.y1) box.y1 = y;
      if (x + 1 > box.x2) box.x2 = x + 1;
      if (y + 1 > box.y2) box.y2 = y + 1;
    }
  }
  return { region: { center, direction: d, normal: n, length: a2 - a1 + 2 * m, thickness: thickness + 2 * m }, box, upright: false, wordBoxes: [], wordRuns: [], wordOffsets, textHeight: thickness, source: -1, score: 1 };
}
