/**
 * What the search scenes are made of and what difficulty 1–5 means for them: the canvas, how many
 * objects, their size and the size of the text they carry, how much background clutter; the
 * named colours and shapes a question may use; and the need-for-zoom criterion's defaults.
 * Pure data: nothing here draws.
 */
import type { Difficulty } from '../difficulty.js';

/** The canvas when `--image-size` is not given. */
export const DEFAULT_SEARCH_SIZE: readonly [number, number] = [2048, 1536];

/**
 * The policy's image budget the checker assumes by default: `policy.micro.max_pixels`'s default
 * in schemas/run-config.schema.json (224 × 224), the micro model the CPU demo trains.
 */
export const DEFAULT_MAX_PIXELS = 50176;

/** A feature (a label's cap height, a shape's detail) is legible from this many pixels on, by default. */
export const DEFAULT_LEGIBLE_PX = 6;

export interface SearchProfile {
  /** Objects in the scene. */
  objects: readonly [number, number];
  /** An object's box side (px, odd: shapes are centred on a pixel). */
  side: readonly [number, number];
  /** Font size of the two-character labels (px). */
  fontSize: number;
  /** Share of objects that carry a label. */
  labelled: number;
  /** Grey pebbles scattered on the background, between the objects. */
  clutter: readonly [number, number];
}

export const SEARCH_PROFILES: Readonly<Record<Difficulty, SearchProfile>> = {
  1: { objects: [30, 40], side: [41, 45], fontSize: 15, labelled: 0.8, clutter: [40, 80] },
  2: { objects: [50, 70], side: [39, 43], fontSize: 14, labelled: 0.8, clutter: [80, 140] },
  3: { objects: [80, 100], side: [37, 41], fontSize: 13, labelled: 0.75, clutter: [120, 200] },
  4: { objects: [110, 130], side: [37, 41], fontSize: 13, labelled: 0.75, clutter: [160, 260] },
  5: { objects: [140, 170], side: [35, 39], fontSize: 12, labelled: 0.7, clutter: [200, 320] },
};

/** Clear space between two objects' boxes, at least (px): half of it on each side of a grid cell's edge. */
export const OBJECT_GAP = 16;
/** The canvas margin no object enters (px). */
export const CANVAS_MARGIN = 24;

export const SHAPES = ['circle', 'square', 'triangle', 'diamond'] as const;
export type SearchShape = (typeof SHAPES)[number];

/** Named colours, far apart in hue; the ink of a label on each (white on dark fills, near-black on light). */
export const COLOURS: Readonly<Record<string, { fill: string; ink: string }>> = {
  red: { fill: '#d62728', ink: '#ffffff' },
  orange: { fill: '#ff8c1a', ink: '#111111' },
  yellow: { fill: '#f5d327', ink: '#111111' },
  green: { fill: '#2ca02c', ink: '#ffffff' },
  blue: { fill: '#1f5fbf', ink: '#ffffff' },
  purple: { fill: '#8c4fbf', ink: '#ffffff' },
  pink: { fill: '#f08cc8', ink: '#111111' },
  brown: { fill: '#8c564b', ink: '#ffffff' },
};
export const COLOUR_NAMES = Object.keys(COLOURS);

/**
 * Label characters: consonants and digits without look-alikes (no I/1, O/0, S/5, Z/2, B/8, G/6)
 * and without the widest letters (M, W), so that two fit inside the smallest triangle.
 * Without vowels no label can spell a colour or shape word, so the answer of one family is never
 * hidden in another's question.
 */
export const LABEL_CHARS = 'CDFHJKLNPRTVXY34679';
