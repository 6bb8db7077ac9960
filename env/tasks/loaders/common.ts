/**
 * What every data-set loader shares: reading JSON / JSONL with positions, errors that name the
 * file, the line (or item), the field and what was expected, unit detection for boxes, bands
 * built from tick-label boxes the way ReFocus builds them, and writing the converted folder
 * (DIR/tasks.jsonl + DIR/images/, images copied, atomically). Loaders never guess silently: a
 * record they cannot use is either an error or a counted, reported skip.
 */
import { access, readFile, copyFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { basename, extname, join } from 'node:path';
import type { BBox, ImageMetadata } from '../../tools/metadata.js';
import { writeDirAtomically } from '../atomic-dir.js';
import { validateTaskRecord } from '../load.js';
import type { TaskRecord } from '../record.js';
import { recordLine } from '../record-line.js';

export class ConvertError extends Error {
  override name = 'ConvertError';
}

/** Where a value came from: a file, and a line (JSONL) or an item index (JSON array). */
export interface Where {
  file: string;
  line?: number;
  item?: number;
}

export function at(where: Where): string {
  return where.line !== undefined ? `${where.file}:${where.line}` : where.item !== undefined ? `${where.file} [item ${where.item}]` : where.file;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function fail(where: Where, field: string, expected: string, got?: unknown): never {
  throw new ConvertError(`${at(where)}: ${field}: expected ${expected}, got ${describe(got)}`);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function needObject(value: unknown, where: Where, field: string): Record<string, unknown> {
  if (!isObject(value)) fail(where, field, 'an object', value);
  return value;
}

export function needString(obj: Record<string, unknown>, key: string, where: Where, field = key): string {
  const value = obj[key];
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'number') return String(value);
  return fail(where, field, 'a non-empty string', value);
}

/** The items of a .json file (an array, or an object of items) or a .jsonl file, with positions. */
export async function readItems(file: string): Promise<{ value: unknown; where: Where; key?: string }[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConvertError(`cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (file.endsWith('.jsonl')) {
    const out: { value: unknown; where: Where }[] = [];
    text.split('\n').forEach((raw, i) => {
      if (raw.trim() === '') return;
      const where = { file, line: i + 1 };
      try {
        out.push({ value: JSON.parse(raw), where });
      } catch (err) {
        throw new ConvertError(`${at(where)}: not valid JSON (${(err as Error).message}); expected one JSON object per line`, { cause: err });
      }
    });
    return out;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConvertError(`${file}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (Array.isArray(parsed)) return parsed.map((value, i) => ({ value, where: { file, item: i } }));
  if (!isObject(parsed)) fail({ file }, '(file)', 'a JSON array of records (or an object of records)', parsed);
  // An object of records (ReFocus's and CharXiv's files): each record's key is often its only id.
  return Object.entries(parsed).map(([key, value], i) => ({ value, key, where: { file, item: i } }));
}

export function readBox(value: unknown, where: Where, field: string): BBox {
  const o = needObject(value, where, field);
  const box: Partial<BBox> = {};
  for (const k of ['x1', 'y1', 'x2', 'y2'] as const) {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isFinite(v)) fail(where, `${field}.${k}`, 'a finite number', v);
    box[k] = v;
  }
  return box as BBox;
}

/** Label → box maps as ReFocus and VTool-R1 store them; `{"x1": "none"}` (VTool's empty placeholder) reads as empty. */
const COORDINATE_KEYS = new Set(['x1', 'y1', 'x2', 'y2']);

/**
 * A label → box map. Two shapes mean "no bands here": VTool's placeholder {"x1": "none"}, and
 * what `datasets` makes of a parquet struct column: every label of every row as a key, null
 * where this row has no such label, and the placeholder's "x1" key (null, or "none") beside real
 * labels. Null entries and coordinate keys without a box are therefore dropped, not read as bands.
 */
export function readBands(value: unknown, where: Where, field: string): Record<string, BBox> {
  if (value === undefined || value === null) return {};
  const o = needObject(value, where, field);
  const out: Record<string, BBox> = {};
  for (const [label, box] of Object.entries(o)) {
    if (box === null || (COORDINATE_KEYS.has(label) && !isObject(box))) continue;
    out[label] = readBox(box, where, `${field}["${label}"]`);
  }
  return out;
}

/** Normalised when every coordinate lies in [0, 1] (a pixel box that small would be absurd). */
export function detectUnit(boxes: BBox[]): 'pixels' | 'normalized' {
  if (boxes.length === 0) return 'pixels';
  return boxes.every((b) => [b.x1, b.y1, b.x2, b.y2].every((v) => v >= 0 && v <= 1)) ? 'normalized' : 'pixels';
}

export function metadataFrom(parts: Pick<ImageMetadata, 'figure_bbox' | 'columns_bbox' | 'rows_bbox' | 'x_values_bbox' | 'y_values_bbox'>): ImageMetadata {
  const boxes: BBox[] = [];
  if (parts.figure_bbox) boxes.push(parts.figure_bbox);
  for (const k of ['columns_bbox', 'rows_bbox', 'x_values_bbox', 'y_values_bbox'] as const) boxes.push(...Object.values(parts[k] ?? {}));
  const meta: ImageMetadata = { unit: detectUnit(boxes), source: 'dataset' };
  if (parts.figure_bbox) meta.figure_bbox = parts.figure_bbox;
  for (const k of ['columns_bbox', 'rows_bbox', 'x_values_bbox', 'y_values_bbox'] as const) {
    const bands = parts[k];
    if (bands && Object.keys(bands).length > 0) meta[k] = bands;
  }
  return meta;
}

/** A tick label's box as annotated (pixels, top-left corner plus size). */
export interface TickLabel {
  label: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

function splitBands(centres: number[], lo: number, hi: number, own: [number, number][]): [number, number][] {
  return centres.map((c, i) => {
    const prev = centres[i - 1];
    const next = centres[i + 1];
    const half = next !== undefined ? (next - c) / 2 : prev !== undefined ? (c - prev) / 2 : Infinity;
    const halfBefore = prev !== undefined ? (c - prev) / 2 : half;
    let a = prev !== undefined ? (prev + c) / 2 : Math.max(lo, c - halfBefore);
    let b = next !== undefined ? (c + next) / 2 : Math.min(hi, c + half);
    // A band always holds its own label, even where the plot box says otherwise.
    const [ownA, ownB] = own[i] as [number, number];
    if (prev === undefined) a = Math.min(a, ownA);
    if (next === undefined) b = Math.max(b, ownB);
    return [Math.floor(a), Math.ceil(b)];
  });
}

/**
 * Vertical-bar / line bands from x tick labels (ReFocus helper/get_coordinates_for_chart.py,
 * get_x_bbox_central): labels sorted left to right, bands split half-way between neighbouring
 * label centres, the outer edges half a spacing beyond the outer centres clamped to the plot
 * (one label: the whole plot width); top at the plot top, bottom at the lowest label's bottom.
 */
export function xBandsFromLabels(labels: TickLabel[], plot: BBox): Record<string, BBox> {
  const sorted = [...labels].sort((a, b) => a.x + a.w / 2 - (b.x + b.w / 2));
  const spans = splitBands(sorted.map((l) => l.x + l.w / 2), plot.x1, plot.x2, sorted.map((l) => [l.x, l.x + l.w]));
  const bottom = Math.ceil(Math.max(plot.y2, ...sorted.map((l) => l.y + l.h)));
  const out: Record<string, BBox> = {};
  sorted.forEach((l, i) => {
    const [x1, x2] = spans[i] as [number, number];
    out[l.label] = { x1, y1: Math.floor(plot.y1), x2, y2: bottom };
  });
  return out;
}

/**
 * Horizontal-bar bands from y tick labels (ReFocus get_y_bbox_central): labels sorted top to
 * bottom, split half-way between neighbouring centres, outer edges half a spacing out clamped to
 * the plot; full width as ReFocus draws them, 5 px in from each image edge.
 */
export function yBandsFromLabels(labels: TickLabel[], plot: BBox, imageWidth: number): Record<string, BBox> {
  const sorted = [...labels].sort((a, b) => a.y + a.h / 2 - (b.y + b.h / 2));
  const spans = splitBands(sorted.map((l) => l.y + l.h / 2), plot.y1, plot.y2, sorted.map((l) => [l.y, l.y + l.h]));
  const out: Record<string, BBox> = {};
  sorted.forEach((l, i) => {
    const [y1, y2] = spans[i] as [number, number];
    out[l.label] = { x1: 5, y1, x2: imageWidth - 5, y2 };
  });
  return out;
}

/** A converted record, before its image is copied next to the JSONL. */
export interface Converted {
  record: Omit<TaskRecord, 'image'>;
  /** Absolute path of the source image. */
  sourceImage: string;
}

export interface LoadResult {
  tasks: Converted[];
  /** Records deliberately not converted, with the reason, counted: never dropped silently. */
  skipped: { where: string; reason: string }[];
  /** Records converted with less than the source had (e.g. no bands), with the reason. */
  warnings: { where: string; reason: string }[];
}

export interface ConvertSummary {
  out: string;
  tasks: number;
  images: number;
  skipped: LoadResult['skipped'];
  warnings: LoadResult['warnings'];
}

/** Writes DIR/tasks.jsonl and DIR/images/ (each source image copied once), atomically. */
export async function writeConverted(outDir: string, result: LoadResult): Promise<ConvertSummary> {
  const names = new Map<string, string>();
  const used = new Set<string>();
  for (const t of result.tasks) {
    if (names.has(t.sourceImage)) continue;
    const ext = extname(t.sourceImage) || '.png';
    const stem = basename(t.sourceImage, ext).replace(/[^A-Za-z0-9._-]/g, '_') || 'image';
    let name = `${stem}${ext}`;
    for (let k = 2; used.has(name); k++) name = `${stem}-${k}${ext}`;
    used.add(name);
    names.set(t.sourceImage, name);
  }
  await writeDirAtomically(outDir, async (tmp) => {
    for (const [source, name] of names) {
      await copyFile(source, join(tmp, 'images', name)).catch((err: Error) => {
        throw new ConvertError(`cannot copy image ${source}: ${err.message}`, { cause: err });
      });
    }
    const out = createWriteStream(join(tmp, 'tasks.jsonl'));
    // Several questions often share one source id (one figure, many questions): number repeats.
    const seen = new Map<string, number>();
    for (const t of result.tasks) {
      const n = (seen.get(t.record.id) ?? 0) + 1;
      seen.set(t.record.id, n);
      const id = n === 1 ? t.record.id : `${t.record.id}-${n}`;
      const record = { ...t.record, id, image: `images/${names.get(t.sourceImage)}` } as TaskRecord;
      const problems = validateTaskRecord(record);
      if (problems.length > 0) throw new ConvertError(`converted record ${record.id} does not match the task schema: ${problems.join('; ')}`);
      if (!out.write(recordLine(record))) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
  });
  return { out: outDir, tasks: result.tasks.length, images: names.size, skipped: result.skipped, warnings: result.warnings };
}

/** Splits ReFocus / VTool-R1 list answers (`|||` or `||`) into a list. */
export function readAnswer(value: unknown, where: Where, field: string): string | string[] {
  if (Array.isArray(value)) {
    const items = value.map((v) => String(v).trim()).filter((v) => v !== '');
    if (items.length === 0) fail(where, field, 'a non-empty answer', value);
    return items.length === 1 ? (items[0] as string) : items;
  }
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string' || value.trim() === '') fail(where, field, 'a non-empty answer', value);
  const stripped = value.replace(/^\s*<answer>([\s\S]*)<\/answer>\s*$/, '$1').trim();
  if (stripped.includes('||')) {
    const parts = stripped.split(/\|\|\|?/).map((p) => p.trim()).filter((p) => p !== '');
    if (parts.length > 1) return parts;
  }
  if (stripped === '') fail(where, field, 'a non-empty answer', value);
  return stripped;
}

export async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, () => false);
}

export function imagePathOf(root: string, path: string): string {
  return path.startsWith('/') ? path : join(root, path);
}
