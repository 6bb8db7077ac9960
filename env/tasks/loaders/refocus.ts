/**
 * ReFocus's data → task records. ReFocus ships two kinds of file, and one file holds one shape;
 * each record is read by the shape it has (see env/tasks/README.md, "Loaders"):
 *
 * - training lines, `chartqa_vcot/*.jsonl`: {id, query, answer, source: "h_bar" | "v_bar",
 *   x_values_bbox, y_values_bbox, figure_bbox, conversations, focus_areas}, the image at
 *   `conversations[0].images[0]` (or `images[0]`, `figure_path`);
 * - the evaluation sets with boxes, `data/*_wbb.json` and `data/charxiv-subfigures.json`: an
 *   object keyed by question id, each record {query, answer, figure_path} plus
 *   - ChartQA bars (`chartQA_{h,v}_bar_wbb`): `x_values` / `y_values` with their boxes as parallel
 *     lists `x_bboxes` / `y_bboxes`;
 *   - TableVQA (`tablevqa_wbb`, `tablevqa-vtabfact_wbb`, `table-vwtq_syn_wbb`): `column_headers`
 *     with `columns_bbox`, `row_starters` with `rows_bbox` (parallel lists; the first row starter
 *     is the header row, which ReFocus's rows tools always skip);
 *   - CharXiv subfigures: `prompt` (the question) and no boxes; ReFocus finds subplot boxes with
 *     OpenCV when it builds the prompt.
 *
 * Boxes are normalised in ReFocus's data (its tools scale them by the image size); pixel boxes are
 * detected and kept as pixels. Image paths are relative to ReFocus's repository root, so the
 * default root is tried at the source file's folder and the two above it (`data/x.json` holds
 * `data/...` paths); `--images-root` names it outright.
 */
import { basename, dirname, resolve } from 'node:path';
import type { BBox } from '../../tools/metadata.js';
import { at, exists, fail, imagePathOf, isObject, metadataFrom, needObject, needString, readAnswer, readBands, readBox, readItems, type Converted, type LoadResult, type Where } from './common.js';

export function imageField(item: Record<string, unknown>, where: Where): string {
  const conversations = item.conversations;
  if (Array.isArray(conversations) && isObject(conversations[0]) && Array.isArray(conversations[0].images) && typeof conversations[0].images[0] === 'string') return conversations[0].images[0];
  if (Array.isArray(item.images) && typeof item.images[0] === 'string') return item.images[0];
  if (typeof item.figure_path === 'string') return item.figure_path;
  if (typeof item.image === 'string') return item.image;
  return fail(where, 'conversations[0].images[0]', 'the image path (or images[0], figure_path, image)', undefined);
}

/** The image at `path` under the first root that has it; the error names every place tried. */
export async function existingImage(roots: string | string[], path: string, where: Where, field: string): Promise<string> {
  const tried = (Array.isArray(roots) ? roots : [roots]).map((root) => imagePathOf(root, path));
  for (const full of tried) if (await exists(full)) return full;
  const places = tried.length === 1 ? `at ${tried[0]}` : `at one of ${[...new Set(tried)].join(', ')}`;
  return fail(where, field, `an image file ${places} (set --images-root to the folder the paths are relative to)`, path);
}

/** One record as read, before its image is found: its own warnings go with it. */
type ReadRecord = { record: Converted['record']; imagePath: string; imageField: string; warnings: string[] };

function questionOf(item: Record<string, unknown>, where: Where): string {
  return typeof item.query === 'string' && item.query.trim() !== '' ? item.query : needString(item, 'prompt', where, 'query');
}

/** `names[i]` labels `boxes[i]`, as ReFocus's scripts zip them; empty or null names mean no bands. */
function zipBands(names: unknown, boxes: unknown, where: Where, namesField: string, boxesField: string, warnings: string[]): Record<string, BBox> {
  if (names === undefined || names === null || (Array.isArray(names) && names.length === 0)) return {};
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string' || typeof n === 'number')) return fail(where, namesField, 'a list of labels', names);
  if (!Array.isArray(boxes)) return fail(where, boxesField, `a list of ${names.length} boxes, one per ${namesField} entry`, boxes);
  // ReFocus indexes the boxes by the names' positions: fewer boxes fail there too; extra ones go unused.
  if (boxes.length < names.length) fail(where, boxesField, `${names.length} boxes, one per ${namesField} entry`, `${boxes.length} boxes`);
  if (boxes.length > names.length) warnings.push(`${boxesField} has ${boxes.length} boxes for ${names.length} ${namesField}: the last ${boxes.length - names.length} are unused, as in ReFocus`);
  const out: Record<string, BBox> = {};
  names.forEach((name, i) => {
    const label = String(name);
    if (label in out) warnings.push(`${namesField} repeats '${label}': the later box is kept, as in ReFocus`);
    out[label] = readBox(boxes[i], where, `${boxesField}[${i}]`);
  });
  return out;
}

function chartKindOf(x: Record<string, BBox>, y: Record<string, BBox>, file: string, where: Where): 'vbar' | 'hbar' | 'chart' {
  const hasX = Object.keys(x).length > 0;
  const hasY = Object.keys(y).length > 0;
  if (hasX !== hasY) return hasX ? 'vbar' : 'hbar';
  if (!hasX) return 'chart';
  const name = basename(file).toLowerCase();
  if (name.includes('h_bar')) return 'hbar';
  if (name.includes('v_bar')) return 'vbar';
  return fail(where, 'x_values', 'x values (a vertical bar chart) or y values (a horizontal one), not both, or a file named *h_bar* / *v_bar*', 'both');
}

function readVcotLine(item: Record<string, unknown>, where: Where): ReadRecord {
  const warnings: string[] = [];
  const id = needString(item, 'id', where);
  const question = needString(item, 'query', where);
  const answer = readAnswer(item.answer, where, 'answer');
  const source = needString(item, 'source', where);
  if (source !== 'h_bar' && source !== 'v_bar') fail(where, 'source', '"h_bar" or "v_bar"', source);
  const x = readBands(item.x_values_bbox, where, 'x_values_bbox');
  const y = readBands(item.y_values_bbox, where, 'y_values_bbox');
  const figure = item.figure_bbox === undefined || item.figure_bbox === null ? undefined : readBox(item.figure_bbox, where, 'figure_bbox');
  const bands = source === 'v_bar' ? x : y;
  if (Object.keys(bands).length === 0) warnings.push(`${source} record without ${source === 'v_bar' ? 'x' : 'y'}_values_bbox: converted without bands`);
  const meta = metadataFrom(source === 'v_bar' ? { figure_bbox: figure, x_values_bbox: x } : { figure_bbox: figure, y_values_bbox: y });
  const record = { id: `refocus-${id}`, question, answer, kind: source === 'v_bar' ? 'vbar' : 'hbar', difficulty: 0, source: 'refocus', meta } as const;
  return { record, imagePath: imageField(item, where), imageField: 'conversations[0].images[0]', warnings };
}

/** The evaluation sets' records (ChartQA bars, TableVQA, CharXiv subfigures): keyed by id in the file. */
function readTestRecord(item: Record<string, unknown>, key: string | undefined, file: string, where: Where): ReadRecord {
  const warnings: string[] = [];
  const id = key ?? (typeof item.id === 'string' || typeof item.id === 'number' ? String(item.id) : String(where.line ?? where.item));
  const answer = readAnswer(item.answer, where, 'answer');
  const imagePath = needString(item, 'figure_path', where);
  if ('column_headers' in item || 'row_starters' in item) {
    const columns = zipBands(item.column_headers, item.columns_bbox, where, 'column_headers', 'columns_bbox', warnings);
    const rowsWithHeader = zipBands(item.row_starters, item.rows_bbox, where, 'row_starters', 'rows_bbox', warnings);
    // ReFocus's rows tools skip the first row starter (the header row), so it is no row band here.
    const rows = Object.fromEntries(Object.entries(rowsWithHeader).slice(1));
    if (Object.keys(columns).length === 0 && Object.keys(rows).length === 0) warnings.push('table without column_headers or row_starters: converted without bands (OCR grounding finds them at episode start)');
    const record = { id: `refocus-tablevqa-${id}`, question: questionOf(item, where), answer, kind: 'table', difficulty: 0, source: 'refocus/tablevqa', meta: metadataFrom({ columns_bbox: columns, rows_bbox: rows }) } as const;
    return { record, imagePath, imageField: 'figure_path', warnings };
  }
  if ('x_bboxes' in item || 'y_bboxes' in item) {
    const x = zipBands(item.x_values, item.x_bboxes, where, 'x_values', 'x_bboxes', warnings);
    const y = zipBands(item.y_values, item.y_bboxes, where, 'y_values', 'y_bboxes', warnings);
    const kind = chartKindOf(x, y, file, where);
    if (kind === 'chart') warnings.push('chart without x_values or y_values: converted without bands (OCR grounding finds them at episode start)');
    const meta = metadataFrom(kind === 'vbar' ? { x_values_bbox: x } : kind === 'hbar' ? { y_values_bbox: y } : {});
    const record = { id: `refocus-chartqa-${id}`, question: questionOf(item, where), answer, kind, difficulty: 0, source: 'refocus/chartqa', meta } as const;
    return { record, imagePath, imageField: 'figure_path', warnings };
  }
  // CharXiv subfigures: ReFocus finds the subplots with OpenCV at prompt time (one warning per file says so).
  const record = { id: `refocus-charxiv-${id}`, question: needString(item, 'prompt', where), answer, kind: 'chart', difficulty: 0, source: 'refocus/charxiv', meta: {} } as const;
  return { record, imagePath, imageField: 'figure_path', warnings };
}

function isVcotLine(item: Record<string, unknown>): boolean {
  return 'source' in item || 'conversations' in item || 'x_values_bbox' in item || 'y_values_bbox' in item;
}

function isTestRecord(item: Record<string, unknown>): boolean {
  return 'figure_path' in item && ('column_headers' in item || 'row_starters' in item || 'x_bboxes' in item || 'y_bboxes' in item || 'prompt' in item);
}

export async function loadReFocus(src: string, imagesRoot?: string): Promise<LoadResult> {
  const file = resolve(src);
  const roots = imagesRoot !== undefined ? [resolve(imagesRoot)] : [dirname(file), dirname(dirname(file)), dirname(dirname(dirname(file)))];
  const tasks: Converted[] = [];
  const skipped: LoadResult['skipped'] = [];
  const warnings: LoadResult['warnings'] = [];
  for (const { value, where, key } of await readItems(file)) {
    const item = needObject(value, where, '(record)');
    let read: ReadRecord;
    if (isTestRecord(item)) read = readTestRecord(item, key, file, where);
    else if (isVcotLine(item)) read = readVcotLine(item, where);
    else {
      return fail(where, '(record)', 'a ReFocus record: a chartqa_vcot line {id, query, answer, source, x_values_bbox, ...} or an evaluation record {query|prompt, answer, figure_path} with x_bboxes / y_bboxes, column_headers / row_starters, or none (CharXiv subfigures)', Object.keys(item));
    }
    const image = await existingImage(roots, read.imagePath, where, read.imageField);
    for (const reason of read.warnings) warnings.push({ where: at(where), reason });
    tasks.push({ record: read.record, sourceImage: image });
  }
  const subfigures = tasks.filter((t) => t.record.source === 'refocus/charxiv').length;
  if (subfigures > 0) warnings.push({ where: at({ file }), reason: `${subfigures} CharXiv subfigure records carry no boxes (ReFocus finds subplots with OpenCV when prompting): OCR grounding finds bands when an episode starts` });
  return { tasks, skipped, warnings };
}
