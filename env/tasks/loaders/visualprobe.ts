/**
 * VisualProbe (Mini-o3, Lai et al. 2025) → task records. Mini-o3 releases each split as a folder
 * on the hub (Mini-o3/VisualProbe_Easy, _Medium, _Hard: `val.json` beside `data/`;
 * Mini-o3/VisualProbe_train: `train.json`). A file is a JSON list of
 * `{images, doc_id, problem, solution, data_source}` (Mini-o3's docs/mini_o3_demo.md), read by
 * verl/utils/dataset/multimodal_dataset.py: `problem` is the user turn with an `<image>`
 * placeholder, `images` the image paths relative to the folder above the split folders
 * (BASE_IMAGE_DIR), `solution` the answer, `doc_id` the id, and `data_source` one of
 * `visual_probe_easy`, `visual_probe_medium`, `visual_probe_hard`, `visual_probe_train`
 * (verl/utils/reward_score/__init__.py), which names the split and so the difficulty.
 *
 * SRC is a `val.json` / `train.json`, a split folder holding one, or the folder above the split
 * folders (every `VisualProbe_*` folder in it is read). The question is `problem` without the
 * placeholder; the answer is `solution` as written (Mini-o3 scores it by a judge model, or by exact
 * match on a letter for multiple-choice sources). Images are found under --images-root, the folder
 * above the split folder (BASE_IMAGE_DIR), or the split folder. The split becomes the family and
 * the source (`visualprobe/hard`); VisualProbe gives no boxes.
 *
 * Refused: a `data_source` other than VisualProbe's (Mini-o3's `vstar_bench` and `deepeyes_train`
 * files are other data sets: V* converts from its own release with --from vstar), a record whose
 * split can be told neither from `data_source` nor from its folder's name, a record with other than
 * one image, a missing `problem`, `solution` or image.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ConvertError, exists, fail, metadataFrom, needObject, readItems, type Converted, type LoadResult, type Where } from './common.js';
import { existingImage } from './refocus.js';
import { VISUAL_SEARCH_KIND } from './vstar.js';

export const VISUALPROBE_SPLITS = ['easy', 'medium', 'hard', 'train'] as const;
export type VisualProbeSplit = (typeof VISUALPROBE_SPLITS)[number];

const SPLIT_FILES = ['val.json', 'train.json'];

/** The split a folder name says (VisualProbe_Hard → hard), else null. */
export function splitOfFolder(folder: string): VisualProbeSplit | null {
  const m = /^visualprobe_(easy|medium|hard|train)$/i.exec(basename(folder));
  return m ? (m[1]?.toLowerCase() as VisualProbeSplit) : null;
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

/** The split files under SRC: SRC itself, the one in a split folder, or those of the split folders in SRC. */
async function splitFiles(src: string): Promise<string[]> {
  if (!(await isDir(src))) {
    if (!(await exists(src))) throw new ConvertError(`cannot read ${src}: no such file or folder`);
    return [src];
  }
  const inFolder = async (folder: string) => {
    for (const name of SPLIT_FILES) if (await exists(join(folder, name))) return join(folder, name);
    return null;
  };
  const own = await inFolder(src);
  if (own) return [own];
  const files: string[] = [];
  for (const name of (await readdir(src)).sort()) {
    const folder = join(src, name);
    if (splitOfFolder(folder) && (await isDir(folder))) {
      const file = await inFolder(folder);
      if (file) files.push(file);
    }
  }
  if (files.length === 0) throw new ConvertError(`${src}: no VisualProbe data here: expected val.json or train.json, or VisualProbe_Easy/, _Medium/, _Hard/ folders holding them`);
  return files;
}

function splitOf(item: Record<string, unknown>, file: string, where: Where): VisualProbeSplit {
  const source = item.data_source;
  if (source === undefined || source === null) {
    return splitOfFolder(dirname(file)) ?? fail(where, 'data_source', `visual_probe_easy, visual_probe_medium, visual_probe_hard or visual_probe_train (or the file in a VisualProbe_Easy/_Medium/_Hard/_train folder)`, source);
  }
  const m = typeof source === 'string' ? /^visual_probe_(easy|medium|hard|train)$/.exec(source) : null;
  if (!m) return fail(where, 'data_source', 'visual_probe_easy, visual_probe_medium, visual_probe_hard or visual_probe_train (Mini-o3\'s vstar_bench and deepeyes_train are other data sets; V* converts with --from vstar)', source);
  return m[1] as VisualProbeSplit;
}

function text(item: Record<string, unknown>, key: string, where: Where, expected: string): string {
  const value = item[key];
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value.trim() === '') return fail(where, key, expected, value);
  return value.trim();
}

export async function loadVisualProbe(src: string, imagesRoot?: string): Promise<LoadResult> {
  const tasks: Converted[] = [];
  for (const file of await splitFiles(resolve(src))) {
    const folder = dirname(file);
    const roots = [...(imagesRoot ? [resolve(imagesRoot)] : []), dirname(folder), folder];
    for (const { value, where } of await readItems(file)) {
      const item = needObject(value, where, '(record)');
      const split = splitOf(item, file, where);
      const question = text(item, 'problem', where, 'the question text').replace(/<image>/g, '').trim() || fail(where, 'problem', 'the question text besides the <image> placeholder', item.problem);
      const answer = text(item, 'solution', where, 'the answer text');
      const images = item.images;
      if (!Array.isArray(images) || images.length !== 1 || typeof images[0] !== 'string' || images[0] === '') fail(where, 'images', 'a list of one image path', images);
      const image = await existingImage(roots, images[0] as string, where, 'images[0]');
      const id = item.doc_id ?? where.item;
      tasks.push({
        record: { id: `visualprobe-${split}-${String(id)}`, question, answer, kind: VISUAL_SEARCH_KIND, difficulty: 0, source: `visualprobe/${split}`, family: split, meta: metadataFrom({}) },
        sourceImage: image,
      });
    }
  }
  return { tasks, skipped: [], warnings: [] };
}
