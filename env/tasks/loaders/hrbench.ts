/**
 * HR-Bench (Wang et al. 2025, DreamMr/HR-Bench) → task records. The benchmark is published as
 * VLMEvalKit TSV files, `hr_bench_4k.tsv` and `hr_bench_8k.tsv`, with the columns `index`,
 * `question`, `answer` (the right option's letter), `A`–`D`, `category` (FSP / FCP, the single-
 * and cross-instance tasks), `cycle_category` (which rotation of the options a row is: each
 * question appears once per rotation, and HR-Bench averages over them) and `image`, the image as
 * base64 — or, as VLMEvalKit allows to save space, the `index` of another row whose image it
 * shares (a value of 64 characters or fewer; vlmeval/dataset/image_base.py).
 *
 * Each row becomes a lettered multiple-choice question (multiple-choice.ts) answered with the
 * letter HR-Bench gives; rows are kept as published, one per rotation. Images are decoded into
 * `scratch` (each distinct image once, however many rows share it) and copied next to tasks.jsonl
 * by writeConverted. The resolution (4k / 8k) comes from the file name. `category` becomes the
 * family, `cycle_category` stays in `meta.cycle_category`. HR-Bench gives no boxes.
 *
 * Refused: a header without the columns above, a row with another number of fields than the
 * header, options with a gap (C empty, D given: the letters would shift), an answer that is not
 * the letter of a given option, an image that is not base64 of a JPEG or PNG, a reference to an
 * index with no image. The parquet copies on the hub are not read.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ConvertError, fail, type Converted, type LoadResult, type Where } from './common.js';
import { CHOICE_LETTERS, choiceQuestion } from './multiple-choice.js';
import { readTsv } from './tsv.js';
import { VISUAL_SEARCH_KIND } from './vstar.js';

const REQUIRED = ['index', 'question', 'answer', 'A', 'B', 'image'] as const;

/** VLMEvalKit reads an `image` this short as another row's index, not as base64. */
const MAX_REFERENCE_LENGTH = 64;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** `4k` or `8k` from `hr_bench_4k.tsv` / `hr_bench_8k.tsv`, else null. */
export function resolutionOf(file: string): string | null {
  return /(?:^|[^0-9])([48]k)(?:[^a-z0-9]|$)/i.exec(basename(file))?.[1]?.toLowerCase() ?? null;
}

function extensionOf(bytes: Buffer): string | null {
  if (bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return '.jpg';
  if (bytes.length > 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return '.png';
  return null;
}

/** Decoded images by content, so the rotations of one question share one file. */
class ImageStore {
  private byHash = new Map<string, string>();
  constructor(private dir: string, private stem: string) {}

  async save(base64: string, index: string, where: Where): Promise<string> {
    const text = base64.replace(/\s+/g, '');
    if (!BASE64.test(text) || text.length % 4 !== 0) return fail(where, 'image', 'the image as base64 (or the index of a row holding it)', `${base64.slice(0, 20)}... (${base64.length} characters)`);
    const bytes = Buffer.from(text, 'base64');
    const ext = extensionOf(bytes) ?? fail(where, 'image', 'base64 of a JPEG or PNG image', `${bytes.length} bytes starting ${bytes.subarray(0, 4).toString('hex')}`);
    const hash = createHash('sha256').update(bytes).digest('hex');
    const known = this.byHash.get(hash);
    if (known) return known;
    const path = join(this.dir, `${this.stem}-${index.replace(/[^A-Za-z0-9._-]/g, '_')}${ext}`);
    await writeFile(path, bytes);
    this.byHash.set(hash, path);
    return path;
  }
}

interface Columns {
  at: Map<string, number>;
  letters: string[];
  count: number;
}

function readHeader(fields: string[], where: Where): Columns {
  const at = new Map(fields.map((name, i) => [name.trim(), i]));
  const missing = REQUIRED.filter((c) => !at.has(c));
  if (missing.length > 0) fail(where, '(header)', `HR-Bench's columns ${REQUIRED.join(', ')} (missing ${missing.join(', ')})`, fields.map((f) => f.slice(0, 20)));
  const letters = CHOICE_LETTERS.filter((l) => at.has(l));
  return { at, letters, count: fields.length };
}

function readOptions(get: (column: string) => string, columns: Columns, where: Where): string[] {
  const given = columns.letters.map((l) => get(l).trim());
  const n = given.findIndex((o) => o === '');
  const options = n < 0 ? given : given.slice(0, n);
  const gap = given.findIndex((o, i) => i > options.length && o !== '');
  if (gap >= 0) fail(where, columns.letters[gap] as string, `options filled from A without a gap (${columns.letters[options.length]} is empty)`, given[gap]);
  if (options.length < 2) fail(where, columns.letters[options.length] as string, 'at least two options, A and B', '');
  return options;
}

export async function loadHrBench(src: string, scratch: string): Promise<LoadResult> {
  const file = resolve(src);
  const resolution = resolutionOf(file);
  const stem = `hrbench${resolution ? `-${resolution}` : ''}`;
  const dir = join(scratch, stem);
  await mkdir(dir, { recursive: true });
  const store = new ImageStore(dir, stem);
  const tasks: Converted[] = [];
  const imageOf = new Map<string, string>();
  const references: { task: Converted; index: string; where: Where }[] = [];
  let columns: Columns | null = null;
  for await (const row of readTsv(file)) {
    const where: Where = { file, line: row.line };
    if (!columns) {
      columns = readHeader(row.fields, where);
      continue;
    }
    if (row.fields.length !== columns.count) fail(where, '(row)', `${columns.count} tab-separated fields, as the header has`, `${row.fields.length} fields`);
    const get = (column: string): string => row.fields[columns?.at.get(column) ?? -1] ?? '';
    const index = get('index').trim() || fail(where, 'index', 'the row\'s index', '');
    const question = get('question').trim() || fail(where, 'question', 'the question text', '');
    const options = readOptions(get, columns, where);
    const answer = get('answer').trim();
    if (!(CHOICE_LETTERS.slice(0, options.length) as readonly string[]).includes(answer)) fail(where, 'answer', `the letter of one of the ${options.length} options (${CHOICE_LETTERS.slice(0, options.length).join(', ')})`, answer);
    const category = get('category').trim();
    const cycle = get('cycle_category').trim();
    const task: Converted = {
      record: {
        id: `${stem}-${index}`, question: choiceQuestion(question, options), answer, kind: VISUAL_SEARCH_KIND, difficulty: 0, source: resolution ? `hrbench/${resolution}` : 'hrbench',
        ...(category ? { family: category } : {}), meta: { unit: 'pixels', source: 'dataset', ...(cycle ? { cycle_category: cycle } : {}) },
      },
      sourceImage: '',
    };
    const image = get('image').trim();
    if (image === '') fail(where, 'image', 'the image as base64 (or the index of a row holding it)', '');
    if (image.length <= MAX_REFERENCE_LENGTH) references.push({ task, index: image, where });
    else {
      task.sourceImage = await store.save(image, index, where);
      imageOf.set(index, task.sourceImage);
    }
    tasks.push(task);
  }
  if (!columns) throw new ConvertError(`${file}: empty: expected HR-Bench's TSV (a header ${REQUIRED.join(', ')}, then one row per question)`);
  for (const ref of references) ref.task.sourceImage = imageOf.get(ref.index) ?? fail(ref.where, 'image', 'base64 of the image, or the index of a row that holds one', ref.index);
  return { tasks, skipped: [], warnings: [] };
}
