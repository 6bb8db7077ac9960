/**
 * The metadata an image should be used with: its own when it has bands (generator, dataset, a
 * sidecar file), else what OCR grounding finds. This is the one call tasks, the env server and
 * the playground need to make the focus tools work on any chart or table image.
 * OCR trouble (no layout, models that will not load) never fails the caller: it gets the
 * metadata it gave, and the reason.
 */
import type { RgbImage } from '../core/image.js';
import { bandFamiliesOf, resolveMetadata, type PixelMetadata } from '../tools/metadata.js';
import type { Grounding, GroundingOptions } from './ground.js';

export interface MetadataChoice {
  meta: PixelMetadata;
  /** 'given': the caller's metadata had bands; 'ocr': grounding supplied them; 'none': neither has any. */
  source: 'given' | 'ocr' | 'none';
  grounding?: Grounding;
  /** Why OCR did not help, when source is 'none'. */
  reason?: string;
}

/**
 * `noGrounding`: why the caller's task is never grounded (tasks/grounding-need.ts); then no OCR runs
 * and the caller keeps the metadata it gave, with that reason.
 */
export async function metadataOrGrounding(image: RgbImage, given: PixelMetadata | undefined, options: GroundingOptions = {},
  noGrounding: string | null = null): Promise<MetadataChoice> {
  const base: PixelMetadata = given ?? resolveMetadata({}, image.width, image.height);
  if (bandFamiliesOf(base).length > 0) return { meta: base, source: 'given' };
  if (noGrounding !== null) return { meta: base, source: 'none', reason: `${noGrounding}: no OCR` };
  // A diagram's labelled points are what its tools use; OCR looks for chart and table layouts.
  if (Object.keys(base.points ?? {}).length > 0) return { meta: base, source: 'given' };
  let grounding: Grounding;
  try {
    // Loaded on first use: the env server and the playground import this module at start-up, and
    // only images without bands need onnxruntime.
    const { groundImage } = await import('./ground.js');
    grounding = await groundImage(image, options);
  } catch (err) {
    return { meta: base, source: 'none', reason: `OCR grounding failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (bandFamiliesOf(grounding.meta).length === 0) return { meta: base, source: 'none', grounding, reason: 'OCR found no table or bar-chart layout in the image' };
  // Grounded bands win; anything else the caller knew (a figure box, dataset fields) is kept.
  return { meta: { ...base, ...grounding.meta }, source: 'ocr', grounding };
}
