/**
 * ChartQA → task records. Input: a question file (`test_augmented.json`, `test_human.json`, ...:
 * a JSON array of {imgname, query, label}) or the split folder holding them, with the images in
 * `png/` and the annotations in `annotations/<name>.json` beside it. Bands come from the
 * annotation's tick labels (`general_figure_info.{x_axis,y_axis}.major_labels.{values,bboxes}`)
 * as ReFocus builds them; v_bar and line charts get x_values_bbox, h_bar charts y_values_bbox.
 * Charts of other types (pie, ...) become kind "chart" with no bands. Boxes are in pixels.
 */
import { access, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import sharp from 'sharp';
import type { BBox } from '../../tools/metadata.js';
import type { TaskKind } from '../record.js';
import { at, ConvertError, fail, isObject, metadataFrom, needObject, needString, readAnswer, readItems, xBandsFromLabels, yBandsFromLabels, type Converted, type LoadResult, type TickLabel, type Where } from './common.js';

interface Annotation {
  type: string;
  plot: BBox;
  x: TickLabel[] | null;
  y: TickLabel[] | null;
  width: number;
}

function readTickLabels(axis: unknown, where: Where, field: string): TickLabel[] | null {
  if (!isObject(axis)) return null;
  const major = axis.major_labels;
  if (!isObject(major)) return null;
  const values = major.values;
  const boxes = major.bboxes;
  if (!Array.isArray(values)) fail(where, `${field}.major_labels.values`, 'a list of tick label texts', values);
  if (!Array.isArray(boxes) || boxes.length !== values.length) fail(where, `${field}.major_labels.bboxes`, `a list of ${values.length} boxes {x, y, w, h}, one per value`, boxes);
  return values.map((v, i) => {
    const b = boxes[i];
    if (!isObject(b) || !['x', 'y', 'w', 'h'].every((k) => typeof b[k] === 'number')) fail(where, `${field}.major_labels.bboxes[${i}]`, 'a box {x, y, w, h} in pixels', b);
    return { label: String(v), x: b.x as number, y: b.y as number, w: b.w as number, h: b.h as number };
  });
}

async function readAnnotation(file: string): Promise<Annotation> {
  const where: Where = { file };
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new ConvertError(`${file}: cannot read the annotation: ${(err as Error).message}`, { cause: err });
  }
  const root = needObject(value, where, '(annotation)');
  const type = needString(root, 'type', where);
  const info = needObject(root.general_figure_info, where, 'general_figure_info');
  const figure = needObject(needObject(info.figure_info, where, 'general_figure_info.figure_info').bbox, where, 'general_figure_info.figure_info.bbox');
  for (const k of ['x', 'y', 'w', 'h']) if (typeof figure[k] !== 'number') fail(where, `general_figure_info.figure_info.bbox.${k}`, 'a number (pixels)', figure[k]);
  const fx = figure.x as number, fy = figure.y as number;
  const plot = { x1: fx, y1: fy, x2: fx + (figure.w as number), y2: fy + (figure.h as number) };
  const x = readTickLabels(info.x_axis, where, 'general_figure_info.x_axis');
  const y = readTickLabels(info.y_axis, where, 'general_figure_info.y_axis');
  return { type, plot, x, y, width: 0 };
}

function spread(labels: TickLabel[], axis: 'x' | 'y'): number {
  const centres = labels.map((l) => (axis === 'x' ? l.x + l.w / 2 : l.y + l.h / 2));
  return Math.max(...centres) - Math.min(...centres);
}

async function imageWidth(file: string): Promise<number> {
  const m = await sharp(file).metadata();
  if (!m.width) throw new ConvertError(`${file}: cannot read the image size`);
  return m.width;
}

async function questionFiles(src: string): Promise<string[]> {
  const s = await stat(src).catch((err: Error) => {
    throw new ConvertError(`cannot read ${src}: ${err.message}`, { cause: err });
  });
  if (!s.isDirectory()) return [src];
  const files = (await readdir(src)).filter((f) => f.endsWith('.json')).sort().map((f) => join(src, f));
  if (files.length === 0) throw new ConvertError(`${src}: no ChartQA question files (*.json with {imgname, query, label}) in this folder`);
  return files;
}

export async function loadChartQA(src: string): Promise<LoadResult> {
  const tasks: Converted[] = [];
  const skipped: LoadResult['skipped'] = [];
  const warnings: LoadResult['warnings'] = [];
  const annotations = new Map<string, Annotation | string>();
  for (const file of await questionFiles(resolve(src))) {
    const root = dirname(file);
    const stem = basename(file, '.json');
    for (const { value, where } of await readItems(file)) {
      const item = needObject(value, where, '(record)');
      const imgname = needString(item, 'imgname', where);
      const query = needString(item, 'query', where);
      const answer = readAnswer(item.label, where, 'label');
      const image = join(root, 'png', imgname);
      await access(image).catch(() => fail(where, 'imgname', `an image at ${image} (png/ next to the question file)`, imgname));
      const annotationFile = join(root, 'annotations', `${basename(imgname).replace(/\.[^.]+$/, '')}.json`);
      let annotation = annotations.get(annotationFile);
      if (annotation === undefined) {
        annotation = await access(annotationFile).then(() => readAnnotation(annotationFile), () => `no annotation file ${annotationFile}`);
        if (typeof annotation !== 'string') annotation.width = await imageWidth(image);
        annotations.set(annotationFile, annotation);
      }
      const id = `chartqa-${stem}-${String(where.item ?? 0).padStart(6, '0')}`;
      let kind: TaskKind = 'chart';
      let meta = metadataFrom({});
      if (typeof annotation === 'string') {
        warnings.push({ where: at(where), reason: `${annotation}: converted without bands` });
      } else {
        meta = metadataFrom({ figure_bbox: annotation.plot });
        if (annotation.type === 'v_bar' || annotation.type === 'line') {
          if (annotation.x && annotation.x.length > 0) {
            kind = annotation.type === 'line' ? 'line' : 'vbar';
            meta = metadataFrom({ figure_bbox: annotation.plot, x_values_bbox: xBandsFromLabels(annotation.x, annotation.plot) });
          }
        } else if (annotation.type === 'h_bar') {
          // ReFocus reads h_bar categories from x_axis ("x and y are reversed"); take whichever
          // axis actually runs down the chart, x_axis first.
          const candidates = [annotation.x, annotation.y].filter((l): l is TickLabel[] => l !== null && l.length > 0);
          const categories = candidates.find((l) => l.length === 1 || spread(l, 'y') > spread(l, 'x'));
          if (categories) {
            kind = 'hbar';
            meta = metadataFrom({ figure_bbox: annotation.plot, y_values_bbox: yBandsFromLabels(categories, annotation.plot, annotation.width) });
          }
        }
        if (annotation.type !== 'pie' && kind === 'chart') warnings.push({ where: at(where), reason: `chart type '${annotation.type}' without usable tick labels: converted without bands` });
        const ticks = (kind === 'hbar' ? [annotation.x, annotation.y] : [annotation.x]).flatMap((l) => l ?? []).map((l) => l.label);
        if (kind !== 'chart' && new Set(ticks).size !== ticks.length) warnings.push({ where: at(where), reason: 'repeated tick labels share one band' });
      }
      tasks.push({ record: { id, question: query, answer, kind, difficulty: 0, source: 'chartqa', meta }, sourceImage: image });
    }
  }
  return { tasks, skipped, warnings };
}
