/**
 * TableVQA-Bench → task records. The benchmark is published as four splits (vwtq, vwtq_syn,
 * vtabfact, fintabnetqa) of {qa_id, question, gt, image, text_html_table, text_markdown_table}.
 * Parquet and image bytes are not read here: export a split first, with each image saved to a
 * file and the field `image` holding its path (a string, or {"path": ...} as `datasets` writes an
 * Image feature). The split is named by the file (e.g. vwtq.jsonl) or by a `subset` field
 * on each record; it decides how `gt` reads:
 *
 * - vwtq, vwtq_syn: WikiTableQuestions answers, several values joined with `|` → a list answer;
 * - vtabfact: TabFact labels 1 / 0 → "true" / "false" (the statement is true or false);
 * - fintabnetqa: one value, kept as written.
 *
 * Tables come without cell boxes: records get kind "table" and empty metadata; the env server's
 * OCR grounding finds the columns and rows when an episode starts.
 */
import { basename, dirname, resolve } from 'node:path';
import { existingImage } from './refocus.js';
import { at, fail, isObject, needObject, readItems, type Converted, type LoadResult, type Where } from './common.js';

export const TABLEVQA_SUBSETS = ['vwtq', 'vwtq_syn', 'vtabfact', 'fintabnetqa'] as const;
export type TableVqaSubset = (typeof TABLEVQA_SUBSETS)[number];

/** The subset a file holds, from its name: longest match first (vwtq_syn before vwtq). */
export function subsetOf(file: string): TableVqaSubset | null {
  const name = basename(file).toLowerCase();
  return [...TABLEVQA_SUBSETS].sort((a, b) => b.length - a.length).find((subset) => name.includes(subset)) ?? null;
}

function readGold(subset: TableVqaSubset, value: unknown, where: Where): string | string[] {
  if (subset === 'vtabfact') {
    if (value === 1 || value === '1' || value === true) return 'true';
    if (value === 0 || value === '0' || value === false) return 'false';
    return fail(where, 'gt', 'a TabFact label, 1 (true) or 0 (false)', value);
  }
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' && value.trim() !== '' ? value : fail(where, 'gt', 'the answer text', value);
  if (subset === 'fintabnetqa') return text.trim();
  // WikiTableQuestions' TSV escapes: \p is a literal |, \n a newline, \\ a backslash.
  const items = text.split('|').map((part) => part.replace(/\\p/g, '|').replace(/\\n/g, '\n').replace(/\\\\/g, '\\').trim()).filter((part) => part !== '');
  return items.length === 1 ? (items[0] as string) : items;
}

function imagePath(item: Record<string, unknown>, where: Where): string {
  const image = item.image;
  if (typeof image === 'string' && image !== '') return image;
  if (isObject(image) && typeof image.path === 'string' && image.path !== '') return image.path;
  if (typeof item.image_path === 'string') return item.image_path;
  return fail(where, 'image', 'the path of the exported image (a string or {"path": ...}); image bytes are not read: save each image to a file when exporting', isObject(image) ? '{bytes}' : image);
}

export async function loadTableVqaBench(src: string, imagesRoot?: string): Promise<LoadResult> {
  const file = resolve(src);
  const root = resolve(imagesRoot ?? dirname(file));
  const tasks: Converted[] = [];
  const fromName = subsetOf(file);
  for (const { value, where } of await readItems(file)) {
    const item = needObject(value, where, '(record)');
    const subset = (typeof item.subset === 'string' && (TABLEVQA_SUBSETS as readonly string[]).includes(item.subset) ? item.subset as TableVqaSubset : fromName)
      ?? fail(where, '(split)', `the split in the file name (${TABLEVQA_SUBSETS.join(', ')}) or a "subset" field`, basename(file));
    const id = typeof item.qa_id === 'string' || typeof item.qa_id === 'number' ? String(item.qa_id) : fail(where, 'qa_id', 'the question id', item.qa_id);
    const question = typeof item.question === 'string' && item.question.trim() !== '' ? item.question.trim() : fail(where, 'question', 'the question text', item.question);
    const answer = readGold(subset, item.gt, where);
    const image = await existingImage(root, imagePath(item, where), where, 'image');
    tasks.push({ record: { id: `tablevqa-${subset}-${id}`, question, answer, kind: 'table', difficulty: 0, source: `tablevqa-bench/${subset}`, family: subset, meta: {} }, sourceImage: image });
  }
  const warnings = tasks.length > 0 ? [{ where: at({ file }), reason: `${tasks.length} tables have no cell boxes: OCR grounding finds the columns and rows when an episode starts` }] : [];
  return { tasks, skipped: [], warnings };
}
