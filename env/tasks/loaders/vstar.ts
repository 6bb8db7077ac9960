/**
 * V* Bench (Wu & Xie 2023, penghao-wu/vstar; the benchmark as craigwu/vstar_bench) → task records.
 * The release is one folder per subtask, `direct_attributes/` and `relative_position/`, each a
 * list of images with a same-named annotation beside each (`sa_4690.jpg` + `sa_4690.json`), as
 * the repository's README and `vstar_bench_eval.py` pair them. An annotation holds
 * `target_object` (the names of the objects asked about), `bbox` (one box per name, `[x, y, w, h]`
 * in the image's pixels), `question` and `options`, the first option being the correct one.
 *
 * SRC is the benchmark folder (both subtasks are read; its other folders, `OCR/` and
 * `GPT4V-hard/`, are not part of the 191-question benchmark and are listed as skipped) or one
 * subtask folder. Each record becomes a lettered multiple-choice question (multiple-choice.ts);
 * since V* always lists the right option first, the options are put in an order drawn from the
 * record's id (same id, same order), so the right letter is not always A. The target boxes are
 * kept in `meta.targets` as pixel edges (x2 = x + w), with `unit: "pixels"`: an episode judges
 * each zoom and crop against them (env/episodes/benchmark-target.ts).
 *
 * Refused: an annotation without its image or an image without its annotation (V*'s evaluation
 * reads both), a box count other than the name count, a box that is not four finite numbers with a
 * positive width and height, or one outside the image. A box that runs past the image edge is kept
 * as annotated, with a warning.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import sharp from 'sharp';
import type { BBox } from '../../tools/metadata.js';
import { Rng, hashString } from '../prng.js';
import type { TaskKind } from '../record.js';
import { at, ConvertError, fail, needObject, needString, type Converted, type LoadResult, type Where } from './common.js';
import { CHOICE_LETTERS, choiceQuestion, readChoices } from './multiple-choice.js';

/**
 * The kind given to photographs converted from the visual-search benchmarks (V*, HR-Bench,
 * VisualProbe): `chart`, the kind without bands, whose tools are the coordinate ones (zoom_in,
 * the guide lines, mark_point, ocr). One constant, so a kind for natural images changes it once.
 */
export const VISUAL_SEARCH_KIND: TaskKind = 'chart';

/** The benchmark's subtasks, in the order V*'s evaluation reads them. */
export const VSTAR_SUBTASKS = ['direct_attributes', 'relative_position'] as const;

const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.webp']);

/** A target object as kept in `meta.targets`: its name and its box in pixel edges. */
export interface SearchTarget {
  label: string;
  bbox: BBox;
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

/** The subtask folders under SRC, and the folders beside them that are not read. */
async function subtaskFolders(src: string): Promise<{ folders: string[]; skipped: string[] }> {
  if (!(await isDir(src))) throw new ConvertError(`${src}: expected V*'s benchmark folder (direct_attributes/, relative_position/) or one of its subtask folders`);
  const names = (await readdir(src)).sort();
  const subtasks = VSTAR_SUBTASKS.filter((s) => names.includes(s));
  if (subtasks.length > 0) {
    const others: string[] = [];
    for (const name of names) if (!(VSTAR_SUBTASKS as readonly string[]).includes(name) && (await isDir(join(src, name)))) others.push(join(src, name));
    return { folders: subtasks.map((s) => join(src, s)), skipped: others };
  }
  if (names.some((n) => n.endsWith('.json'))) return { folders: [src], skipped: [] };
  throw new ConvertError(`${src}: no V* annotations here: expected direct_attributes/ and relative_position/, or a folder of <name>.json beside <name>.jpg`);
}

/** `[x, y, w, h]` in pixels → pixel edges; refused unless four finite numbers with w, h > 0. */
function readXywh(value: unknown, where: Where, field: string): BBox {
  if (!Array.isArray(value) || value.length !== 4 || !value.every((v) => typeof v === 'number' && Number.isFinite(v))) return fail(where, field, 'a box [x, y, w, h] of four numbers (pixels)', value);
  const [x, y, w, h] = value as [number, number, number, number];
  if (w <= 0 || h <= 0) return fail(where, field, 'a box [x, y, w, h] with a positive width and height', value);
  return { x1: x, y1: y, x2: x + w, y2: y + h };
}

function readTargets(item: Record<string, unknown>, where: Where, size: { width: number; height: number }, warnings: LoadResult['warnings']): SearchTarget[] {
  const names = item.target_object;
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string' && n.trim() !== '')) return fail(where, 'target_object', 'a list of target object names', names);
  const boxes = item.bbox;
  if (!Array.isArray(boxes) || boxes.length !== names.length) return fail(where, 'bbox', `a list of ${names.length} boxes [x, y, w, h], one per target_object entry`, boxes);
  return names.map((name: string, i) => {
    const bbox = readXywh(boxes[i], where, `bbox[${i}]`);
    if (bbox.x2 <= 0 || bbox.y2 <= 0 || bbox.x1 >= size.width || bbox.y1 >= size.height) fail(where, `bbox[${i}]`, `a box inside the ${size.width}×${size.height} image`, boxes[i]);
    if (bbox.x1 < 0 || bbox.y1 < 0 || bbox.x2 > size.width || bbox.y2 > size.height) warnings.push({ where: at(where), reason: `bbox[${i}] (${name}) runs past the ${size.width}×${size.height} image's edge: kept as annotated` });
    return { label: name.trim(), bbox };
  });
}

/** The options in an order drawn from the record's id; returns them and the right one's letter. */
export function orderOptions(id: string, options: readonly string[]): { options: string[]; answer: string } {
  const rng = new Rng([hashString(id), hashString('vstar/options'), options.length, 0]);
  const order = rng.shuffle(options.map((_, i) => i));
  return { options: order.map((i) => options[i] as string), answer: CHOICE_LETTERS[order.indexOf(0)] as string };
}

async function imageSize(file: string): Promise<{ width: number; height: number }> {
  const m = await sharp(file).metadata().catch((err: Error) => {
    throw new ConvertError(`${file}: cannot read the image: ${err.message}`, { cause: err });
  });
  if (!m.width || !m.height) throw new ConvertError(`${file}: cannot read the image size`);
  return { width: m.width, height: m.height };
}

async function readAnnotation(file: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new ConvertError(`${file}: not valid JSON (${(err as Error).message})`, { cause: err });
  }
  return needObject(value, { file }, '(annotation)');
}

/** Annotation ↔ image pairs of one subtask folder, by file stem; an unpaired file is refused. */
async function pairs(folder: string): Promise<{ annotation: string; image: string }[]> {
  const names = (await readdir(folder)).sort();
  const images = new Map<string, string>();
  for (const n of names) if (IMAGE_EXTENSIONS.has(extname(n).toLowerCase())) images.set(basename(n, extname(n)), join(folder, n));
  const stems = names.filter((n) => n.endsWith('.json')).map((n) => basename(n, '.json'));
  for (const [stem, image] of images) if (!stems.includes(stem)) fail({ file: image }, '(annotation)', `${stem}.json beside the image (V* pairs each image with an annotation of the same name)`);
  return stems.map((stem) => {
    const annotation = join(folder, `${stem}.json`);
    const image = images.get(stem) ?? fail({ file: annotation }, '(image)', `an image ${stem}.jpg (or .png) beside the annotation`);
    return { annotation, image };
  });
}

export async function loadVStar(src: string): Promise<LoadResult> {
  const { folders, skipped } = await subtaskFolders(resolve(src));
  const tasks: Converted[] = [];
  const warnings: LoadResult['warnings'] = [];
  for (const folder of folders) {
    const subtask = basename(folder);
    for (const { annotation, image } of await pairs(folder)) {
      const where: Where = { file: annotation };
      const item = await readAnnotation(annotation);
      const question = needString(item, 'question', where).trim();
      const choices = readChoices(item.options, where, 'options');
      const targets = readTargets(item, where, await imageSize(image), warnings);
      const id = `vstar-${subtask}-${basename(annotation, '.json')}`;
      const { options, answer } = orderOptions(id, choices);
      tasks.push({
        record: { id, question: choiceQuestion(question, options), answer, kind: VISUAL_SEARCH_KIND, difficulty: 0, source: `vstar/${subtask}`, family: subtask, meta: { unit: 'pixels', source: 'dataset', targets } },
        sourceImage: image,
      });
    }
  }
  return { tasks, skipped: skipped.map((folder) => ({ where: folder, reason: `not a V* Bench subtask (${VSTAR_SUBTASKS.join(', ')}): not read` })), warnings };
}
