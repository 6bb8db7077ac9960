/**
 * Every text a policy may read under a presentation that does not come from a task: the env's
 * fixed observation words (episodes/prompt.ts, FIXED_TEXTS) and the presentation's own system
 * turns. A tokenizer learned for a policy (the trainer's micro model) learns these besides the
 * tasks' questions and gold turns, so nothing a policy reads is spelled in two places. The order is
 * fixed: a tokenizer learned from the same texts in the same order is the same tokenizer.
 */
import { FIXED_TEXTS } from '../episodes/prompt.js';
import type { Presentation } from './presentation.js';

export function presentationTexts(presentation: Presentation): string[] {
  const setting = presentation.system_prompt;
  const prompts = setting !== null && typeof setting === 'object' ? [setting.tools, setting.no_tools] : [setting];
  return [...FIXED_TEXTS, ...prompts.filter((text): text is string => typeof text === 'string' && text !== '')];
}
