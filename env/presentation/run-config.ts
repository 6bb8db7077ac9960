/**
 * A run config's presentation: the episode settings a policy trained with that config saw, so
 * `vistool eval` of its checkpoint, the veRL export and the trainer open episodes alike. The
 * presentation block is the run config's `policy.system_prompt` and `policy.view` key for key; the
 * tools switch and the limits are `env.tools`, `env.max_turns` and `env.max_tool_calls`. The
 * trainer builds the same request from its typed config (vistool_trainer/rollouts/presentation.py);
 * a test checks the two agree. The pixel bounds are those of the policy's image processor as the
 * config builds it (pixelBoundsOf: policy.micro's for micro, else policy.min_pixels/max_pixels
 * with Qwen2.5-VL's default for a null one): crop reads boxes in the image shown under them.
 */
import type { RunConfig } from '../../protocol/run-config.js';
import { pixelBoundsOf } from '../config/prompt-token-budget.js';
import type { PixelBounds } from '../config/qwen-image-tokens.js';
import { withDefaults } from '../config/run-config-schema.js';
import { parsePresentation, type Presentation } from './presentation.js';

export interface EpisodeSettings {
  presentation: Presentation;
  tools: boolean;
  maxTurns: number;
  maxToolCalls: number;
  /** eval.max_new_tokens: the reply budget of the run's own (greedy) evaluations. */
  maxNewTokens: number;
  /** The policy's image processor bounds (policy.micro.* or policy.min_pixels/max_pixels). */
  pixelBounds: PixelBounds;
}

/** Throws PresentationError (naming the run-config key) for a presentation the env would refuse. */
export function episodeSettingsOf(runConfig: Record<string, unknown>): EpisodeSettings {
  const config = withDefaults(runConfig) as {
    policy: { system_prompt: unknown; view: unknown };
    env: { tools: boolean; max_turns: number; max_tool_calls: number };
    eval: { max_new_tokens: number };
  };
  const presentation = parsePresentation({ system_prompt: config.policy.system_prompt, view: config.policy.view }, 'policy');
  return {
    presentation,
    tools: config.env.tools,
    maxTurns: config.env.max_turns,
    maxToolCalls: config.env.max_tool_calls,
    maxNewTokens: config.eval.max_new_tokens,
    pixelBounds: pixelBoundsOf(config as unknown as RunConfig).bounds,
  };
}

/** The episode-start options (docs/CONTRACTS.md) of one arm of a run; `tools` overrides env.tools (an eval's other arm). */
export function episodeOptionsOf(settings: EpisodeSettings, tools: boolean = settings.tools): Record<string, unknown> {
  // The server counts at least one call (the trainer has always sent max(env.max_tool_calls, 1)).
  return {
    tools,
    max_turns: settings.maxTurns,
    max_tool_calls: Math.max(settings.maxToolCalls, 1),
    presentation: settings.presentation,
    pixel_bounds: { min_pixels: settings.pixelBounds.minPixels, max_pixels: settings.pixelBounds.maxPixels },
  };
}
