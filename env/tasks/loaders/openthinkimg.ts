/**
 * OpenThinkIMG → task records. Input: a JSON array or JSONL of {image_path, question,
 * solution | label}; `solution` may wrap the answer in <answer>…</answer>. No geometry comes
 * with these, so records have empty metadata (kind "chart": the tools without bands — zoom,
 * lines, points — still apply). Image paths are relative to `imagesRoot` (default: the file's folder).
 */
import { dirname, resolve } from 'node:path';
import { fail, metadataFrom, needObject, needString, readAnswer, readItems, type Converted, type LoadResult } from './common.js';
import { existingImage } from './refocus.js';

export async function loadOpenThinkIMG(src: string, imagesRoot?: string): Promise<LoadResult> {
  const file = resolve(src);
  const root = resolve(imagesRoot ?? dirname(file));
  const tasks: Converted[] = [];
  for (const { value, where } of await readItems(file)) {
    const item = needObject(value, where, '(record)');
    const question = needString(item, 'question', where);
    const raw = item.solution ?? item.label;
    if (raw === undefined) fail(where, 'solution', 'the answer in "solution" or "label"', raw);
    const answer = readAnswer(raw, where, item.solution !== undefined ? 'solution' : 'label');
    const image = await existingImage(root, needString(item, 'image_path', where), where, 'image_path');
    const n = where.line ?? where.item ?? 0;
    tasks.push({ record: { id: `openthinkimg-${String(n).padStart(6, '0')}`, question, answer, kind: 'chart', difficulty: 0, source: 'openthinkimg', meta: metadataFrom({}) }, sourceImage: image });
  }
  return { tasks, skipped: [], warnings: [] };
}
