/**
 * What OCR finds in an image: segments of text (what the detector found, split again at gaps
 * as wide as a table's cell gap) and the words inside them,
 * each with a box in the image's pixels and a confidence. Boxes use the metadata convention
 * (x1 ≤ x < x2, y1 ≤ y < y2). Nothing here runs a model.
 */
import type { BBox } from '../tools/metadata.js';

export interface Point {
  x: number;
  y: number;
}

/**
 * A text region as a rotated rectangle. `direction` is the unit vector along which the text
 * reads (left to right for upright text), `normal` the unit vector from the text's top to its
 * bottom; `length` is measured along `direction`, `thickness` along `normal`.
 */
export interface OrientedBox {
  center: Point;
  direction: Point;
  normal: Point;
  length: number;
  thickness: number;
}

export interface DetectedRegion {
  box: OrientedBox;
  /** Mean text probability inside the region (0–1). */
  score: number;
}

/** One recognised character: its text and where along the region it was read. */
export interface ReadCharacter {
  text: string;
  /** Offset of the character's centre along the region's direction, in image pixels from the region's start. */
  offset: number;
  /** Half-width of the span of recogniser steps that produced it, in image pixels. */
  halfSpan: number;
  probability: number;
  /** The recogniser's runner-up at the character's most certain step, when it had one. */
  alternative?: { text: string; probability: number };
}

export interface OcrWord {
  text: string;
  /** Axis-aligned box around the word's ink (for rotated text: around its rotated extent). */
  box: BBox;
  /** Mean probability of its characters (0–1). */
  confidence: number;
  /** Index of its segment in `OcrResult.segments`. */
  segment: number;
  /** Reading direction in degrees, counter-clockwise from the x axis (0 for upright text, 90 for text read bottom to top). */
  angle: number;
}

/** A run of text read as one: a table cell, a tick label, a title line. */
export interface OcrSegment {
  /** Its words joined by single spaces. */
  text: string;
  box: BBox;
  region: OrientedBox;
  confidence: number;
  angle: number;
  /** Indices into `OcrResult.words`, in reading order. */
  words: number[];
}

export interface OcrResult {
  width: number;
  height: number;
  segments: OcrSegment[];
  words: OcrWord[];
  /** Wall-clock milliseconds per stage. */
  timing: { detectMs: number; recognizeMs: number; totalMs: number };
  device: 'cpu' | 'cuda';
}
