/**
 * veRL-style rows → task records. Input: JSONL (a parquet data set exported to JSON lines) of
 * {data_source, prompt: [{role, content}], images: [path | {image: path} | {path} | {bytes: base64}],
 * reward_model: {ground_truth}, extra_info}. The question is the last user message with image
 * placeholders (<image>) removed, or extra_info.question when present. Geometry is read from
 * extra_info.metadata (VTool-R1's metadata object or JSON string) when present. Inline image
 * bytes are written out next to the converted set.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import type { TaskKind } from '../record.js';
import { fail, isObject, metadataFrom, needObject, readAnswer, readBands, readBox, readItems, type Converted, type LoadResult, type Where } from './common.js';
import { existingImage } from './refocus.js';

function question(row: Record<string, unknown>, where: Where): string {
  const extra = isObject(row.extra_info) ? row.extra_info : {};
  if (typeof extra.question === 'string' && extra.question.trim() !== '') return extra.question.trim();
  const prompt = row.prompt;
  if (!Array.isArray(prompt)) return fail(where, 'prompt', 'a list of chat messages [{role, content}]', prompt);
  const user = [...prompt].reverse().find((m) => isObject(m) && m.role === 'user');
  if (!isObject(user)) return fail(where, 'prompt', 'a message with role "user"', prompt);
  const content = user.content;
  const text = typeof content === 'string'
    ? content
    : Array.isArray(content) ? content.filter((p) => isObject(p) && p.type === 'text').map((p) => String((p as Record<string, unknown>).text ?? '')).join('\n') : '';
  const cleaned = text.replace(/<image>/g, '').trim();
  if (cleaned === '') return fail(where, 'prompt[user].content', 'the question text', content);
  return cleaned;
}

async function imageOf(row: Record<string, unknown>, where: Where, root: string, inlineDir: string, index: number): Promise<string> {
  const images = row.images;
  const first: unknown = Array.isArray(images) ? images[0] : undefined;
  if (typeof first === 'string') return existingImage(root, first, where, 'images[0]');
  if (isObject(first)) {
    const path = first.image ?? first.path;
    if (typeof path === 'string' && path !== '') return existingImage(root, path, where, 'images[0].path');
    if (typeof first.bytes === 'string') {
      await mkdir(inlineDir, { recursive: true });
      const out = join(inlineDir, `verl-${String(index).padStart(6, '0')}.png`);
      await writeFile(out, Buffer.from(first.bytes, 'base64'));
      return out;
    }
  }
  return fail(where, 'images[0]', 'an image path, {image: path}, {path} or {bytes: base64}', first);
}

/** `inlineDir` receives images given inline as bytes (the caller deletes it after writing the converted set). */
export async function loadVerl(src: string, imagesRoot?: string, inlineDir = join(tmpdir(), `vistool-verl-${process.pid}`)): Promise<LoadResult> {
  const file = resolve(src);
  const root = resolve(imagesRoot ?? dirname(file));
  const tasks: Converted[] = [];
  const items = await readItems(file);
  for (const [i, { value, where }] of items.entries()) {
    const row = needObject(value, where, '(row)');
    const reward = needObject(row.reward_model, where, 'reward_model');
    const answer = readAnswer(reward.ground_truth, where, 'reward_model.ground_truth');
    const source = typeof row.data_source === 'string' && row.data_source !== '' ? row.data_source : 'verl';
    const extra = isObject(row.extra_info) ? row.extra_info : {};
    let kind: TaskKind = 'chart';
    let meta = metadataFrom({});
    const rawMeta = extra.metadata;
    if (rawMeta !== undefined) {
      let m: unknown = rawMeta;
      if (typeof rawMeta === 'string') {
        try {
          m = JSON.parse(rawMeta);
        } catch {
          fail(where, 'extra_info.metadata', 'a JSON string holding an object {type, figure_bbox, ...}', rawMeta);
        }
      }
      const o = needObject(m, where, 'extra_info.metadata');
      const figure = o.figure_bbox ? readBox(o.figure_bbox, where, 'extra_info.metadata.figure_bbox') : undefined;
      if (o.type === 'table') {
        kind = 'table';
        meta = metadataFrom({ figure_bbox: figure, columns_bbox: readBands(o.columns_bbox, where, 'extra_info.metadata.columns_bbox'), rows_bbox: readBands(o.row_starters ?? o.rows_bbox, where, 'extra_info.metadata.row_starters') });
      } else if (o.type === 'v_bar' || o.type === 'h_bar') {
        kind = o.type === 'v_bar' ? 'vbar' : 'hbar';
        meta = o.type === 'v_bar'
          ? metadataFrom({ figure_bbox: figure, x_values_bbox: readBands(o.x_values_bbox, where, 'extra_info.metadata.x_values_bbox') })
          : metadataFrom({ figure_bbox: figure, y_values_bbox: readBands(o.y_values_bbox, where, 'extra_info.metadata.y_values_bbox') });
      }
    }
    const idBase = extra.index ?? i;
    tasks.push({
      record: { id: `verl-${String(idBase)}`, question: question(row, where), answer, kind, difficulty: 0, source, meta },
      sourceImage: await imageOf(row, where, root, inlineDir, i),
    });
  }
  return { tasks, skipped: [], warnings: [] };
}
