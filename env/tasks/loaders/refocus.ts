/**
 * ReFocus `chartqa_vcot/*.jsonl` → task records. Each line: {id, query, answer, source: "h_bar" |
 * "v_bar", x_values_bbox, y_values_bbox, figure_bbox, conversations, focus_areas}; the image path
 * is `conversations[0].images[0]` (or `images[0]`, or `figure_path`), relative to `imagesRoot`
 * (default: the JSONL's folder; ReFocus paths such as data/ChartQAtest/png/x.png are relative to
 * its repository root). Boxes are normalised in the released data; pixel boxes are detected and
 * kept as pixels (unit set accordingly).
 */
import { access } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { at, fail, imagePathOf, isObject, metadataFrom, needObject, needString, readAnswer, readBands, readBox, readItems, type Converted, type LoadResult, type Where } from './common.js';

export function imageField(item: Record<string, unknown>, where: Where): string {
  const conversations = item.conversations;
  if (Array.isArray(conversations) && isObject(conversations[0]) && Array.isArray(conversations[0].images) && typeof conversations[0].images[0] === 'string') return conversations[0].images[0];
  if (Array.isArray(item.images) && typeof item.images[0] === 'string') return item.images[0];
  if (typeof item.figure_path === 'string') return item.figure_path;
  if (typeof item.image === 'string') return item.image;
  return fail(where, 'conversations[0].images[0]', 'the image path (or images[0], figure_path, image)', undefined);
}

export async function existingImage(root: string, path: string, where: Where, field: string): Promise<string> {
  const full = imagePathOf(root, path);
  await access(full).catch(() => fail(where, field, `an image file at ${full} (set --images-root to the folder the paths are relative to)`, path));
  return full;
}

export async function loadReFocus(src: string, imagesRoot?: string): Promise<LoadResult> {
  const file = resolve(src);
  const root = resolve(imagesRoot ?? dirname(file));
  const tasks: Converted[] = [];
  const skipped: LoadResult['skipped'] = [];
  const warnings: LoadResult['warnings'] = [];
  for (const { value, where } of await readItems(file)) {
    const item = needObject(value, where, '(record)');
    const id = needString(item, 'id', where);
    const question = needString(item, 'query', where);
    const answer = readAnswer(item.answer, where, 'answer');
    const source = needString(item, 'source', where);
    if (source !== 'h_bar' && source !== 'v_bar') fail(where, 'source', '"h_bar" or "v_bar"', source);
    const x = readBands(item.x_values_bbox, where, 'x_values_bbox');
    const y = readBands(item.y_values_bbox, where, 'y_values_bbox');
    const figure = item.figure_bbox === undefined || item.figure_bbox === null ? undefined : readBox(item.figure_bbox, where, 'figure_bbox');
    const bands = source === 'v_bar' ? x : y;
    if (Object.keys(bands).length === 0) warnings.push({ where: at(where), reason: `${source} record without ${source === 'v_bar' ? 'x' : 'y'}_values_bbox: converted without bands` });
    const image = await existingImage(root, imageField(item, where), where, 'conversations[0].images[0]');
    const meta = metadataFrom(source === 'v_bar' ? { figure_bbox: figure, x_values_bbox: x } : { figure_bbox: figure, y_values_bbox: y });
    tasks.push({ record: { id: `refocus-${id}`, question, answer, kind: source === 'v_bar' ? 'vbar' : 'hbar', difficulty: 0, source: 'refocus', meta }, sourceImage: image });
  }
  return { tasks, skipped, warnings };
}
