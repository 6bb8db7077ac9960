/**
 * Which tasks' images the env server may send to OCR grounding: only those whose tools could read
 * chart or table bands it finds. A geometry diagram's tools take its labelled points, a search
 * scene's and a benchmark photograph's (V*, HR-Bench, VisualProbe) take boxes in its own pixels;
 * OCR would look for a chart layout that is not there, may invent one from the scene's shapes, and
 * costs seconds a large image (3.6 s for a 768x576 search scene, 5.1 s for a 3840x2160 image, on the
 * loaded 2-core development machine).
 */
import type { TaskRecord } from './record.js';

/** The `source` prefixes the visual-search benchmarks' loaders write (env/tasks/loaders/). */
export const PHOTOGRAPH_SOURCES = ['vstar', 'hrbench', 'visualprobe'] as const;

/** Why `task`'s image is never grounded, or null when it may be (a chart or table without bands). */
export function whyNoGrounding(task: Pick<TaskRecord, 'kind' | 'source'>): string | null {
  if (task.kind === 'geometry') return "a geometry task's tools take its labelled points, not chart bands";
  if (task.kind === 'search') return "a search task's tools take boxes in the scene, not chart bands";
  const photograph = PHOTOGRAPH_SOURCES.find((prefix) => task.source === prefix || task.source.startsWith(`${prefix}/`));
  if (photograph !== undefined) return `a ${photograph} photograph's tools take boxes in the image, not chart bands`;
  return null;
}
