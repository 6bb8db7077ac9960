/**
 * Text detection with PP-OCRv4's DB model: the image (scaled, padded to a multiple of 32,
 * normalised as PaddleOCR does) goes in, a per-pixel text probability comes out, and each
 * connected blob above the threshold becomes a rotated rectangle, grown back ("unclipped") to
 * the text's full extent because DB is trained on shrunk text kernels.
 * Upright regions (within a few degrees) are snapped to exact axis-aligned boxes, which is what
 * charts and tables need. Nothing here reads the text; recognize-text.ts does.
 */
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import type { RgbImage } from '../core/image.js';
import type { BBox } from '../tools/metadata.js';
import { detectionWindow, inkedBox, type DetectionWindow } from './content-window.js';
import { minAreaRect } from './min-area-rect.js';
import type { DetectedRegion, OrientedBox, Point } from './types.js';

export interface DetectionOptions {
  /** Pixels above this probability are text (PaddleOCR's det_db_thresh). */
  threshold?: number;
  /** Regions whose mean probability is below this are dropped (det_db_box_thresh). */
  minScore?: number;
  /** How far a region is grown: distance = area × ratio / perimeter (det_db_unclip_ratio). */
  unclipRatio?: number;
  /** The longer image side is scaled to at most this many pixels before detection. */
  maxSide?: number;
  /** ...and to at least this many (small images are enlarged so small text is still found). */
  minSide?: number;
  /** Run the detector over the whole image, blank border included, instead of its inked part (the same regions, at more cost). */
  wholeImage?: boolean;
}

// Sides measured on generated charts and tables (difficulty 1–3): detecting at 640 px finds the
// same labels as at full size for 800×600 images, at under half the cost; segments.ts then puts
// exact edges on every region from the full-resolution ink, so the lower resolution never shows.
const DEFAULTS: Required<DetectionOptions> = { threshold: 0.3, minScore: 0.6, unclipRatio: 1.5, maxSide: 640, minSide: 320, wholeImage: false };

// PaddleOCR feeds BGR images normalised with ImageNet statistics (in B, G, R order as listed).
const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];
const STRIDE = 32;
/** Regions this close to upright (degrees) are treated as exactly upright. */
const UPRIGHT_TOLERANCE_DEG = 12;
/**
 * Blank detector pixels kept around the inked part of the image, so no text sits at the edge of
 * the detector's input. The detector's map is not bit-identical on a window (its SE blocks
 * average over the whole input: a few regions move by up to ~6 px, or split or merge
 * differently), but what is cut from the ink is not: the same grounding labels and bands as on
 * the whole image for the 210 evaluation images (difficulty 1–5), the same full-image OCR words
 * and boxes for the 150 at difficulty 1–3. A 64 px margin changed no more than 32 px does.
 */
const WINDOW_MARGIN = 32;

export async function detectText(session: ort.InferenceSession, image: RgbImage, options: DetectionOptions = {}): Promise<DetectedRegion[]> {
  const o = { ...DEFAULTS, ...options };
  const longSide = Math.max(image.width, image.height);
  const scale = longSide > o.maxSide ? o.maxSide / longSide : longSide < o.minSide ? o.minSide / longSide : 1;
  // Blank paper around a chart or table holds no text: the detector looks only at the inked part.
  const inked = o.wholeImage ? { x1: 0, y1: 0, x2: image.width, y2: image.height } : inkedBox(image);
  if (!inked) return [];
  const first = await detectAtScale(session, image, scale, o, inked);
  // Small text shrunk below what the detector sees well (big dense tables): look again closer.
  const typical = medianThickness(first) * scale;
  if (scale < 1 && first.length > 0 && typical < MIN_TEXT_PX) {
    return detectAtScale(session, image, Math.min(1, (scale * GOOD_TEXT_PX) / Math.max(1, typical)), o, inked);
  }
  return first;
}

/** Text regions (ink plus the detector's margin) thinner than this in detector pixels are often merged or missed. */
const MIN_TEXT_PX = 14;
/** ...so a second look scales it to about this. */
const GOOD_TEXT_PX = 20;

function medianThickness(regions: readonly DetectedRegion[]): number {
  const values = regions.map((r) => r.box.thickness).sort((a, b) => a - b);
  return values[values.length >> 1] ?? 0;
}

async function detectAtScale(session: ort.InferenceSession, image: RgbImage, scale: number, o: Required<DetectionOptions>, inked: BBox): Promise<DetectedRegion[]> {
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  // The whole image is scaled, then the window cut out: the detector sees exactly the pixels it would see without one.
  const pixels = scale === 1 ? image.data : await resizeRgb(image, width, height);
  const window = detectionWindow(inked, scale, width, height, WINDOW_MARGIN, STRIDE);
  const { padWidth: padW, padHeight: padH } = window;
  const input = detectorInput(pixels, width, window);
  const name = session.inputNames[0] as string;
  const outputs = await session.run({ [name]: new ort.Tensor('float32', input, [1, 3, padH, padW]) });
  const output = outputs[session.outputNames[0] as string];
  if (!output) throw new Error('text detector returned no output');
  const probability = output.data as Float32Array;
  const [, , outH, outW] = output.dims as number[];
  if (outH !== padH || outW !== padW) throw new Error(`text detector returned a ${outW}×${outH} map for a ${padW}×${padH} input`);
  const regions = regionsFromProbability(probability, padW, padH, o);
  // Back to image pixels: from the window to the scaled image (padding only at the right and bottom), then unscaled.
  const sx = image.width / width;
  const sy = image.height / height;
  return regions
    .map((r) => ({ score: r.score, box: scaleBox(shiftBox(r.box, window.x, window.y), sx, sy) }))
    .filter((r) => overlapsImage(r.box, image.width, image.height));
}

async function resizeRgb(image: RgbImage, width: number, height: number): Promise<Buffer> {
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: 'fill', kernel: width > image.width ? 'cubic' : 'lanczos3' })
    .raw()
    .toBuffer();
}

/** The window's pixels as the detector's CHW input (BGR, normalised), white beyond the image. */
function detectorInput(pixels: Buffer, imageWidth: number, window: DetectionWindow): Float32Array {
  const { x: x0, y: y0, width, height, padWidth: padW, padHeight: padH } = window;
  const plane = padW * padH;
  const input = new Float32Array(3 * plane);
  // Padding is white, like the page around a chart.
  for (let c = 0; c < 3; c++) input.fill((1 - (MEAN[c] as number)) / (STD[c] as number), c * plane, (c + 1) * plane);
  const lut = [0, 1, 2].map((c) => Float32Array.from({ length: 256 }, (_, v) => (v / 255 - (MEAN[c] as number)) / (STD[c] as number)));
  const [lutB, lutG, lutR] = lut as [Float32Array, Float32Array, Float32Array];
  for (let y = 0; y < height; y++) {
    let src = ((y0 + y) * imageWidth + x0) * 3;
    let dst = y * padW;
    for (let x = 0; x < width; x++, src += 3, dst++) {
      input[dst] = lutB[pixels[src + 2] as number] as number;
      input[plane + dst] = lutG[pixels[src + 1] as number] as number;
      input[2 * plane + dst] = lutR[pixels[src] as number] as number;
    }
  }
  return input;
}

/** Connected blobs of text probability → grown rotated rectangles, in the map's pixels. */
export function regionsFromProbability(probability: Float32Array, width: number, height: number, options: Required<DetectionOptions>): DetectedRegion[] {
  const labels = new Int32Array(width * height);
  const stack: number[] = [];
  const regions: DetectedRegion[] = [];
  let next = 0;
  for (let start = 0; start < labels.length; start++) {
    if (labels[start] !== 0 || (probability[start] as number) <= options.threshold) continue;
    next++;
    labels[start] = next;
    stack.push(start);
    let sum = 0;
    let count = 0;
    // Per row: leftmost and rightmost pixel; their corners are all the hull needs.
    const rowMin = new Map<number, number>();
    const rowMax = new Map<number, number>();
    while (stack.length > 0) {
      const i = stack.pop() as number;
      const x = i % width;
      const y = (i - x) / width;
      sum += probability[i] as number;
      count++;
      const lo = rowMin.get(y);
      if (lo === undefined || x < lo) rowMin.set(y, x);
      const hi = rowMax.get(y);
      if (hi === undefined || x > hi) rowMax.set(y, x);
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          if ((dx === 0 && dy === 0) || nx < 0 || nx >= width) continue;
          const j = ny * width + nx;
          if (labels[j] === 0 && (probability[j] as number) > options.threshold) {
            labels[j] = next;
            stack.push(j);
          }
        }
      }
    }
    const score = sum / count;
    if (score < options.minScore) continue;
    const corners: Point[] = [];
    for (const [y, x1] of rowMin) {
      const x2 = (rowMax.get(y) as number) + 1;
      corners.push({ x: x1, y }, { x: x1, y: y + 1 }, { x: x2, y }, { x: x2, y: y + 1 });
    }
    const rect = minAreaRect(corners);
    if (Math.min(rect.width, rect.height) < 3) continue;
    const distance = (rect.width * rect.height * options.unclipRatio) / (2 * (rect.width + rect.height));
    const grown = { ...rect, width: rect.width + 2 * distance, height: rect.height + 2 * distance };
    if (Math.min(grown.width, grown.height) < 5) continue;
    regions.push({ score, box: orientedBox(grown.center, grown.axis, grown.width, grown.height) });
  }
  return regions;
}

/**
 * Chooses the reading direction of a rectangle: along its long side, left to right; text
 * standing vertical reads bottom to top (the usual rotated axis label). A near-square upright
 * region is read as upright text (a short number such as "7").
 */
export function orientedBox(center: Point, axis: Point, width: number, height: number): OrientedBox {
  const angle = (Math.atan2(axis.y, axis.x) * 180) / Math.PI;
  const offUpright = Math.abs(((angle % 90) + 90) % 90);
  const nearAxis = Math.min(offUpright, 90 - offUpright) <= UPRIGHT_TOLERANCE_DEG;
  if (nearAxis) {
    // Snap: the axis-aligned rectangle with the same centre and extents.
    const alongX = Math.abs(axis.x) >= Math.abs(axis.y);
    const w = alongX ? width : height;
    const h = alongX ? height : width;
    if (h > w * 1.5) return { center, direction: { x: 0, y: -1 }, normal: { x: 1, y: 0 }, length: h, thickness: w };
    return { center, direction: { x: 1, y: 0 }, normal: { x: 0, y: 1 }, length: w, thickness: h };
  }
  let dir = width >= height ? axis : { x: -axis.y, y: axis.x };
  if (dir.x < 0) dir = { x: -dir.x, y: -dir.y };
  return { center, direction: dir, normal: { x: -dir.y, y: dir.x }, length: Math.max(width, height), thickness: Math.min(width, height) };
}

function shiftBox(box: OrientedBox, dx: number, dy: number): OrientedBox {
  if (dx === 0 && dy === 0) return box;
  return { ...box, center: { x: box.center.x + dx, y: box.center.y + dy } };
}

function scaleBox(box: OrientedBox, sx: number, sy: number): OrientedBox {
  if (sx === 1 && sy === 1) return box;
  const dir = { x: box.direction.x * sx, y: box.direction.y * sy };
  const nor = { x: box.normal.x * sx, y: box.normal.y * sy };
  const dl = Math.hypot(dir.x, dir.y);
  const nl = Math.hypot(nor.x, nor.y);
  return {
    center: { x: box.center.x * sx, y: box.center.y * sy },
    direction: { x: dir.x / dl, y: dir.y / dl },
    normal: { x: nor.x / nl, y: nor.y / nl },
    length: box.length * dl,
    thickness: box.thickness * nl,
  };
}

function overlapsImage(box: OrientedBox, width: number, height: number): boolean {
  return box.center.x > -box.length && box.center.y > -box.length && box.center.x < width + box.length && box.center.y < height + box.length;
}

/** The axis-aligned box around an oriented box, clamped to the image, in whole pixels (half-open). */
export function boundingBox(box: OrientedBox, width: number, height: number): { x1: number; y1: number; x2: number; y2: number } {
  const hx = (Math.abs(box.direction.x) * box.length + Math.abs(box.normal.x) * box.thickness) / 2;
  const hy = (Math.abs(box.direction.y) * box.length + Math.abs(box.normal.y) * box.thickness) / 2;
  return {
    x1: Math.max(0, Math.floor(box.center.x - hx)),
    y1: Math.max(0, Math.floor(box.center.y - hy)),
    x2: Math.min(width, Math.ceil(box.center.x + hx)),
    y2: Math.min(height, Math.ceil(box.center.y + hy)),
  };
}
