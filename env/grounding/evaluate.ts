/**
 * How good OCR grounding is, measured against tasks with exact geometry (the generator's): per
 * image, every ground-truth band is paired with the predicted band that overlaps it most (each
 * used once), then per kind we count label recall (a band was found there), text exact match
 * (and its label reads exactly as the truth), band IoU, and the time per image.
 * Pure scoring plus a loop over a task list; the loop is what `vistool grounding eval` runs.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { decodeImage } from '../core/image.js';
import type { TaskRecord } from '../tasks/record.js';
import { BAND_FAMILIES, bandKey, resolveMetadata, type BandFamily, type BBox, type ImageMetadata } from '../tools/metadata.js';
import type { RequestedKind } from './classify.js';
import type { GroundingOptions } from './ground.js';
import type { GroundedKind } from './layout-plan.js';

/** Band IoU at or above this counts as a well-placed band (the goal). */
export const GOOD_IOU = 0.8;

export interface LabelScore {
  family: BandFamily;
  truth: string;
  /** The predicted label paired with it, or null when no predicted band overlaps it. */
  predicted: string | null;
  iou: number;
}

export interface ImageScore {
  id: string;
  kind: string;
  difficulty: number;
  /** The kind grounding found (null: none). */
  found: GroundedKind | null;
  labels: LabelScore[];
  /** Predicted bands paired with no ground-truth band. */
  extra: number;
  ms: number;
}

export function boxIou(a: BBox, b: BBox): number {
  const ix = Math.max(0, Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1));
  const iy = Math.max(0, Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1));
  const inter = ix * iy;
  const union = (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - inter;
  return union > 0 ? inter / union : 0;
}

/** Pairs truth and predicted bands family by family, largest overlaps first. */
export function scoreBands(truth: ImageMetadata, predicted: ImageMetadata): { labels: LabelScore[]; extra: number } {
  const labels: LabelScore[] = [];
  let extra = 0;
  for (const family of BAND_FAMILIES) {
    const t = Object.entries((truth[bandKey(family)] ?? {}) as Record<string, BBox>);
    const p = Object.entries((predicted[bandKey(family)] ?? {}) as Record<string, BBox>);
    const pairs: { ti: number; pi: number; iou: number }[] = [];
    t.forEach(([, tb], ti) => p.forEach(([, pb], pi) => {
      const iou = boxIou(tb, pb);
      if (iou > 0) pairs.push({ ti, pi, iou });
    }));
    pairs.sort((a, b) => b.iou - a.iou);
    const tUsed = new Map<number, { pi: number; iou: number }>();
    const pUsed = new Set<number>();
    for (const pair of pairs) {
      if (tUsed.has(pair.ti) || pUsed.has(pair.pi)) continue;
      tUsed.set(pair.ti, pair);
      pUsed.add(pair.pi);
    }
    t.forEach(([label], ti) => {
      const hit = tUsed.get(ti);
      labels.push({ family, truth: label, predicted: hit ? (p[hit.pi] as [string, BBox])[0] : null, iou: hit?.iou ?? 0 });
    });
    extra += p.length - pUsed.size;
  }
  return { labels, extra };
}

export interface KindSummary {
  images: number;
  labels: number;
  /** Share of truth labels with a predicted band on them. */
  labelRecall: number;
  /** Share of truth labels whose paired band's label reads exactly the same. */
  textExact: number;
  meanIou: number;
  /** Share of truth labels whose paired band has IoU ≥ GOOD_IOU. */
  goodIou: number;
  /** Share of images whose layout kind was found correctly (auto mode). */
  kindCorrect: number;
  extraBands: number;
  msPerImage: number;
}

export function summarise(scores: readonly ImageScore[]): Record<string, KindSummary> {
  const byKind = new Map<string, ImageScore[]>();
  for (const s of scores) {
    byKind.set(s.kind, [...(byKind.get(s.kind) ?? []), s]);
    byKind.set('all', [...(byKind.get('all') ?? []), s]);
  }
  const out: Record<string, KindSummary> = {};
  for (const [kind, list] of byKind) {
    const labels = list.flatMap((s) => s.labels);
    const n = Math.max(1, labels.length);
    out[kind] = {
      images: list.length,
      labels: labels.length,
      labelRecall: labels.filter((l) => l.predicted !== null).length / n,
      textExact: labels.filter((l) => l.predicted === l.truth).length / n,
      meanIou: labels.reduce((a, l) => a + l.iou, 0) / n,
      goodIou: labels.filter((l) => l.iou >= GOOD_IOU).length / n,
      kindCorrect: list.filter((s) => s.found === s.kind).length / list.length,
      extraBands: list.reduce((a, s) => a + s.extra, 0),
      msPerImage: list.reduce((a, s) => a + s.ms, 0) / list.length,
    };
  }
  return out;
}

export interface EvaluateOptions extends GroundingOptions {
  /** Ground with the task's own kind instead of detecting it. */
  useTaskKind?: boolean;
  onImage?: (score: ImageScore) => void;
}

export const GROUNDED_KINDS: readonly GroundedKind[] = ['table', 'vbar', 'hbar'];

/** Grounds every table / vbar / hbar task of the list and scores it against its metadata. */
export async function evaluateTasks(tasks: readonly TaskRecord[], tasksFile: string, options: EvaluateOptions = {}): Promise<ImageScore[]> {
  const base = dirname(resolve(tasksFile));
  const scores: ImageScore[] = [];
  for (const task of tasks) {
    if (!(GROUNDED_KINDS as readonly string[]).includes(task.kind)) continue;
    const image = await decodeImage(await readFile(resolve(base, task.image)));
    const truth = resolveMetadata(task.meta, image.width, image.height);
    const kind: RequestedKind = options.useTaskKind ? (task.kind as GroundedKind) : (options.kind ?? 'auto');
    const { groundImage } = await loadGround();
    const grounding = await groundImage(image, { ...options, kind });
    const { labels, extra } = scoreBands(truth, grounding.meta);
    const score: ImageScore = { id: task.id, kind: task.kind, difficulty: task.difficulty, found: grounding.kind, labels, extra, ms: grounding.timing.totalMs };
    options.onImage?.(score);
    scores.push(score);
  }
  return scores;
}

/** The OCR pipeline, loaded on first use: importing this module must not start onnxruntime. */
function loadGround(): Promise<typeof import('./ground.js')> {
  return import('./ground.js');
}
