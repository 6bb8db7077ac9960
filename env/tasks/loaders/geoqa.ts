/**
 * GeoQA (Chen et al. 2021) → task records. GeoQA ships its splits as Python pickles
 * (`train.pk`, `test.pk`: lists of dicts whose `image` is a numpy array), which are never read
 * here (unpickling runs code). What is read is the same records as JSON: a JSON array or JSONL
 * export of the pickle's dicts with the image written to a file, or a folder of per-problem JSON
 * files (`<id>.json`) as GeoQA's raw release has them. Images: the record's `image` path when it
 * is a string, else `<id>.png` in --images-root, in SRC's folder, or in an `image/` or `images/`
 * folder beside it.
 *
 * Read: `id`, `subject` (the problem text, in Chinese as GeoQA writes it), `choices` (four),
 * `label` (the correct choice's index from 0, as GeoQA's own reader compares it),
 * `formal_point` (knowledge points, joined as the family). Not read: `comment` (the solution),
 * `manual_program`, `numbers`, `choice_nums`, `token_list`. Records are kind `geometry` with no
 * metadata. Refused: a pickle; `label` missing or outside the choices; a record spelling it
 * `lable` (some raw releases do) without `label`, since whether that one counts from 0 or 1 is
 * not documented; an image that is not there.
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { ConvertError, fail, metadataFrom, needObject, needString, readItems, type Converted, type LoadResult, type Where } from './common.js';
import { CHOICE_LETTERS, choiceQuestion, readChoices } from './multiple-choice.js';
import { existingImage } from './refocus.js';

async function sourceFiles(src: string): Promise<string[]> {
  const info = await stat(src).catch((err: Error) => {
    throw new ConvertError(`cannot read ${src}: ${err.message}`);
  });
  if (!info.isDirectory()) return [src];
  const names = (await readdir(src)).filter((n) => n.endsWith('.json')).sort((a, b) => Number(basename(a, '.json')) - Number(basename(b, '.json')) || a.localeCompare(b));
  if (names.length === 0) throw new ConvertError(`${src}: no GeoQA problem files (<id>.json) in this folder`);
  return names.map((n) => join(src, n));
}

/** One problem file holds one object; a split export holds a list (or JSONL). */
async function recordsOf(file: string): Promise<{ value: unknown; where: Where }[]> {
  const items = await readItems(file);
  // readItems reads an object's fields as keyed items: a per-problem file is one record.
  if (items.length > 0 && items.every((i) => 'key' in i && i.key !== undefined) && items.some((i) => i.key === 'subject')) {
    return [{ value: Object.fromEntries(items.map((i) => [i.key as string, i.value])), where: { file } }];
  }
  return items;
}

export async function loadGeoQA(src: string, imagesRoot?: string): Promise<LoadResult> {
  const path = resolve(src);
  if (['.pk', '.pkl', '.pickle'].includes(extname(path))) {
    throw new ConvertError(`${path}: GeoQA's pickles are not read (unpickling runs code). Export the records to JSON or JSONL with each image saved as a file (its path in "image"), or use the raw per-problem JSON files`);
  }
  const files = await sourceFiles(path);
  const folder = (await stat(path)).isDirectory() ? path : dirname(path);
  const roots = [...(imagesRoot ? [resolve(imagesRoot)] : []), folder, join(folder, 'image'), join(folder, 'images'), join(dirname(folder), 'image'), join(dirname(folder), 'images')];
  const tasks: Converted[] = [];
  for (const file of files) {
    for (const { value, where } of await recordsOf(file)) {
      const item = needObject(value, where, '(record)');
      const subject = needString(item, 'subject', where);
      const choices = readChoices(item.choices, where, 'choices');
      if (item.label === undefined && item.lable !== undefined) {
        fail(where, 'label', '"label" (the correct choice\'s index from 0); this record has "lable", whose base (0 or 1) GeoQA does not document — rename it to "label" with indices from 0', item.lable);
      }
      const label = item.label;
      if (typeof label !== 'number' || !Number.isInteger(label) || label < 0 || label >= choices.length) fail(where, 'label', `the index of the correct choice, 0 to ${choices.length - 1}`, label);
      const id = item.id ?? basename(file, '.json');
      const imageName = typeof item.image === 'string' ? item.image : `${String(id)}.png`;
      if (item.image !== undefined && typeof item.image !== 'string') fail(where, 'image', 'an image path (save the pickle\'s numpy arrays to files when exporting)', '(not a path)');
      const image = await existingImage(roots, imageName, where, 'image');
      const points = Array.isArray(item.formal_point) ? item.formal_point.filter((p): p is string => typeof p === 'string') : [];
      tasks.push({
        record: {
          id: `geoqa-${String(id)}`,
          question: choiceQuestion(subject, choices),
          answer: CHOICE_LETTERS[label] as string,
          kind: 'geometry',
          difficulty: 0,
          source: 'geoqa',
          ...(points.length > 0 ? { family: points.join(', ') } : {}),
          meta: metadataFrom({}),
        },
        sourceImage: image,
      });
    }
  }
  return { tasks, skipped: [], warnings: [] };
}
