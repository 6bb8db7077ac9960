/**
 * One task: an image, a question, its answer, and the exact geometry the tools need.
 * Stored one per line in `tasks.jsonl`; `image` is relative to that file.
 * The JSON Schema for this record lives in `env/tasks/task-record.schema.json`.
 */
import type { ToolCall } from '../tools/types.js';
import type { ImageMetadata } from '../tools/metadata.js';

import type { TaskKind } from '../../protocol/rollout-record.js';
import type { GeometryFamily } from './geometry/questions.js';
import type { Direction, SearchFamily } from './search/families.js';

/**
 * The kinds of task (schemas/rollout-record.schema.json, where rollout records name them). `chart`:
 * a chart of a type without bands (e.g. a ChartQA pie), from a converted data set.
 */
export type { TaskKind };

/** The kinds the generator draws. */
export type GeneratedKind = Exclude<TaskKind, 'chart'>;

/** The families of chart and table questions (geometry diagrams and search scenes have their own, GeometryFamily and SearchFamily). */
export type QuestionFamily = 'lookup' | 'filter_sum' | 'count' | 'argmax' | 'argmin' | 'compare' | 'difference' | 'average' | 'list' | 'level';

export interface QueryCondition {
  column: string;
  /** eq: text equality (category columns); gt / lt: strict numeric comparison. */
  op: 'eq' | 'gt' | 'lt';
  value: string | number;
}

/**
 * A question in structured form. Semantics (answers computed from `table`):
 * - lookup: the value at `rows[0]`, `column`.
 * - filter_sum: sum of `column` over the rows matching `where`, or over the named `rows`.
 * - count: how many rows match `where`.
 * - argmax / argmin: the row key with the largest / smallest `column` (among rows matching
 *   `where`, if any); or, with `rows: [r]` and `columns`, the column name largest in row r.
 * - compare: of `rows: [a, b]`, the key whose `column` is larger; or, with `rows: [r]` and
 *   `columns: [s, t]`, the column name larger in row r.
 * - difference: |a − b| for `rows: [a, b]` in `column`, or `columns: [s, t]` in row `rows[0]`.
 * - average: mean of `column` (over rows matching `where`, if any), rounded half away from zero
 *   to 2 decimals, trailing zeros dropped.
 * - list: keys of the rows matching `where`, in table order.
 * - level: where the value at `rows[0]`, `column` lies against `bounds: [lo, hi]`: 'low' below
 *   lo, 'high' above hi, 'medium' between (a value equal to a bound is ill-posed).
 * - geometry families (above_below, same_side, inside_triangle, segments_cross, longer_segment,
 *   locate): see `points` below; answered from `meta.points`, not from a table.
 * - search families (text_on, colour_of, next_to, how_many): `colour`, `shape`, `text` and
 *   `direction` name the objects; answered from `meta.objects` (search/answer.ts).
 * Numbers are written as plain decimals, no thousands separators, no trailing zeros.
 */
export interface TaskQuery {
  family: QuestionFamily | GeometryFamily | SearchFamily;
  column?: string;
  rows?: string[];
  columns?: string[];
  where?: QueryCondition;
  /** level: the two bounds, in the column's displayed units, lo < hi. */
  bounds?: [number, number];
  /**
   * Geometry families: the point labels the question names, in role order (env/tasks/geometry/
   * questions.ts): above_below [A, B, C]; same_side [A, B, C, D]; inside_triangle [A, B, C, P, Q, R];
   * segments_cross [A, B, C, D]; longer_segment [O, A, B]; locate [C]. The answer is recomputed
   * from these and `meta.points`.
   */
  points?: string[];
  /** locate: how far (px) an answered point may be from the true one and still be right. */
  tolerance_px?: number;
  /** Search families: the colour named (text_on, next_to, how_many). */
  colour?: string;
  /** Search families: the shape named. */
  shape?: string;
  /** colour_of: the label that names the object. */
  text?: string;
  /** next_to: where the neighbour lies from the named object. */
  direction?: Direction;
}

/** What `vistool data gen` needs to regenerate a task byte for byte. */
export interface GeneratorProvenance {
  version: number;
  seed: number;
  split: 'train' | 'val' | 'test';
  index: number;
  attempt: number;
  kind: GeneratedKind;
  difficulty: number;
  /** The forced canvas, or null for the difficulty's default size. */
  image_size: [number, number] | null;
  /** `--family`: the question families allowed (absent: all). */
  families?: string[];
  /** `--labels`: the category labels given, in order (absent: drawn from the vocabulary). */
  labels?: string[];
  /** `--min-top-gap`: the extreme's least lead over the runner-up, as a fraction (absent: 0). */
  min_top_gap?: number;
  /** `--categories`: the chart's category count range [lo, hi] (absent: the difficulty's). */
  categories?: [number, number];
  /** `--shuffle-labels`: the given labels appear in a random order on each chart (absent: in the order given). */
  shuffle_labels?: boolean;
  /** Search, `--max-pixels`: the policy budget the need-for-zoom criterion assumed (absent: 50176). */
  max_pixels?: number;
  /** Search, `--legible-px`: the legible feature size the criterion assumed (absent: 6). */
  legible_px?: number;
}

export interface TaskRecord {
  id: string;
  /** Path of the image, relative to the JSONL file that holds the record. */
  image: string;
  question: string;
  answer: string | string[];
  kind: TaskKind;
  /** 1–5 for generated tasks; 0 when unknown (converted data sets). */
  difficulty: number;
  meta: ImageMetadata;
  /** The data the image was drawn from: header and rows, as displayed. */
  table?: { columns: string[]; rows: (string | number)[][] };
  /** The tool calls a good agent makes before answering (for SFT warm-up). */
  gold?: ToolCall[];
  /** Where the task came from: 'synthetic', 'chartqa', 'refocus', ... */
  source: string;
  /** Question family (lookup, filter_sum, count, argmax, ...), when known. */
  family?: string;
  /** The question in structured form (generated tasks), for the checker. */
  query?: TaskQuery;
  /** Generated tasks: the seed and options that reproduce them. */
  generator?: GeneratorProvenance;
}
