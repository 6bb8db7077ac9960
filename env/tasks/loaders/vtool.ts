/**
 * VTool-R1 rows → task records. VTool-R1 ships parquet; reading parquet is out of scope here:
 * export the rows to JSONL first (e.g. `pandas.read_parquet(f).to_json(out, orient="records",
 * lines=True)`, dropping the image bytes). Each line: {metadata, figure_path, query, answer,
 * figure_id?, prompt?}; `metadata` is a JSON string (or object):
 * {type: "table", figure_bbox, columns_bbox, row_starters} — row_starters maps each row's first
 * cell to its box, i.e. rows_bbox — or {type: "v_bar" | "h_bar", figure_bbox, x_values_bbox,
 * y_values_bbox} where an empty family is VTool's placeholder {"x1": "none"}. Bands are pixels
 * in VTool-R1; normalised boxes are detected. List answers use `|||`.
 */
import { dirname, resolve } from 'node:path';
import { at, fail, metadataFrom, needObject, needString, readAnswer, readBands, readBox, readItems, type Converted, type LoadResult, type Where } from './common.js';
import { existingImage } from './refocus.js';
import type { BBox } from '../../tools/metadata.js';

function readMetadata(value: unknown, where: Where): Record<string, unknown> {
  if (typeof value === 'string') {
    try {
      return needObject(JSON.parse(value), where, 'metadata');
    } catch (err) {
      if ((err as Error).name === 'ConvertError') throw err;
      return fail(where, 'metadata', 'a JSON string holding an object {type, figure_bbox, ...}', value);
    }
  }
  return needObject(value, where, 'metadata');
}

/**
 * VTool-R1's row_starters can begin with the header row, keyed by the header's first cell (the
 * first column's name). rows_bbox never holds the header (the rows tools always keep it, as
 * VTool-R1's do), so a topmost row whose label is a column name is left out.
 */
export function withoutHeaderRow(rows: Record<string, BBox>, columns: Record<string, BBox>): { bands: Record<string, BBox>; header: string | null } {
  const entries = Object.entries(rows);
  if (entries.length === 0) return { bands: rows, header: null };
  const [topLabel] = entries.reduce((top, entry) => (entry[1].y1 < top[1].y1 ? entry : top));
  if (!(topLabel in columns)) return { bands: rows, header: null };
  return { bands: Object.fromEntries(entries.filter(([label]) => label !== topLabel)), header: topLabel };
}

export async function loadVTool(src: string, imagesRoot?: string): Promise<LoadResult> {
  const file = resolve(src);
  const root = resolve(imagesRoot ?? dirname(file));
  const tasks: Converted[] = [];
  const skipped: LoadResult['skipped'] = [];
  const warnings: LoadResult['warnings'] = [];
  for (const { value, where } of await readItems(file)) {
    const row = needObject(value, where, '(row)');
    const meta = readMetadata(row.metadata, where);
    const type = needString(meta, 'type', where, 'metadata.type');
    const question = needString(row, 'query', where);
    const answer = readAnswer(row.answer, where, 'answer');
    const image = await existingImage(root, needString(row, 'figure_path', where), where, 'figure_path');
    const figure = meta.figure_bbox === undefined || meta.figure_bbox === null ? undefined : readBox(meta.figure_bbox, where, 'metadata.figure_bbox');
    const base = row.figure_id ?? row.id ?? (where.line ?? where.item);
    const id = `vtool-${String(base)}`;
    if (type === 'table') {
      const columns = readBands(meta.columns_bbox, where, 'metadata.columns_bbox');
      const rows = withoutHeaderRow(readBands(meta.row_starters ?? meta.rows_bbox, where, 'metadata.row_starters'), columns);
      if (rows.header !== null) warnings.push({ where: at(where), reason: `row_starters begins with the header row ('${rows.header}'): kept out of rows_bbox, so the rows tools leave it visible as VTool-R1 does` });
      if (Object.keys(columns).length === 0 && Object.keys(rows.bands).length === 0) warnings.push({ where: at(where), reason: 'table without columns_bbox or row_starters: converted without bands' });
      tasks.push({ record: { id, question, answer, kind: 'table', difficulty: 0, source: 'vtool', meta: metadataFrom({ figure_bbox: figure, columns_bbox: columns, rows_bbox: rows.bands }) }, sourceImage: image });
    } else if (type === 'v_bar' || type === 'h_bar') {
      const x = readBands(meta.x_values_bbox, where, 'metadata.x_values_bbox');
      const y = readBands(meta.y_values_bbox, where, 'metadata.y_values_bbox');
      const parts = type === 'v_bar' ? { figure_bbox: figure, x_values_bbox: x } : { figure_bbox: figure, y_values_bbox: y };
      if (Object.keys(type === 'v_bar' ? x : y).length === 0) warnings.push({ where: at(where), reason: `${type} without its bands: converted without bands` });
      tasks.push({ record: { id, question, answer, kind: type === 'v_bar' ? 'vbar' : 'hbar', difficulty: 0, source: 'vtool', meta: metadataFrom(parts) }, sourceImage: image });
    } else {
      fail(where, 'metadata.type', '"table", "v_bar" or "h_bar"', type);
    }
  }
  return { tasks, skipped, warnings };
}
