/**
 * What an eval's episodes show the policy and how long they may run: the presentation (system
 * turn, image view), the turn and tool-call limits and the reply budget. They come from a run
 * config — a checkpoint's own (`<ckpt>/../../config.json` or --trainer-config), or the one an
 * `openai:` eval names with --run-config — so a policy is evaluated on the episodes it was trained
 * on (presentation/run-config.ts maps the config, as the trainer does); the command's flags
 * override single settings. Without a run config: the env's own presentation and limits. The
 * pixel bounds (the policy's image processor's, which crop reads boxes through) are the run
 * config's, else Qwen2.5-VL's processor defaults; --min-pixels/--max-pixels override them.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pixelBoundsProblem, QWEN2_5_VL_PROCESSOR, type PixelBounds } from '../config/qwen-image-tokens.js';
import { DEFAULT_LIMITS } from '../episodes/episode.js';
import { DEFAULT_PRESENTATION, parsePresentation, PresentationError, type Presentation } from '../presentation/presentation.js';
import { episodeSettingsOf } from '../presentation/run-config.js';

export interface EvalEpisodeSettings {
  presentation: Presentation;
  maxTurns: number;
  maxToolCalls: number;
  /** The run config's eval.max_new_tokens, when there is a run config. */
  maxNewTokens: number | null;
  /** The policy's image processor bounds, the episodes' pixel_bounds. */
  pixelBounds: PixelBounds;
  /** The run config read, for progress lines; null when none. */
  runConfigPath: string | null;
}

/** The flags that override a run config's settings (undefined: not given). */
export interface EvalEpisodeFlags {
  maxTurns?: number;
  maxToolCalls?: number;
  /** Replaces the system turn in both arms; '' leaves it out. */
  systemPrompt?: string;
  latestImages?: number;
  imagesFirst?: boolean;
  /** The policy's image processor bounds, each over the run config's (or Qwen2.5-VL's default). */
  minPixels?: number;
  maxPixels?: number;
}

/**
 * The run config at `path` as JSON, or null when it is absent and not `required` (a bare
 * save_pretrained folder has none). A named file that cannot be read or parsed is an error.
 */
export async function readRunConfigFile(path: string, required: boolean, flag: string): Promise<{ path: string; config: Record<string, unknown> } | null> {
  const absolute = resolve(path);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (err) {
    if (!required) return null;
    throw new Error(`cannot read ${flag} ${absolute} (${(err as Error).message}); give the run config the policy was trained with`, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${flag} ${absolute} is not JSON (${(err as Error).message})`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${flag} ${absolute} is not a run config (a JSON object)`);
  return { path: absolute, config: value as Record<string, unknown> };
}

/** A checkpoint's own run config: `--trainer-config`, else `<ckpt>/../../config.json` when it exists. */
export function checkpointRunConfigPath(checkpoint: string, trainerConfig: string | undefined): { path: string; required: boolean } {
  return trainerConfig !== undefined ? { path: trainerConfig, required: true } : { path: join(checkpoint, '..', '..', 'config.json'), required: false };
}

export function evalEpisodeSettings(runConfig: { path: string; config: Record<string, unknown> } | null, flags: EvalEpisodeFlags): EvalEpisodeSettings {
  let presentation: Presentation = structuredClone(DEFAULT_PRESENTATION) as Presentation;
  let maxTurns: number = DEFAULT_LIMITS.maxTurns;
  let maxToolCalls: number = DEFAULT_LIMITS.maxToolCalls;
  let maxNewTokens: number | null = null;
  let bounds: PixelBounds = { minPixels: QWEN2_5_VL_PROCESSOR.minPixels, maxPixels: QWEN2_5_VL_PROCESSOR.maxPixels };
  if (runConfig !== null) {
    let settings;
    try {
      settings = episodeSettingsOf(runConfig.config);
    } catch (err) {
      if (err instanceof PresentationError) throw new Error(`run config ${runConfig.path}: ${err.message}`, { cause: err });
      throw err;
    }
    presentation = settings.presentation;
    maxTurns = settings.maxTurns;
    // The trainer's episodes count at least one call (presentation/run-config.ts).
    maxToolCalls = Math.max(settings.maxToolCalls, 1);
    maxNewTokens = settings.maxNewTokens;
    bounds = settings.pixelBounds;
  }
  const pixelBounds = { minPixels: flags.minPixels ?? bounds.minPixels, maxPixels: flags.maxPixels ?? bounds.maxPixels };
  const problem = pixelBoundsProblem(pixelBounds);
  if (problem !== null) throw new Error(`pixel bounds (--min-pixels/--max-pixels${runConfig === null ? '' : `, or ${runConfig.path}'s policy bounds`}): ${problem}`);
  const view = { ...presentation.view };
  if (flags.latestImages !== undefined) view.latest_images = flags.latestImages;
  if (flags.imagesFirst !== undefined) view.images_first = flags.imagesFirst;
  presentation = parsePresentation({ system_prompt: flags.systemPrompt ?? presentation.system_prompt, view });
  return {
    presentation,
    maxTurns: flags.maxTurns ?? maxTurns,
    maxToolCalls: flags.maxToolCalls ?? maxToolCalls,
    maxNewTokens,
    pixelBounds,
    runConfigPath: runConfig?.path ?? null,
  };
}
