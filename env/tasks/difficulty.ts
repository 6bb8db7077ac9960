/**
 * What difficulty 1–5 means, in one place. Each level sets the size of the data, how long and
 * how alike the labels are, how many distractor columns surround the asked ones, the font, the
 * style variety and (charts) rotated ticks, value labels and colours. d1 is meant to be legible
 * on a 112×112 canvas (few labels, big font); d5 is a dense 40 × 12 table or a 16-bar chart.
 */
import type { LabelLength } from './labels.js';

export type Difficulty = 1 | 2 | 3 | 4 | 5;
export const DIFFICULTIES: readonly Difficulty[] = [1, 2, 3, 4, 5];

export type TableStyle = 'plain' | 'grid' | 'zebra' | 'header';
export const TABLE_STYLES: readonly TableStyle[] = ['plain', 'grid', 'zebra', 'header'];

export interface TableProfile {
  rows: readonly [number, number];
  /** Columns including the key column. */
  columns: readonly [number, number];
  fontSize: number;
  labelLengths: readonly LabelLength[];
  similarLabels: number;
  styles: readonly TableStyle[];
  /** Probability of thousands separators in big numbers. */
  grouping: number;
  /** Probability of a title line above the table. */
  title: number;
}

export interface ChartProfile {
  /** Number of labelled categories (bars, groups, line points). */
  categories: readonly [number, number];
  /** Series for grouped bars and line charts. */
  series: readonly [number, number];
  /** Default canvas when no --image-size is given. */
  canvas: readonly [number, number];
  fontSize: number;
  labelLengths: readonly LabelLength[];
  similarLabels: number;
  /** Probability of rotating tick labels even when they would fit flat. */
  rotate: number;
  /** Probability of printing each bar's value on the chart. */
  valueLabels: number;
  /** Probability of one colour per bar instead of one colour for the series. */
  colourful: number;
  /** Probability of horizontal grid lines. */
  gridLines: number;
}

export const TABLE_PROFILES: Readonly<Record<Difficulty, TableProfile>> = {
  1: { rows: [3, 3], columns: [3, 3], fontSize: 16, labelLengths: ['short'], similarLabels: 0, styles: ['plain', 'grid'], grouping: 0, title: 0 },
  2: { rows: [4, 6], columns: [3, 4], fontSize: 15, labelLengths: ['short', 'medium'], similarLabels: 0, styles: ['plain', 'grid', 'zebra'], grouping: 0, title: 0.3 },
  3: { rows: [7, 12], columns: [4, 6], fontSize: 14, labelLengths: ['medium'], similarLabels: 0.3, styles: TABLE_STYLES, grouping: 0.3, title: 0.5 },
  4: { rows: [13, 24], columns: [6, 9], fontSize: 13, labelLengths: ['medium', 'long'], similarLabels: 0.5, styles: TABLE_STYLES, grouping: 0.5, title: 0.5 },
  5: { rows: [25, 40], columns: [9, 12], fontSize: 12, labelLengths: ['medium', 'long'], similarLabels: 0.7, styles: TABLE_STYLES, grouping: 0.7, title: 0.5 },
};

export const CHART_PROFILES: Readonly<Record<Difficulty, ChartProfile>> = {
  1: { categories: [3, 3], series: [2, 2], canvas: [400, 300], fontSize: 16, labelLengths: ['short'], similarLabels: 0, rotate: 0, valueLabels: 1, colourful: 0, gridLines: 0.3 },
  2: { categories: [4, 6], series: [2, 2], canvas: [480, 340], fontSize: 14, labelLengths: ['short', 'medium'], similarLabels: 0, rotate: 0, valueLabels: 1, colourful: 0.2, gridLines: 0.5 },
  3: { categories: [6, 9], series: [2, 3], canvas: [600, 400], fontSize: 13, labelLengths: ['medium'], similarLabels: 0.2, rotate: 0.3, valueLabels: 0.8, colourful: 0.4, gridLines: 0.7 },
  4: { categories: [8, 12], series: [3, 3], canvas: [720, 460], fontSize: 12, labelLengths: ['medium', 'long'], similarLabels: 0.4, rotate: 0.6, valueLabels: 0.5, colourful: 0.5, gridLines: 0.8 },
  5: { categories: [12, 16], series: [3, 4], canvas: [860, 540], fontSize: 12, labelLengths: ['medium', 'long'], similarLabels: 0.6, rotate: 0.8, valueLabels: 0.2, colourful: 0.5, gridLines: 0.9 },
};

/** Smallest font the layout may shrink to before it gives up (px). Below this text is mush. */
export const MIN_FONT_SIZE = 7;

export function isDifficulty(value: number): value is Difficulty {
  return Number.isInteger(value) && value >= 1 && value <= 5;
}
