/**
 * The system turn an episode opens with: the presentation's choice for the episode's tools
 * switch, or the env's own words (episodes/prompt.ts) when it keeps them. Pure; the words are
 * passed in so this module knows no tool.
 */
import type { SystemPromptSetting } from './presentation.js';

/**
 * The system turn's text, or null for no system turn. `tools` is the episode's switch (the arm),
 * not whether this image has tools that apply: a run's no-tools prompt is for its no-tools episodes.
 */
export function systemTurnText(setting: SystemPromptSetting, tools: boolean, envText: () => string): string | null {
  const chosen = setting !== null && typeof setting === 'object' ? ((tools ? setting.tools : setting.no_tools) ?? null) : setting;
  if (chosen === null) return envText();
  return chosen === '' ? null : chosen;
}
