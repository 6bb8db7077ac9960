/**
 * The run config New Run Config writes, from four choices: model (micro, Qwen2.5-VL-3B or a
 * custom id/folder), tasks (generated of a kind, or a task file), preset (GRPO, DAPO, SFT+DAPO)
 * and device. Values follow what the micro model needs on a CPU (docs/ARCHITECTURE.md, docs/DEMO.md) and the DAPO paper's
 * settings for real models. The result always passes env/config's checks (a unit test holds
 * that for every combination).
 *
 * Editor-free (unit-tested under plain Node). Builds text; never writes files.
 */

export type ModelChoice = { kind: 'micro' } | { kind: 'qwen3b' } | { kind: 'custom'; model: string };
export type TasksChoice = { kind: 'generate'; taskKind: 'table' | 'vbar' | 'hbar' | 'grouped' | 'line' | 'geometry' | 'search' } | { kind: 'file'; train: string; eval: string | null; taskKind: string | null };
export type Preset = 'grpo' | 'dapo' | 'sft+dapo';
export type DeviceChoice = 'auto' | 'cpu' | 'cuda';

export interface TemplateChoices {
  name: string;
  model: ModelChoice;
  tasks: TasksChoice;
  preset: Preset;
  device: DeviceChoice;
}

export const PRESET_DESCRIPTIONS: Readonly<Record<Preset, string>> = {
  grpo: 'GRPO: symmetric clip (ε 0.2), sequence-mean loss, small KL to the start policy, no dynamic sampling',
  dapo: 'DAPO: clip-higher (ε_low 0.2, ε_high 0.28), token-mean loss, no KL, dynamic sampling',
  'sft+dapo': 'SFT warm-up on gold tool-call trajectories, then DAPO (what a model that starts from scratch needs)',
};

const GENERATED_KINDS = new Set(['table', 'vbar', 'hbar', 'grouped', 'line', 'geometry', 'search']);

/** The policy's image budget (max_pixels) the template gives a model that is not the micro one. */
const REAL_MODEL_MAX_PIXELS = 1003520;

/**
 * A search scene's size, difficulty and budget: its labels must be illegible in the whole image at
 * the policy's budget and legible in the gold zoom (env/tasks/search/legibility.ts), so the canvas
 * grows with the budget. Micro: 1024×768 at its default 50,176 pixels (the generator's default
 * budget). A real model at 1,003,520: 2048×1536, where difficulty 1's 15 px labels would still be
 * legible (data gen refuses it), so difficulty 3 (13 px).
 */
function searchScene(micro: boolean): Record<string, unknown> {
  return micro ? { difficulty: 1, image_size: '1024x768' } : { difficulty: 3, image_size: '2048x1536', max_pixels: REAL_MODEL_MAX_PIXELS };
}

export function buildRunConfig(choices: TemplateChoices): Record<string, unknown> {
  const micro = choices.model.kind === 'micro';
  const model = choices.model.kind === 'micro' ? 'micro' : choices.model.kind === 'qwen3b' ? 'Qwen/Qwen2.5-VL-3B-Instruct' : choices.model.model;
  const sft = choices.preset === 'sft+dapo';
  const dapo = choices.preset !== 'grpo';

  const generateKind = choices.tasks.kind === 'generate' ? choices.tasks.taskKind : choices.tasks.taskKind !== null && GENERATED_KINDS.has(choices.tasks.taskKind) ? choices.tasks.taskKind : 'table';
  const data: Record<string, unknown> =
    choices.tasks.kind === 'generate'
      ? { train: null, eval: null, generate: { kind: generateKind, n_train: 400, n_eval: 100, difficulty: 1, image_size: micro ? '224x112' : '448x224', ...(generateKind === 'search' ? searchScene(micro) : {}) } }
      : { train: choices.tasks.train, eval: choices.tasks.eval, ...(choices.tasks.eval === null ? { generate: { kind: generateKind, n_train: 400, n_eval: 100, difficulty: 1, ...(generateKind === 'search' ? searchScene(micro) : {}) } } : {}) };

  const policy: Record<string, unknown> = micro
    ? { model, dtype: 'auto', system_prompt: '', micro: { vocab_size: 1024 } }
    : { model, dtype: 'auto', system_prompt: null, min_pixels: 3136, max_pixels: REAL_MODEL_MAX_PIXELS, lora: { enabled: false } };

  // Budgets are steps: what a run trains is decided by steps, never by the clock (docs/DEMO.md,
  // Budgets and time). No wall-clock cap is written, so a slower machine runs the same recipe, only
  // longer; a person who wants a safety net adds rl.max_seconds / sft.max_seconds.
  const rl: Record<string, unknown> = {
    enabled: true,
    steps: micro ? 200 : 100,
    prompts_per_step: micro ? 4 : 32,
    group_size: 8,
    lr: micro ? 0.0002 : 1e-6,
    temperature: 1.0,
    max_new_tokens: micro ? 48 : 1024,
    advantage: 'grpo',
    clip_ratio_low: 0.2,
    clip_ratio_high: dapo ? 0.28 : 0.2,
    loss_agg_mode: dapo ? 'token-mean' : 'seq-mean-token-mean',
    kl_coef: dapo ? 0 : 0.001,
    dynamic_sampling: dapo,
    micro_batch_size: micro ? 32 : 4,
  };

  const evaluation = { n: 100, before_and_after: true, max_new_tokens: micro ? 48 : 1024 };
  const config: Record<string, unknown> = {
    name: choices.name,
    seed: 1,
    output_dir: `runs/${choices.name}`,
    device: choices.device,
    ...(micro ? { threads: 2 } : {}),
    data,
    policy,
    env: { tools: true, max_turns: micro ? 3 : 5, max_tool_calls: micro ? 2 : 4, images: 'path' },
    sft: sft ? { enabled: true, steps: 600, batch_size: micro ? 32 : 8, lr: micro ? 0.001 : 1e-5 } : { enabled: false },
    rl,
    eval: evaluation,
    checkpoint: { every_steps: micro ? 25 : 10, keep: 2 },
    logging: { rollouts_per_step: 32 },
  };
  return config;
}

export function runConfigText(choices: TemplateChoices): string {
  return JSON.stringify(buildRunConfig(choices), null, 2) + '\n';
}

/** A file-system-safe run name: letters, digits, dot, dash, underscore. */
export function safeRunName(text: string): string {
  const cleaned = text.trim().replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return cleaned || 'run';
}

/** Folder names of held-out splits: what a run is evaluated on, never trained on. */
const HELD_OUT_FOLDERS = new Set(['eval', 'test', 'val', 'valid', 'validation', 'heldout', 'held-out', 'held_out']);
const HELD_OUT_SPLITS = new Set(['eval', 'test', 'val', 'valid', 'validation', 'heldout']);

/**
 * Whether a task file is a held-out split (its folder is eval/, test/, val/…, or its generator
 * recorded a held-out split for most of its tasks): New Run Config never offers one as training
 * data (runs/demo/data/eval/tasks.jsonl was offered, and preselected, for `train`).
 */
export function isHeldOutSplit(folderName: string, splits: Readonly<Record<string, number>> = {}): boolean {
  if (HELD_OUT_FOLDERS.has(folderName.toLowerCase())) return true;
  const total = Object.values(splits).reduce((a, b) => a + b, 0);
  const heldOut = Object.entries(splits).filter(([name]) => HELD_OUT_SPLITS.has(name.toLowerCase())).reduce((a, [, n]) => a + n, 0);
  return total > 0 && heldOut * 2 > total;
}
