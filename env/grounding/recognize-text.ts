/**
 * Text recognition with PP-OCRv4's CTC recogniser. Each detected region is sampled straight
 * into the recogniser's 48-pixel-high input (crop, rotation and scaling in one bilinear pass),
 * regions of similar width are batched, and the CTC output is decoded greedily, keeping for
 * every character the span of steps that produced it: that is where the character sits along
 * the region, which words.ts uses to split lines into words.
 * Nothing here decides layout.
 */
import * as ort from 'onnxruntime-node';
import type { RgbImage } from '../core/image.js';
import type { OrientedBox, ReadCharacter } from './types.js';

export const RECOGNIZER_HEIGHT = 48;
const MAX_INPUT_WIDTH = 3200;
const MIN_INPUT_WIDTH = 16;
/** A batch's narrowest item is at least this fraction of its widest (padding is wasted work). */
const BATCH_WIDTH_RATIO = 0.6;
const MAX_BATCH = 16;

/** Which characters the recogniser may answer: 'latin' (charts and tables in Latin script) or every class it knows. */
export type Alphabet = 'latin' | 'all';

export interface ReadRegion {
  text: string;
  characters: ReadCharacter[];
  /** Mean probability of the characters (0 when none). */
  confidence: number;
}

export interface RecognitionOptions {
  alphabet?: Alphabet;
}

const EXTRA_LATIN = new Set([...'‘’“”–—…•·′″‰€£™®°±×÷≤≥≈≠√∞²³μ']);

export function isLatinCharacter(ch: string): boolean {
  const code = ch.codePointAt(0) as number;
  return ch.length === 1 && ((code >= 0x20 && code < 0x7f) || (code >= 0xa0 && code < 0x180) || EXTRA_LATIN.has(ch));
}

const masks = new WeakMap<string[], Uint8Array>();

/** 1 for every class the alphabet allows; the CTC blank (0) is always allowed. */
export function alphabetMask(classes: string[], alphabet: Alphabet): Uint8Array | null {
  if (alphabet === 'all') return null;
  let mask = masks.get(classes);
  if (!mask) {
    mask = Uint8Array.from(classes, (ch, i) => (i === 0 || isLatinCharacter(ch) ? 1 : 0));
    masks.set(classes, mask);
  }
  return mask;
}

export async function recognizeRegions(session: ort.InferenceSession, classes: string[], image: RgbImage, regions: readonly OrientedBox[], options: RecognitionOptions = {}): Promise<ReadRegion[]> {
  const mask = alphabetMask(classes, options.alphabet ?? 'latin');
  const widths = regions.map(inputWidth);
  const order = regions.map((_, i) => i).sort((a, b) => (widths[a] as number) - (widths[b] as number));
  const results: ReadRegion[] = new Array(regions.length);
  let start = 0;
  while (start < order.length) {
    let end = start + 1;
    const first = widths[order[start] as number] as number;
    while (end < order.length && end - start < MAX_BATCH && first >= (widths[order[end] as number] as number) * BATCH_WIDTH_RATIO) end++;
    const batch = order.slice(start, end);
    const batchWidth = widths[batch[batch.length - 1] as number] as number;
    const plane = RECOGNIZER_HEIGHT * batchWidth;
    const input = new Float32Array(batch.length * 3 * plane); // zero = mid-grey after normalisation, PaddleOCR's padding
    batch.forEach((regionIndex, b) => sampleRegion(image, regions[regionIndex] as OrientedBox, widths[regionIndex] as number, input, b * 3 * plane, batchWidth));
    const name = session.inputNames[0] as string;
    const outputs = await session.run({ [name]: new ort.Tensor('float32', input, [batch.length, 3, RECOGNIZER_HEIGHT, batchWidth]) });
    const output = outputs[session.outputNames[0] as string];
    if (!output) throw new Error('text recogniser returned no output');
    const [, steps, classCount] = output.dims as number[];
    if (classCount !== classes.length) throw new Error(`text recogniser has ${classCount} classes but its dictionary lists ${classes.length}; the model and ppocr_keys file do not match`);
    const stride = batchWidth / (steps as number);
    const probs = output.data as Float32Array;
    batch.forEach((regionIndex, b) => {
      const region = regions[regionIndex] as OrientedBox;
      const usedSteps = Math.min(steps as number, Math.ceil((widths[regionIndex] as number) / stride));
      const scale = region.length / (widths[regionIndex] as number);
      results[regionIndex] = decodeCtc(probs, b * (steps as number) * classCount, usedSteps, classCount, classes, mask, stride * scale);
    });
    start = end;
  }
  return results;
}

/** Width of the recogniser input for a region: its aspect ratio at 48 px high. */
export function inputWidth(region: OrientedBox): number {
  const ratio = region.length / Math.max(1, region.thickness);
  return Math.max(MIN_INPUT_WIDTH, Math.min(MAX_INPUT_WIDTH, Math.round(RECOGNIZER_HEIGHT * ratio)));
}

/** Bilinear sampling of the rotated region into a CHW slot (BGR, (v/255 − 0.5)/0.5), left-aligned. */
function sampleRegion(image: RgbImage, region: OrientedBox, width: number, input: Float32Array, offset: number, batchWidth: number): void {
  const plane = RECOGNIZER_HEIGHT * batchWidth;
  const { center, direction: d, normal: n } = region;
  const alongStep = region.length / width;
  const acrossStep = region.thickness / RECOGNIZER_HEIGHT;
  const maxX = image.width - 1;
  const maxY = image.height - 1;
  const px = image.data;
  for (let j = 0; j < RECOGNIZER_HEIGHT; j++) {
    const across = (j + 0.5) * acrossStep - region.thickness / 2;
    for (let i = 0; i < width; i++) {
      const along = (i + 0.5) * alongStep - region.length / 2;
      // Pixel centres sit at half-integers: shift so (0,0) is the first pixel's centre.
      let sx = center.x + along * d.x + across * n.x - 0.5;
      let sy = center.y + along * d.y + across * n.y - 0.5;
      sx = sx < 0 ? 0 : sx > maxX ? maxX : sx;
      sy = sy < 0 ? 0 : sy > maxY ? maxY : sy;
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      const x1 = x0 < maxX ? x0 + 1 : x0;
      const y1 = y0 < maxY ? y0 + 1 : y0;
      const fx = sx - x0;
      const fy = sy - y0;
      const i00 = (y0 * image.width + x0) * 3;
      const i01 = (y0 * image.width + x1) * 3;
      const i10 = (y1 * image.width + x0) * 3;
      const i11 = (y1 * image.width + x1) * 3;
      const out = offset + j * batchWidth + i;
      for (let c = 0; c < 3; c++) {
        const top = (px[i00 + c] as number) * (1 - fx) + (px[i01 + c] as number) * fx;
        const bottom = (px[i10 + c] as number) * (1 - fx) + (px[i11 + c] as number) * fx;
        const value = top * (1 - fy) + bottom * fy;
        // Channel c of RGB goes to plane 2 − c: the model was trained on BGR.
        input[out + (2 - c) * plane] = value / 127.5 - 1;
      }
    }
  }
}

const allowedLists = new WeakMap<Uint8Array, { classCount: number; list: Int32Array }>();
const everyClass = new Map<number, Int32Array>();

/**
 * The class indices the mask allows, ascending (every class when there is no mask). Scanning
 * only these: the Latin alphabet is ~200 of the recogniser's 6,625 classes, and the scan runs
 * once per output step.
 */
function allowedClasses(mask: Uint8Array | null, classCount: number): Int32Array {
  if (mask === null) {
    let all = everyClass.get(classCount);
    if (!all) everyClass.set(classCount, (all = Int32Array.from({ length: classCount }, (_, k) => k)));
    return all;
  }
  const cached = allowedLists.get(mask);
  if (cached && cached.classCount === classCount) return cached.list;
  const indices: number[] = [];
  for (let k = 0; k < Math.min(classCount, mask.length); k++) if (mask[k] === 1) indices.push(k);
  const list = Int32Array.from(indices);
  allowedLists.set(mask, { classCount, list });
  return list;
}

/**
 * Greedy CTC: the best allowed class per step; repeats collapse, blanks separate. Each character
 * keeps the centre of the steps that produced it, converted to image pixels along the region.
 */
export function decodeCtc(probs: Float32Array, base: number, steps: number, classCount: number, classes: string[], mask: Uint8Array | null, pixelsPerStep: number): ReadRegion {
  const characters: ReadCharacter[] = [];
  let previous = 0;
  let runStart = 0;
  let runBest = 0;
  let runSecond = 0;
  let runSecondP = 0;
  const close = (end: number) => {
    if (previous === 0) return;
    const centre = ((runStart + end) / 2) * pixelsPerStep;
    const ch: ReadCharacter = { text: classes[previous] as string, offset: centre, halfSpan: ((end - runStart) / 2) * pixelsPerStep, probability: runBest };
    if (runSecond !== 0) ch.alternative = { text: classes[runSecond] as string, probability: runSecondP };
    characters.push(ch);
  };
  const allowed = allowedClasses(mask, classCount);
  for (let t = 0; t < steps; t++) {
    const row = base + t * classCount;
    let best = 0;
    let bestP = -1;
    let second = 0;
    let secondP = -1;
    for (let a = 0; a < allowed.length; a++) {
      const k = allowed[a] as number;
      const p = probs[row + k] as number;
      if (p > bestP) {
        second = best;
        secondP = bestP;
        bestP = p;
        best = k;
      } else if (p > secondP) {
        secondP = p;
        second = k;
      }
    }
    if (best !== previous) {
      close(t);
      previous = best;
      runStart = t;
      runBest = bestP;
      runSecond = second;
      runSecondP = secondP;
    } else if (bestP > runBest) {
      runBest = bestP;
      runSecond = second;
      runSecondP = secondP;
    }
  }
  close(steps);
  // Spaces at either end carry no text.
  while (characters.length > 0 && characters[0]?.text === ' ') characters.shift();
  while (characters.length > 0 && characters[characters.length - 1]?.text === ' ') characters.pop();
  const text = characters.map((c) => c.text).join('');
  const confidence = characters.length === 0 ? 0 : characters.reduce((s, c) => s + c.probability, 0) / characters.length;
  return { text, characters, confidence };
}
