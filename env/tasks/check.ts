/**
 * The checker (V-Thinker's checker–repairer, made exact). For one task it verifies:
 * - record: unique row keys and headers, bands keyed by labels that exist in the table;
 * - answer: recomputed from the stored table and query by an independent code path;
 * - geometry, on real pixels (a label map, label-map.ts): every mark's ink lies inside its own
 *   band with the tools' 2 px inset, no ink lies in a band it does not belong to, bands of a
 *   family do not overlap, every band holds its label's ink, no two marks' ink overlaps, nothing
 *   is cut off at the image edge;
 * - gold: every call names a known tool and existing labels, and applies cleanly (runToolCall);
 * - diagrams (kind geometry, geometry/check-diagram.ts): the answer from the points on another
 *   path, its margin against a few pixels of error, the dots on the pixels, and the gold
 *   construction showing the answer on the edited image;
 * - search scenes (kind search, search/check-search.ts): the answer and the named objects from
 *   `meta.objects`, the answer absent from the question, the need-for-zoom criterion, and each
 *   object's ink exactly its box;
 * - regeneration (generated tasks read from disk): rebuilding from the stored seed gives the same
 *   record and a byte-identical PNG.
 * It reports; it never edits a task. Repair (re-rolling) is the generator's job.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { decodeImage, type RgbImage } from '../core/image.js';
import { releasePixels } from '../core/pixel-pool.js';
import { DEFAULT_LIMITS } from '../episodes/episode.js';
import { BAND_FAMILIES, bandKey, resolveMetadata, type BandFamily, type BBox, type ImageMetadata, type PixelMetadata } from '../tools/metadata.js';
import { getTool, runToolCall } from '../tools/registry.js';
import { recomputeAnswer } from './check-answer.js';
import type { CheckIssue } from './check-issue.js';
import { checkDiagram } from './geometry/check-diagram.js';
import { buildTask, GENERATOR_VERSION, renderTask, specOf, type RenderedTask } from './generate.js';
import { BAND_INSET_PX } from './layout-error.js';
import { inkInside, type LabelMap } from './label-map.js';
import { checkSearch } from './search/check-search.js';
import type { ZoomBudget } from './search/legibility.js';
import type { TaskRecord } from './record.js';
import { stableJson } from './stable-json.js';

export interface CheckReport {
  id: string;
  ok: boolean;
  issues: CheckIssue[];
}

export interface CheckOptions {
  /** Folder the record's `image` is relative to (the JSONL's folder). */
  taskDir?: string;
  /** The freshly rendered task, when the generator checks its own output (skips regeneration). */
  rendered?: RenderedTask;
  /** Search scenes: judge the need-for-zoom criterion under this budget instead of the task's own. */
  budget?: Partial<ZoomBudget>;
}

function describeBox(b: BBox): string {
  return `(${b.x1},${b.y1})–(${b.x2},${b.y2})`;
}

function inside(inner: BBox, outer: BBox, inset: number): boolean {
  return inner.x1 >= outer.x1 + inset && inner.y1 >= outer.y1 + inset && inner.x2 <= outer.x2 - inset && inner.y2 <= outer.y2 - inset;
}

function overlaps(a: BBox, b: BBox): boolean {
  return a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
}

function bandsOf(meta: ImageMetadata, family: BandFamily): Record<string, BBox> | undefined {
  return meta[bandKey(family)] as Record<string, BBox> | undefined;
}

export function checkRecord(task: TaskRecord): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const table = task.table;
  if (!table) return issues;
  const headers = new Set(table.columns);
  if (headers.size !== table.columns.length) issues.push({ check: 'record', message: `table headers are not unique: ${table.columns.join(', ')}` });
  const keys = table.rows.map((r) => String(r[0]));
  const dup = keys.find((k, i) => keys.indexOf(k) !== i);
  if (dup !== undefined) issues.push({ check: 'record', message: `row key '${dup}' appears twice; rows_bbox is keyed by first cells, so they must be unique` });
  table.rows.forEach((r, i) => {
    if (r.length !== table.columns.length) issues.push({ check: 'record', message: `table row ${i} has ${r.length} cells, the header has ${table.columns.length}` });
  });
  const expected: Partial<Record<BandFamily, string[]>> = task.kind === 'table' ? { columns: table.columns, rows: keys } : task.kind === 'hbar' ? { y_values: keys } : task.kind === 'chart' ? {} : { x_values: keys };
  for (const [family, labels] of Object.entries(expected) as [BandFamily, string[]][]) {
    const bands = bandsOf(task.meta, family);
    if (!bands) {
      if (task.meta.source === 'generator') issues.push({ check: 'record', message: `${bandKey(family)} is missing` });
      continue;
    }
    const names = Object.keys(bands);
    const missing = labels.filter((l) => !(l in bands));
    const extra = names.filter((n) => !labels.includes(n));
    if (missing.length > 0 || extra.length > 0) issues.push({ check: 'record', message: `${bandKey(family)} does not match the table: missing ${JSON.stringify(missing)}, unexpected ${JSON.stringify(extra)}` });
  }
  return issues;
}

export function checkAnswer(task: TaskRecord): CheckIssue[] {
  if (!task.query || !task.table) return [];
  let expected: string | string[];
  try {
    expected = recomputeAnswer(task.table, task.query);
  } catch (err) {
    return [{ check: 'answer', message: `the question has no single answer: ${(err as Error).message}` }];
  }
  if (stableJson(expected) !== stableJson(task.answer)) {
    return [{ check: 'answer', message: `stored answer ${JSON.stringify(task.answer)} but the table gives ${JSON.stringify(expected)} for ${JSON.stringify(task.query)}` }];
  }
  return [];
}

/** Geometry on pixels: the label map of the scene against the metadata the record stores. */
export function checkGeometry(map: LabelMap, meta: ImageMetadata): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const add = (message: string) => issues.push({ check: 'geometry', message });
  const { width, height } = map;
  if (map.conflicts > 0) add(`the ink of two marks overlaps at ${map.conflicts} pixel(s), first at (${map.firstConflict?.x}, ${map.firstConflict?.y})`);
  const families = BAND_FAMILIES.filter((f) => bandsOf(meta, f) !== undefined);
  const figure = meta.figure_bbox;
  for (const family of families) {
    const bands = Object.entries(bandsOf(meta, family) as Record<string, BBox>);
    for (const [label, box] of bands) {
      if (box.x1 < 0 || box.y1 < 0 || box.x2 > width || box.y2 > height) add(`${family} band '${label}' ${describeBox(box)} leaves the ${width}×${height} image`);
      if (figure && !inside(box, figure, 0)) add(`${family} band '${label}' ${describeBox(box)} is not inside figure_bbox ${describeBox(figure)}`);
    }
    for (let i = 0; i < bands.length; i++) {
      for (let j = i + 1; j < bands.length; j++) {
        const [a, ab] = bands[i] as [string, BBox];
        const [b, bb] = bands[j] as [string, BBox];
        if (overlaps(ab, bb)) add(`${family} bands '${a}' ${describeBox(ab)} and '${b}' ${describeBox(bb)} overlap`);
      }
    }
  }
  const inked = new Set<string>();
  map.marks.forEach((mark, id) => {
    const extent = map.extents[id];
    if (!extent) {
      add(`${mark.name} painted no pixels`);
      return;
    }
    if (extent.x1 <= 0 || extent.y1 <= 0 || extent.x2 >= width || extent.y2 >= height) add(`${mark.name} touches the image edge at ${describeBox(extent)}: it may be cut off`);
    if (mark.within) {
      const box = meta[mark.within] as BBox | undefined;
      if (!box) add(`${mark.name} must lie inside ${mark.within}, which the metadata lacks`);
      else if (!inside(extent, box, 0)) add(`${mark.name} ink ${describeBox(extent)} is not inside ${mark.within} ${describeBox(box)}`);
    }
    for (const family of Object.keys(mark.owners) as BandFamily[]) {
      if (!families.includes(family)) add(`${mark.name} belongs to a ${family} band, but the metadata has no ${bandKey(family)}`);
    }
    for (const family of families) {
      const bands = bandsOf(meta, family) as Record<string, BBox>;
      const owner = mark.owners[family];
      if (owner !== undefined) {
        const band = bands[owner];
        if (!band) add(`${mark.name} belongs to ${family} band '${owner}', which ${bandKey(family)} does not have`);
        else if (!inside(extent, band, BAND_INSET_PX)) add(`${mark.name} ink ${describeBox(extent)} is not inside its ${family} band '${owner}' ${describeBox(band)} with the ${BAND_INSET_PX} px inset`);
        else inked.add(`${family}\u0000${owner}`);
      } else {
        for (const [label, band] of Object.entries(bands)) {
          if (!overlaps(extent, band)) continue;
          const count = inkInside(map, id, band);
          if (count > 0) add(`${mark.name} puts ${count} ink pixel(s) inside the ${family} band '${label}' ${describeBox(band)}, which it does not belong to`);
        }
      }
    }
  });
  for (const family of families) {
    for (const label of Object.keys(bandsOf(meta, family) as Record<string, BBox>)) {
      if (!inked.has(`${family}\u0000${label}`)) add(`${family} band '${label}' holds no ink of its label`);
    }
  }
  return issues;
}

const FAMILY_OF_TOOL = /^focus_on_(columns|rows|x_values|y_values)_with_(mask|draw|highlight)$/;

/** Gold calls: known tools, labels present in the metadata, and (given the image) a clean run. */
export async function checkGold(task: TaskRecord, image: RgbImage | null): Promise<CheckIssue[]> {
  const issues: CheckIssue[] = [];
  const gold = task.gold ?? [];
  gold.forEach((call, i) => {
    if (!getTool(call.name)) {
      issues.push({ check: 'gold', message: `gold call ${i + 1} names the unknown tool '${call.name}'` });
      return;
    }
    const m = FAMILY_OF_TOOL.exec(call.name);
    if (!m) return;
    const family = m[1] as BandFamily;
    const labels = call.arguments[family];
    const bands = bandsOf(task.meta, family);
    if (!Array.isArray(labels) || labels.length === 0) issues.push({ check: 'gold', message: `gold call ${i + 1} (${call.name}) needs a non-empty '${family}' list` });
    else if (!bands) issues.push({ check: 'gold', message: `gold call ${i + 1} (${call.name}) uses ${family}, but the metadata has no ${bandKey(family)}` });
    else for (const label of labels) if (typeof label !== 'string' || !(label in bands)) issues.push({ check: 'gold', message: `gold call ${i + 1} (${call.name}) names '${String(label)}', which is not a label of ${bandKey(family)}` });
  });
  if (issues.length > 0 || !image || gold.length === 0) return issues;
  let meta: PixelMetadata;
  try {
    meta = resolveMetadata(task.meta, image.width, image.height);
  } catch (err) {
    return [{ check: 'gold', message: `metadata unusable by the tools: ${(err as Error).message}` }];
  }
  // The outputs made here are held by nothing else: each goes back to the pool once the next call
  // has read it. The task's own pixels stay with the caller.
  const release = (made: RgbImage) => {
    if (made.data !== image.data) releasePixels(made);
  };
  let current = image;
  for (const [i, call] of gold.entries()) {
    // Each call reads the image the one before it produced, so they run one after the other.
    const outcome = await runToolCall(current, call, meta);
    if (outcome.ok) {
      if (outcome.image.data !== current.data) release(current);
      current = outcome.image;
    } else issues.push({ check: 'gold', message: `gold call ${i + 1} (${call.name}) fails: [${outcome.error.class}] ${outcome.error.message}` });
  }
  release(current);
  return issues;
}

function differingFields(a: TaskRecord, b: TaskRecord): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => stableJson((a as unknown as Record<string, unknown>)[k]) !== stableJson((b as unknown as Record<string, unknown>)[k]));
}

function countDifferingPixels(a: Buffer, b: Buffer): number {
  let n = 0;
  for (let i = 0; i < a.length; i += 3) if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2]) n++;
  return n;
}

async function regenerate(task: TaskRecord, taskDir: string | undefined, issues: CheckIssue[]): Promise<RenderedTask | null> {
  const spec = specOf(task);
  if (!spec || !task.generator) return null;
  if (task.generator.version !== GENERATOR_VERSION) {
    issues.push({ check: 'regenerate', message: `made by generator version ${task.generator.version}; this checker regenerates version ${GENERATOR_VERSION}, so its pixels cannot be verified. Regenerate the data set.` });
    return null;
  }
  let rendered: RenderedTask;
  try {
    rendered = await renderTask(buildTask(spec));
  } catch (err) {
    issues.push({ check: 'regenerate', message: `cannot rebuild from the stored seed: ${(err as Error).message}` });
    return null;
  }
  const fields = differingFields({ ...rendered.record, image: task.image }, task);
  if (fields.length > 0) issues.push({ check: 'regenerate', message: `the stored record differs from the one its seed produces in: ${fields.join(', ')}` });
  if (taskDir) {
    try {
      const stored = await readFile(resolve(taskDir, task.image));
      // Equal bytes settle it; otherwise the pixels decide, so a file written by another PNG
      // encoder (vistool's before it wrote PNGs with node's zlib, or a re-compressed copy) passes.
      if (!stored.equals(rendered.png)) {
        const pixels = await decodeImage(stored, { maxPixels: DEFAULT_LIMITS.maxPixels });
        const differing = pixels.width === rendered.image.width && pixels.height === rendered.image.height ? countDifferingPixels(pixels.data, rendered.image.data) : -1;
        if (differing !== 0) {
          const what = differing < 0 ? `${pixels.width}×${pixels.height}, not ${rendered.image.width}×${rendered.image.height}` : `${differing} of ${pixels.width * pixels.height} pixels differ`;
          issues.push({ check: 'image', message: `${task.image} is not the image its seed produces (${what})` });
        }
      }
    } catch (err) {
      issues.push({ check: 'image', message: `cannot read ${task.image}: ${(err as Error).message}` });
    }
  }
  return rendered;
}

export async function checkTask(task: TaskRecord, options: CheckOptions = {}): Promise<CheckReport> {
  const issues: CheckIssue[] = [...checkRecord(task), ...checkAnswer(task)];
  const rendered = options.rendered ?? (await regenerate(task, options.taskDir, issues));
  let image: RgbImage | null = rendered?.image ?? null;
  if (rendered) issues.push(...checkGeometry(rendered.labelMap, task.meta));
  if (!image && options.taskDir) {
    try {
      // The limit episodes enforce: a file the server would refuse is not ok here either.
      image = await decodeImage(resolve(options.taskDir, task.image), { maxPixels: DEFAULT_LIMITS.maxPixels });
    } catch (err) {
      issues.push({ check: 'image', message: `cannot read ${task.image}: ${(err as Error).message}` });
    }
  }
  if (image && !rendered) {
    try {
      resolveMetadata(task.meta, image.width, image.height);
    } catch (err) {
      issues.push({ check: 'record', message: `metadata: ${(err as Error).message}` });
    }
  }
  // A diagram's gold constructions are verified against its answer on the edited pixels.
  issues.push(...(task.kind === 'geometry' ? await checkDiagram(task, image) : await checkGold(task, image)));
  if (task.kind === 'search') issues.push(...checkSearch(task, image, rendered?.labelMap ?? null, options.budget));
  return { id: task.id, ok: issues.length === 0, issues };
}

/** Folder of a JSONL file: what its records' image paths are relative to. */
export function taskDirOf(jsonlPath: string): string {
  return dirname(resolve(jsonlPath));
}
