/**
 * Geometry3K (Inter-GPS, Lu et al. 2021) → task records. Its release is one folder per problem,
 * `<split>/<id>/data.json` beside `img_diagram.png`; SRC is the release's root (train/, val/,
 * test/ in it), one split folder, or one problem folder. Read from data.json: `id`,
 * `problem_text`, `choices` (four), `answer` (the correct choice's letter), `problem_type_goal`
 * (the family, e.g. "Angle"), `data_type` (the split, for the id). Records are kind `geometry`
 * with no metadata: the diagram tools work on them by pixel coordinates.
 * Not read: the logic forms (`logic_form.json`: annotated point positions, lines, circles) and
 * the solutions. Refused: an answer that is not the letter of one of the choices, a problem
 * folder without its diagram.
 */
import { basename, join, resolve } from 'node:path';
import { readFile, readdir, stat } from 'node:fs/promises';
import { ConvertError, exists, fail, metadataFrom, needObject, needString, type Converted, type LoadResult } from './common.js';
import { CHOICE_LETTERS, choiceQuestion, readChoices } from './multiple-choice.js';

const DATA_FILE = 'data.json';
const DIAGRAM = 'img_diagram.png';

const SPLITS = ['train', 'val', 'test'];

/** Splits in the release's order, then problem ids as numbers. */
function bySplitThenNumber(a: string, b: string): number {
  const sa = SPLITS.indexOf(a), sb = SPLITS.indexOf(b);
  if (sa >= 0 || sb >= 0) return (sa < 0 ? 99 : sa) - (sb < 0 ? 99 : sb);
  return Number(a) - Number(b) || a.localeCompare(b);
}

/** The problem folders under SRC: SRC itself, its numbered sub-folders, or those of its split folders. */
async function problemFolders(src: string): Promise<string[]> {
  if (await exists(join(src, DATA_FILE))) return [src];
  const isDir = async (p: string) => (await stat(p).catch(() => null))?.isDirectory() ?? false;
  const children = (await readdir(src).catch((err: Error) => {
    throw new ConvertError(`cannot read ${src}: ${err.message}`);
  })).sort(bySplitThenNumber);
  const problems: string[] = [];
  for (const name of children) {
    const full = join(src, name);
    if (!(await isDir(full))) continue;
    if (await exists(join(full, DATA_FILE))) problems.push(full);
    else if (SPLITS.includes(name)) problems.push(...(await problemFolders(full)));
  }
  return problems;
}

export async function loadGeometry3K(src: string): Promise<LoadResult> {
  const root = resolve(src);
  const folders = await problemFolders(root);
  if (folders.length === 0) throw new ConvertError(`${root}: no Geometry3K problems found (expected <split>/<id>/${DATA_FILE} beside ${DIAGRAM})`);
  const tasks: Converted[] = [];
  for (const folder of folders) {
    const file = join(folder, DATA_FILE);
    const where = { file };
    const record = needObject(await readSingleObject(file), where, '(record)');
    const problem = needString(record, 'problem_text', where);
    const choices = readChoices(record.choices, where, 'choices');
    const letter = needString(record, 'answer', where).trim().toUpperCase();
    const index = CHOICE_LETTERS.indexOf(letter as (typeof CHOICE_LETTERS)[number]);
    if (index < 0 || index >= choices.length) fail(where, 'answer', `the letter of one of the ${choices.length} choices (${CHOICE_LETTERS.slice(0, choices.length).join(', ')})`, record.answer);
    const diagram = join(folder, DIAGRAM);
    if (!(await exists(diagram))) fail(where, DIAGRAM, `the diagram beside ${DATA_FILE}`, diagram);
    const id = record.id ?? basename(folder);
    const split = typeof record.data_type === 'string' ? `${record.data_type}-` : '';
    const goal = Array.isArray(record.problem_type_goal) ? record.problem_type_goal.filter((g): g is string => typeof g === 'string') : [];
    tasks.push({
      record: {
        id: `geometry3k-${split}${String(id)}`,
        question: choiceQuestion(problem, choices),
        answer: letter,
        kind: 'geometry',
        difficulty: 0,
        source: 'geometry3k',
        ...(goal.length > 0 ? { family: goal.join(', ') } : {}),
        meta: metadataFrom({}),
      },
      sourceImage: diagram,
    });
  }
  return { tasks, skipped: [], warnings: [] };
}

/** data.json holds one object (readItems would read its fields as items). */
async function readSingleObject(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new ConvertError(`${file}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
}
