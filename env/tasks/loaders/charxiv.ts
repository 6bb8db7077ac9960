/**
 * CharXiv → task records. Input: the reasoning question file as the CharXiv repository ships it
 * (`data/reasoning_val.json` or `reasoning_test.json`: an object keyed by figure id, each
 * {figure_id, query, answer, inst_category, qa_source}); images are `<images-root>/<figure_id>.jpg`
 * (default: the `images/` folder beside the `data/` folder, CharXiv's layout).
 *
 * Scientific figures come with no bands: records get kind "chart" and empty metadata, and the env
 * server's OCR grounding finds the bands when an episode starts. `family` keeps CharXiv's answer
 * category (1 text in chart, 2 text in general, 3 number in chart, 4 number in general).
 *
 * The descriptive files are refused: their items hold template ids (`qids`) whose question texts
 * live in CharXiv's code, not in the data.
 */
import { access } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { at, fail, needObject, readAnswer, readItems, type Converted, type LoadResult } from './common.js';

const CATEGORY_FAMILY: Readonly<Record<number, string>> = { 1: 'text-in-chart', 2: 'text-in-general', 3: 'number-in-chart', 4: 'number-in-general' };

async function imagesFolder(file: string, imagesRoot: string | undefined): Promise<string> {
  if (imagesRoot !== undefined) return resolve(imagesRoot);
  const beside = join(dirname(dirname(file)), 'images');
  const inside = join(dirname(file), 'images');
  for (const candidate of [beside, inside]) {
    if (await access(candidate).then(() => true, () => false)) return candidate;
  }
  return beside;
}

export async function loadCharXiv(src: string, imagesRoot?: string): Promise<LoadResult> {
  const file = resolve(src);
  const root = await imagesFolder(file, imagesRoot);
  const tasks: Converted[] = [];
  const warnings: LoadResult['warnings'] = [];
  for (const { value, where } of await readItems(file)) {
    const item = needObject(value, where, '(record)');
    if ('qids' in item || basename(file).startsWith('descriptive')) {
      fail(where, 'qids', 'a reasoning record {figure_id, query, answer, inst_category}: descriptive questions are CharXiv templates filled in by its code, so convert reasoning_*.json instead', item.qids ?? basename(file));
    }
    const figure = item.figure_id;
    if (typeof figure !== 'number' && typeof figure !== 'string') fail(where, 'figure_id', 'the figure id (a number)', figure);
    const question = typeof item.query === 'string' && item.query.trim() !== '' ? item.query.trim() : fail(where, 'query', 'the question text', item.query);
    const answer = readAnswer(item.answer, where, 'answer');
    const category = item.inst_category;
    if (typeof category !== 'number' || !(category in CATEGORY_FAMILY)) fail(where, 'inst_category', 'an answer category 1–4', category);
    const image = join(root, `${figure}.jpg`);
    await access(image).catch(() => fail(where, 'figure_id', `an image at ${image} (set --images-root to CharXiv's images/ folder)`, figure));
    tasks.push({
      record: { id: `charxiv-${figure}`, question, answer, kind: 'chart', difficulty: 0, source: 'charxiv', family: CATEGORY_FAMILY[category], meta: {} },
      sourceImage: image,
    });
  }
  if (tasks.length > 0) warnings.push({ where: at({ file }), reason: `${tasks.length} CharXiv figures have no bands: OCR grounding finds them when an episode starts` });
  return { tasks, skipped: [], warnings };
}
