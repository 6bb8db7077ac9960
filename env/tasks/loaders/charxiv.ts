/**
 * CharXiv → task records, both halves of the benchmark as its repository ships them:
 *
 * - reasoning (`data/reasoning_{val,test}.json`): an object keyed by figure id, each {figure_id,
 *   query, answer, inst_category, qa_source}; one task per figure;
 * - descriptive (`data/descriptive_{val,test}.json`): each {figure_id, subplot_loc, qids,
 *   answers}; one task per (figure, template id): the question is CharXiv's template for that id,
 *   opened with the subplot it asks about ("For the subplot at row 2 and column 1, ...").
 *
 * CharXiv's protocol never sends a bare question: the templates and the answer-format
 * instructions live in its `src/constants.py` (DESCRIPTIVE_RESP_INST, REASONING_RESP_INST), and
 * this loader reads them from the user's checkout (the repository root above `data/`, or
 * `--templates FILE`), so the questions match CharXiv's evaluation. Without that file reasoning
 * records convert with their bare questions and a warning; descriptive ones are refused (their
 * items hold template ids, not questions).
 *
 * Images are `<images-root>/<figure_id>.jpg` (default: `images/` beside `data/`). Scientific
 * figures come with no bands: records get kind "chart" and empty metadata, and the env server's
 * OCR grounding finds bands when an episode starts. `family` keeps CharXiv's answer category
 * (reasoning) or the template id (descriptive).
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { at, ConvertError, exists, fail, needObject, readAnswer, readItems, type Converted, type LoadResult, type Where } from './common.js';
import { formatPositional, PythonLiteralError, readPythonStringTable } from './python-literals.js';

const CATEGORY_FAMILY: Readonly<Record<number, string>> = { 1: 'text-in-chart', 2: 'text-in-general', 3: 'number-in-chart', 4: 'number-in-general' };
/** Templates about the layout of the subplots: CharXiv asks them without a subplot prefix. */
const LAYOUT_TEMPLATES = new Set([18, 19]);

interface Templates {
  file: string;
  descriptive: Map<number, string>;
  reasoning: Map<number, string>;
}

async function imagesFolder(file: string, imagesRoot: string | undefined): Promise<string> {
  if (imagesRoot !== undefined) return resolve(imagesRoot);
  const beside = join(dirname(dirname(file)), 'images');
  const inside = join(dirname(file), 'images');
  for (const candidate of [beside, inside]) if (await exists(candidate)) return candidate;
  return beside;
}

/** CharXiv's constants.py: given, or in the checkout the data file sits in. */
async function loadTemplates(file: string, templatesFile: string | undefined): Promise<Templates | null> {
  const root = dirname(dirname(file));
  const candidates = templatesFile !== undefined ? [resolve(templatesFile)] : [join(root, 'src', 'constants.py'), join(root, 'constants.py')];
  for (const candidate of candidates) {
    if (!(await exists(candidate))) continue;
    const source = await readFile(candidate, 'utf8');
    try {
      return { file: candidate, descriptive: readPythonStringTable(source, 'DESCRIPTIVE_RESP_INST', candidate), reasoning: readPythonStringTable(source, 'REASONING_RESP_INST', candidate) };
    } catch (err) {
      if (err instanceof PythonLiteralError) throw new ConvertError(`CharXiv's templates could not be read: ${err.message}`, { cause: err });
      throw err;
    }
  }
  if (templatesFile !== undefined) throw new ConvertError(`--templates ${templatesFile}: no such file (CharXiv's src/constants.py)`);
  return null;
}

/**
 * CharXiv's instruction for number-in-general answers: the number of decimal places the gold has,
 * said the way its reasoning_utils.get_number_instruction says it (the words matter: they are
 * part of the prompt the published numbers were measured with).
 */
export function numberInstruction(answer: string): string {
  const [, decimals] = answer.split('.');
  return decimals === undefined ? '* Your final answer must be an exact integer.' : `* Your final answer must be a number with ${decimals.length} decimal places.`;
}

/** The subplot a descriptive question is about, as CharXiv words it. */
export function subplotPrefix(location: unknown, where: Where): string {
  if (Array.isArray(location) && typeof location[0] === 'number') {
    if (location[0] === 0) return 'For the current plot, ';
    if (typeof location[1] !== 'number') fail(where, 'subplot_loc', '[row, column] (or [0] for a single plot)', location);
    return `For the subplot at row ${location[0]} and column ${location[1]}, `;
  }
  if (typeof location === 'string' && location.trim() !== '') return `For ${location}, `;
  return fail(where, 'subplot_loc', '[row, column], [0] for a single plot, or a description of the subplot', location);
}

function template(table: Map<number, string>, id: number, where: Where, field: string, templates: Templates): string {
  const text = table.get(id);
  if (text === undefined) fail(where, field, `a template id of ${basename(templates.file)} (${[...table.keys()].join(', ')})`, id);
  return text;
}

function figureId(item: Record<string, unknown>, where: Where): string | number {
  const figure = item.figure_id;
  if (typeof figure !== 'number' && typeof figure !== 'string') fail(where, 'figure_id', 'the figure id (a number)', figure);
  return figure;
}

async function figureImage(root: string, figure: string | number, where: Where): Promise<string> {
  const image = join(root, `${figure}.jpg`);
  if (!(await exists(image))) fail(where, 'figure_id', `an image at ${image} (set --images-root to CharXiv's images/ folder)`, figure);
  return image;
}

function reasoningTask(item: Record<string, unknown>, where: Where, templates: Templates | null): Omit<Converted, 'sourceImage'> & { figure: string | number } {
  const figure = figureId(item, where);
  const query = typeof item.query === 'string' && item.query.trim() !== '' ? item.query.trim() : fail(where, 'query', 'the question text', item.query);
  const answer = readAnswer(item.answer, where, 'answer');
  const category = item.inst_category;
  if (typeof category !== 'number' || !(category in CATEGORY_FAMILY)) fail(where, 'inst_category', 'an answer category 1–4', category);
  let question = query;
  if (templates) {
    const wrapper = template(templates.reasoning, category, where, 'inst_category', templates);
    question = formatPositional(wrapper, category === 4 ? [query, numberInstruction(String(item.answer).trim())] : [query]);
  }
  return { figure, record: { id: `charxiv-${figure}`, question, answer, kind: 'chart', difficulty: 0, source: 'charxiv', family: CATEGORY_FAMILY[category], meta: {} } };
}

function descriptiveTasks(item: Record<string, unknown>, where: Where, templates: Templates): (Omit<Converted, 'sourceImage'> & { figure: string | number })[] {
  const figure = figureId(item, where);
  const qids = item.qids;
  const answers = item.answers;
  if (!Array.isArray(qids) || !qids.every((q) => Number.isInteger(q))) fail(where, 'qids', 'a list of template ids', qids);
  if (!Array.isArray(answers) || answers.length !== qids.length) fail(where, 'answers', `one answer per template id (${qids.length})`, answers);
  return qids.map((qid: number, i) => {
    const text = template(templates.descriptive, qid, where, `qids[${i}]`, templates);
    const question = LAYOUT_TEMPLATES.has(qid) ? text : formatPositional(text, [subplotPrefix(item.subplot_loc, where)]);
    const answer = readAnswer(answers[i], where, `answers[${i}]`);
    return { figure, record: { id: `charxiv-${figure}-d${i}`, question, answer, kind: 'chart' as const, difficulty: 0, source: 'charxiv/descriptive', family: `descriptive-${qid}`, meta: {} } };
  });
}

export async function loadCharXiv(src: string, imagesRoot?: string, templatesFile?: string): Promise<LoadResult> {
  const file = resolve(src);
  const root = await imagesFolder(file, imagesRoot);
  const templates = await loadTemplates(file, templatesFile);
  const tasks: Converted[] = [];
  const warnings: LoadResult['warnings'] = [];
  let descriptive = false;
  for (const { value, where } of await readItems(file)) {
    const item = needObject(value, where, '(record)');
    const isDescriptive = 'qids' in item || basename(file).startsWith('descriptive');
    descriptive ||= isDescriptive;
    if (isDescriptive && templates === null) {
      fail(where, 'qids', `CharXiv's question templates: descriptive items hold template ids, whose questions live in CharXiv's src/constants.py; keep data/ inside the CharXiv checkout or pass --templates path/to/constants.py`, item.qids ?? basename(file));
    }
    const made = isDescriptive ? descriptiveTasks(item, where, templates as Templates) : [reasoningTask(item, where, templates)];
    for (const { figure, record } of made) tasks.push({ record, sourceImage: await figureImage(root, figure, where) });
  }
  if (tasks.length > 0) warnings.push({ where: at({ file }), reason: `${tasks.length} CharXiv questions have no bands: OCR grounding finds them when an episode starts` });
  if (tasks.length > 0 && !descriptive && templates === null) {
    warnings.push({ where: at({ file }), reason: `CharXiv's src/constants.py was not found (looked above data/; --templates names it): the questions are bare, while CharXiv's protocol adds its answer-format instructions, so scores are not comparable to the published ones` });
  }
  return { tasks, skipped: [], warnings };
}
