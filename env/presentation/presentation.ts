/**
 * What a policy sees in an episode, as one value the env applies: which system turn it reads
 * (chosen by the episode's tools switch), and the view of the images (how many of the newest
 * it sees, and whether a message's images come before its words). With the episode's limits
 * (max_turns, max_tool_calls) and the words of episodes/prompt.ts, this is the whole
 * presentation: the env server renders the messages exactly as the policy will read them, and
 * the trainer, `vistool eval` and the veRL agent loop take them from there (docs/CONTRACTS.md,
 * "Presentation"). A run config's `policy.system_prompt` and `policy.view` are this block, key for
 * key (run-config.ts).
 *
 * This module parses and checks the block; it never renders text and never reads files.
 */

/** The run config's `policy.view`: what the policy reads of the images so far. */
export interface PresentationView {
  /** Show only the newest N images; each older one becomes the words EARLIER_IMAGE. null: all. */
  latest_images: number | null;
  /** Put a message's images before its text (a tool result: the edited image, then what was done). */
  images_first: boolean;
}

/**
 * The run config's `policy.system_prompt`: null keeps the env's own system turn (the tool list and
 * call format, or the no-tools words), '' leaves the system turn out, a string replaces it, and
 * {tools, no_tools} chooses by the episode's tools switch (a missing or null arm keeps the env's).
 */
export type SystemPromptSetting = string | null | { tools?: string | null; no_tools?: string | null };

export interface Presentation {
  system_prompt: SystemPromptSetting;
  view: PresentationView;
}

export const DEFAULT_VIEW: Readonly<PresentationView> = Object.freeze({ latest_images: null, images_first: false });
export const DEFAULT_PRESENTATION: Readonly<Presentation> = Object.freeze({ system_prompt: null, view: DEFAULT_VIEW });

export class PresentationError extends Error {
  override name = 'PresentationError';
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function unknownKeys(value: Record<string, unknown>, allowed: readonly string[], where: string): void {
  const extra = Object.keys(value).filter((key) => !allowed.includes(key));
  if (extra.length > 0) throw new PresentationError(`${where} has unknown key(s) ${extra.join(', ')}: it takes ${allowed.join(', ')}`);
}

function systemPromptSetting(value: unknown, where: string): SystemPromptSetting {
  if (value === null || typeof value === 'string') return value;
  if (isObject(value)) {
    unknownKeys(value, ['tools', 'no_tools'], where);
    const arm = (key: 'tools' | 'no_tools'): string | null => {
      const text = value[key];
      if (text === undefined || text === null) return null;
      if (typeof text !== 'string') throw new PresentationError(`${where}.${key} must be a string or null, got ${JSON.stringify(text)}`);
      return text;
    };
    return { tools: arm('tools'), no_tools: arm('no_tools') };
  }
  throw new PresentationError(
    `${where} must be null (the env's own system turn), "" (none), a string, or {"tools": ..., "no_tools": ...}; got ${JSON.stringify(value)}`,
  );
}

function view(value: unknown, where: string): PresentationView {
  if (value === undefined || value === null) return { ...DEFAULT_VIEW };
  if (!isObject(value)) throw new PresentationError(`${where} must be an object such as {"latest_images": 1, "images_first": false}, got ${JSON.stringify(value)}`);
  unknownKeys(value, ['latest_images', 'images_first'], where);
  const latest = value.latest_images ?? null;
  if (latest !== null && (typeof latest !== 'number' || !Number.isInteger(latest) || latest < 1 || latest > 1000)) {
    throw new PresentationError(`${where}.latest_images must be a whole number from 1 to 1000, or null to show every image; got ${JSON.stringify(latest)}`);
  }
  const first = value.images_first ?? false;
  if (typeof first !== 'boolean') throw new PresentationError(`${where}.images_first must be true or false, got ${JSON.stringify(first)}`);
  return { latest_images: latest, images_first: first };
}

/** The block as a client sent it (absent keys take the defaults); throws PresentationError naming what is wrong. */
export function parsePresentation(value: unknown, where = 'presentation'): Presentation {
  if (value === undefined || value === null) return { system_prompt: null, view: { ...DEFAULT_VIEW } };
  if (!isObject(value)) throw new PresentationError(`${where} must be an object such as {"system_prompt": null, "view": {"latest_images": null}}, got ${JSON.stringify(value)}`);
  unknownKeys(value, ['system_prompt', 'view'], where);
  return { system_prompt: systemPromptSetting(value.system_prompt ?? null, `${where}.system_prompt`), view: view(value.view, `${where}.view`) };
}

/**
 * Whether each prompt is the one before it, the policy's reply and the new observation: true
 * unless the view hides earlier images, which changes what the policy reads of turns it has
 * already seen. A client that builds one token sequence per episode (the veRL loop's continuous
 * tokens, the trainer's one training sequence) may append while this holds.
 */
export function promptsOnlyGrow(presentation: Presentation): boolean {
  return presentation.view.latest_images === null;
}
