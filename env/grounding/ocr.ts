/**
 * OCR of a whole image: detect text regions, split them into segments at cell-wide gaps, read
 * every segment, split it into words. `findSegments` and `readSegments` are the two halves,
 * for callers (grounding) that decide from geometry alone which segments are worth reading.
 * Sessions are the process-wide ones unless the caller passes its own.
 */
import type { RgbImage } from '../core/image.js';
import { detectText, type DetectionOptions } from './detect-text.js';
import { recognizeRegions, type Alphabet } from './recognize-text.js';
import { segmentRegions, type TextSegment } from './segments.js';
import { ocrSessions, type OcrSessions } from './sessions.js';
import { findShapes } from './shapes.js';
import type { OcrResult, OcrSegment, OcrWord } from './types.js';
import { wordsOfSegment, type SegmentWord } from './words.js';

export interface OcrOptions {
  /** 'latin' (default) keeps the recogniser to Latin-script characters; 'all' allows its Chinese classes too. */
  alphabet?: Alphabet;
  detection?: DetectionOptions;
  sessions?: OcrSessions;
  /** Read as labels, whose words usually start with a capital (an unsure "oct" becomes "Oct"). */
  titleCase?: boolean;
}

export interface ReadSegment {
  segment: TextSegment;
  text: string;
  words: SegmentWord[];
  confidence: number;
}

export async function findSegments(image: RgbImage, options: OcrOptions = {}): Promise<TextSegment[]> {
  const sessions = options.sessions ?? (await ocrSessions());
  const regions = await detectText(sessions.detection, image, options.detection);
  return segmentRegions(image, regions);
}

export async function readSegments(image: RgbImage, segments: readonly TextSegment[], options: OcrOptions = {}): Promise<ReadSegment[]> {
  if (segments.length === 0) return [];
  const sessions = options.sessions ?? (await ocrSessions());
  const reads = await recognizeRegions(sessions.recognition, sessions.classes, image, segments.map((s) => s.region), { alphabet: options.alphabet });
  return segments.map((segment, i) => {
    const read = reads[i] as (typeof reads)[number];
    const words = wordsOfSegment(segment, read, image.width, image.height, options.titleCase ?? false);
    const confidence = words.length === 0 ? 0 : words.reduce((sum, w) => sum + w.confidence, 0) / words.length;
    return { segment, text: words.map((w) => w.text).join(' '), words, confidence };
  });
}

/**
 * Every piece of text in the image, with segment and word boxes, in reading order (top to
 * bottom, then left to right). Axes, ticks and rules are painted out first (shapes.ts): a tick
 * touching a label would read as "-", a grid line as "|".
 */
export async function readText(image: RgbImage, options: OcrOptions = {}): Promise<OcrResult> {
  const sessions = options.sessions ?? (await ocrSessions());
  const started = performance.now();
  const clean = findShapes(image).withoutLineArt;
  const segments = await findSegments(clean, { ...options, sessions });
  const detected = performance.now();
  const read = (await readSegments(clean, segments, { ...options, sessions })).filter((r) => r.words.length > 0);
  const finished = performance.now();
  read.sort((a, b) => readingOrder(a.segment, b.segment));
  const out: OcrResult = { width: image.width, height: image.height, segments: [], words: [], timing: { detectMs: detected - started, recognizeMs: finished - detected, totalMs: finished - started }, device: sessions.device };
  for (const r of read) {
    const angle = angleOf(r.segment);
    const segmentIndex = out.segments.length;
    const wordIndices = r.words.map((w) => {
      out.words.push({ text: w.text, box: w.box, confidence: w.confidence, segment: segmentIndex, angle } satisfies OcrWord);
      return out.words.length - 1;
    });
    out.segments.push({ text: r.text, box: r.segment.box, region: r.segment.region, confidence: r.confidence, angle, words: wordIndices } satisfies OcrSegment);
  }
  return out;
}

/** Rows first (segments whose vertical centres are within half a text height share a row), then left to right. */
function readingOrder(a: TextSegment, b: TextSegment): number {
  const ay = (a.box.y1 + a.box.y2) / 2;
  const by = (b.box.y1 + b.box.y2) / 2;
  if (Math.abs(ay - by) > Math.min(a.textHeight, b.textHeight) / 2) return ay - by;
  return a.box.x1 - b.box.x1;
}

export function angleOf(segment: TextSegment): number {
  const { x, y } = segment.region.direction;
  // Image y grows downwards; angles are counter-clockwise as a reader sees them.
  return Math.round((Math.atan2(-y, x) * 180) / Math.PI) || 0; // never -0
}
