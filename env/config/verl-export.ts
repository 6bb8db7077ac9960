/**
 * A vistool run config as a veRL 0.9.1 run: `verl.yaml` (a Hydra config over veRL's own
 * ppo_trainer), `agent_loop.yaml` (the vistool_agent loop's entry in veRL's agent-loop registry)
 * and `run.sh` (starts the env server, then veRL's trainer). `vistool config export --to verl`
 * writes them; docs/VERL.md has the mapping, key by key.
 *
 * Pure: a validated config in, three texts and the problems found out. It writes nothing and
 * reads nothing, so the committed example (examples/verl/) can be compared with a fresh export.
 *
 * Paths never name this machine's checkout when the output lies inside it: run.sh finds the
 * repository from its own location, and verl.yaml reads the folders run.sh exports
 * (${oc.env:VISTOOL_VERL_DIR}, ${oc.env:VISTOOL_REPO}, ${oc.env:VISTOOL_RUN_DIR}).
 */
import { relative, resolve } from 'node:path';
import { isInside } from '../core/paths.js';
import { dataGenArguments } from './data-gen-args.js';
import { type ConfigProblem, problem } from './problem.js';
import type { RunConfig } from '../../protocol/run-config.js';
import { DEFAULT_PRESENTATION } from '../presentation/presentation.js';
import { episodeSettingsOf } from '../presentation/run-config.js';
import { float, VerlYaml } from './verl-yaml.js';
import { episodeBudget, OBSERVATION_TEXT_TOKENS, type PromptBudget, promptBudget } from './prompt-token-budget.js';
import { pixelBoundsProblem } from './qwen-image-tokens.js';

export interface VerlExportOptions {
  /** Folder the run config's relative paths are resolved against (the trainer's working folder). */
  baseDir: string;
  /** Absolute folder the files go into. */
  outDir: string;
  /** Absolute root of the vistool repository (bin/vistool.js, verl_bridge/). */
  repoRoot: string;
  /** The run config as the headers name it (its path, relative to the repository when inside). */
  configLabel: string;
  /** The command line that made the files, written into their headers. */
  commandLine: string;
  /** trainer.n_gpus_per_node; null: 1 when device is 'cpu', else DEFAULT_GPUS_PER_NODE. */
  nGpusPerNode: number | null;
  nnodes: number;
  /** data.max_prompt_length chosen by hand (--max-prompt-length); null: the computed budget. Refused when an image at the bounds would overflow it. */
  maxPromptLength?: number | null;
}

export interface VerlFiles {
  'verl.yaml': string;
  'agent_loop.yaml': string;
  'run.sh': string;
}

export interface VerlExport {
  /** null when an error problem stops the export. */
  files: VerlFiles | null;
  /** Errors (the export is refused) and warnings (what veRL will not do as vistool would). */
  problems: ConfigProblem[];
  /** Commands to run before run.sh: the parquet files, and tasks when the config generates them. */
  nextSteps: string[];
}


/** GPUs per node when the config does not say cpu: the repository's GPU recipe (trainer/README.md, "A 4-GPU recipe"). */
export const DEFAULT_GPUS_PER_NODE = 4;

// --- Shell words ---------------------------------------------------------------------------------

/** One shell word, single-quoted unless it is plain. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Text that may stand between double quotes in a shell word. */
function inDoubleQuotes(text: string): string {
  return text.replace(/(["\\$`])/g, '\\$1');
}


// --- The export ----------------------------------------------------------------------------------

/**
 * The three files for a run config that passed `validateRunConfigText` without errors: `config`
 * with its defaults filled in, `raw` as written (the rewards go to the env server as written,
 * and the server fills in its own defaults).
 */
export function exportVerl(configObject: Record<string, unknown>, raw: Record<string, unknown>, options: VerlExportOptions): VerlExport {
  const config = configObject as unknown as RunConfig;
  const problems: ConfigProblem[] = [];
  const report: Report = (severity, pointer, code, message) => problems.push(problem({ code: `verl/${code}`, severity, source: 'semantic', pointer, message }));
  refuseWhatVerlCannotRun(config, report);
  const batches = batchShape(config, options, report);
  warnWhatVerlDoesDifferently(config, raw, options, report);
  const budget = promptBudget(config);
  const promptLength = checkPromptLength(budget, options.maxPromptLength ?? null, config, report);
  checkTokensPerGpu(config, promptLength, episodeBudget(config, budget).responseTokens, report);
  if (problems.some((p) => p.severity === 'error')) return { files: null, problems, nextSteps: [] };

  const plan: ExportPlan = { config, raw, options, micro: config.policy.model === 'micro', ...batches, paths: exportPaths(config, options), numbers: derivedNumbers(config, batches.gpus, budget, promptLength) };
  const nextSteps = nextStepsOf(plan);
  return { files: { 'verl.yaml': verlYaml(plan), 'agent_loop.yaml': agentLoopYaml(plan), 'run.sh': runScript(plan, nextSteps) }, problems, nextSteps };
}

type Report = (severity: 'error' | 'warning', pointer: string, code: string, message: string) => void;

/** How a step's batch splits over the GPUs (errors where veRL would refuse the split). */
interface BatchShape {
  /** trainer.n_gpus_per_node. */
  gpus: number;
  /** Prompts per optimizer step (ppo_mini_batch_size). */
  miniBatch: number;
  /** Rollouts per GPU per forward pass, capped at a GPU's share of a mini-batch. */
  microBatch: number;
  /** Why microBatch is not rl.micro_batch_size, when it is not. */
  microNote: string | undefined;
}

/** Everything the files are written from. */
interface ExportPlan extends BatchShape {
  config: RunConfig;
  raw: Record<string, unknown>;
  options: VerlExportOptions;
  /** policy.model is 'micro' (veRL loads a saved folder). */
  micro: boolean;
  paths: ExportPaths;
  numbers: DerivedNumbers;
}

// --- What veRL cannot run, and what it runs differently ---------------------------------------------

function refuseWhatVerlCannotRun(config: RunConfig, report: Report): void {
  const { rl } = config;
  if (!rl.enabled) report('error', '/rl/enabled', 'rl-off', 'rl.enabled is false: veRL\'s trainer runs the RL stage only, so there is nothing to export. Set rl.enabled to true (run an SFT-only config with `python -m vistool_trainer train`).');
  if (rl.steps === 0) report('error', '/rl/steps', 'no-steps', 'rl.steps is 0: veRL would train nothing. Set rl.steps to the number of RL steps (trainer.total_training_steps).');
  if (rl.mask_truncated_turns) report('error', '/rl/mask_truncated_turns', 'no-turn-masking', "rl.mask_truncated_turns is true: veRL 0.9.1 has no over-turn masking and vistool's agent loop does not add one, so its episodes that hit env.max_turns would train as zero-reward episodes instead. Set it to false for veRL, or train with `python -m vistool_trainer train`.");
  if (config.eval.max_turns !== null && config.eval.max_turns !== config.env.max_turns) {
    report('warning', '/eval/max_turns', 'eval-turns', `eval.max_turns is ${config.eval.max_turns}: veRL validates with the training agent loop's turn limit (env.max_turns, ${config.env.max_turns}); evaluate with more turns through \`vistool eval\` or the embedded trainer.`);
  }
}

function batchShape(config: RunConfig, options: VerlExportOptions, report: Report): BatchShape {
  const { rl } = config;
  const gpus = options.nGpusPerNode ?? (config.device === 'cpu' ? 1 : DEFAULT_GPUS_PER_NODE);
  const world = gpus * options.nnodes;
  const rollouts = rl.prompts_per_step * rl.group_size;
  const miniBatch = rl.ppo_mini_batch_size ?? rl.prompts_per_step;
  if (rollouts % world !== 0) {
    report('error', '/rl/prompts_per_step', 'batch-uneven', `a step's batch (rl.prompts_per_step × rl.group_size = ${rl.prompts_per_step} × ${rl.group_size} = ${rollouts} rollouts) does not split over ${world} GPU(s) (--n-gpus-per-node ${gpus} × --nnodes ${options.nnodes}); veRL refuses that. Change rl.prompts_per_step or the GPU count.`);
  }
  if (miniBatch > rl.prompts_per_step) {
    report('error', '/rl/ppo_mini_batch_size', 'mini-batch-too-big', `rl.ppo_mini_batch_size (${miniBatch}) is larger than rl.prompts_per_step (${rl.prompts_per_step}); veRL refuses a mini-batch larger than the batch. Use at most ${rl.prompts_per_step}, or null for one optimizer step per batch.`);
  }
  const miniRollouts = miniBatch * rl.group_size;
  let microBatch = rl.micro_batch_size;
  let microNote: string | undefined;
  if (miniRollouts % world !== 0) {
    report('error', '/rl/ppo_mini_batch_size', 'mini-batch-uneven', `a mini-batch (rl.ppo_mini_batch_size × rl.group_size = ${miniBatch} × ${rl.group_size} = ${miniRollouts} rollouts) does not split over ${world} GPU(s); veRL refuses that. Use a mini-batch whose rollouts ${world} divides.`);
  } else {
    const perGpu = miniRollouts / world;
    if (microBatch > perGpu) {
      microNote = `rl.micro_batch_size ${microBatch} is more than a GPU's share of a mini-batch (${perGpu}), so it is ${perGpu}`;
      microBatch = perGpu;
    } else if (perGpu % microBatch !== 0) {
      report('error', '/rl/micro_batch_size', 'micro-batch-uneven', `rl.micro_batch_size (${microBatch}) does not divide a GPU's share of a mini-batch (rl.ppo_mini_batch_size × rl.group_size / GPUs = ${miniBatch} × ${rl.group_size} / ${world} = ${perGpu} rollouts); veRL refuses that. Use a divisor of ${perGpu}.`);
    }
  }
  return { gpus, miniBatch, microBatch, microNote };
}

/** Exported, with a warning; and one error, a multi-node run with the env server on loopback. */
function warnWhatVerlDoesDifferently(config: RunConfig, raw: Record<string, unknown>, options: VerlExportOptions, report: Report): void {
  const { rl, env, policy } = config;
  const warn = (pointer: string, code: string, message: string) => report('warning', pointer, code, message);
  if (policy.model === 'micro') warn('/policy/model', 'micro-model', "policy.model is 'micro', which veRL cannot load: actor_rollout_ref.model.path is ${oc.env:VISTOOL_MODEL_PATH}, which stops the run until it is given. Save a micro model folder first (`python -m vistool_verl smoke` writes OUT/model; a vistool run's checkpoints/step-N/policy is one too), then export VISTOOL_MODEL_PATH=FOLDER or pass actor_rollout_ref.model.path=FOLDER to run.sh.");
  if (config.curriculum?.perception_first === true) warn('/curriculum/perception_first', 'no-curriculum', 'curriculum.perception_first is true, but the perception stage is SFT and veRL\'s PPO trainer has none: the exported run starts RL from policy.model. Run the curriculum with `python -m vistool_trainer train` first and point policy.model at its checkpoint.');
  if (config.sft.enabled && config.sft.steps > 0) warn('/sft/enabled', 'no-sft', 'sft.enabled is true, but veRL\'s PPO trainer has no SFT warm-up: the exported run starts RL from policy.model. Run the warm-up with `python -m vistool_trainer train` (rl.enabled false) first and point policy.model at its checkpoints/step-N/policy folder.');
  if (config.device === 'cpu') warn('/device', 'cpu', "device is 'cpu': veRL's vLLM rollouts need a GPU, so this export is for reading and checking; `python -m vistool_verl smoke` runs the vistool agent loop on CPU.");
  if (policy.view.latest_images !== null) {
    warn('/policy/view/latest_images', 'view-one-sequence', "policy.view.latest_images hides earlier images: the veRL agent loop generates every turn from the prompt the env server presents, but the loop hands veRL one sequence per episode, so each earlier turn is trained in the last turn's prompt (the embedded trainer trains each turn in its own; docs/VERL.md).");
  }
  if (env.images === 'inline') warn('/env/images', 'images-path', "env.images is 'inline', but the veRL agent loop always asks the env server for image paths (the run directory is shared).");
  if (rl.dynamic_sampling) warn('/rl/max_num_gen_batches', 'no-gen-batch-cap', `rl.max_num_gen_batches (${rl.max_num_gen_batches}) has no counterpart: veRL 0.9.1's trainer ignores algorithm.filter_groups.max_num_gen_batches and keeps generating until a step's batch holds rl.prompts_per_step groups with a reward spread, with no cap. The export leaves the key out.`);
  if (rl.enabled && rl.fresh_tasks > 0) warn('/rl/fresh_tasks', 'fresh-tasks', `rl.fresh_tasks (${rl.fresh_tasks}) is not applied: veRL draws its prompts from every row of train.parquet. To train on the tasks SFT never saw, convert only the last ${rl.fresh_tasks} lines (tail -n ${rl.fresh_tasks} DIR/tasks.jsonl > DIR/rl-tasks.jsonl, in the same folder, whose images they name) and point run.sh's train.parquet command at that file.`);
  if (rl.max_seconds !== null) warn('/rl/max_seconds', 'no-time-limit', 'rl.max_seconds is ignored: veRL has no wall-clock limit; rl.steps (trainer.total_training_steps) ends the run.');
  if (policy.lora.enabled && policy.lora.dropout !== 0.05) warn('/policy/lora/dropout', 'lora-dropout', "policy.lora.dropout is ignored: veRL's FSDP LoRA has no dropout setting.");
  if (config.distributed.strategy === 'zero3') warn('/distributed/strategy', 'zero3', "distributed.strategy 'zero3' becomes FSDP2 full shard: veRL has no DeepSpeed engine, and FSDP2 full shard splits parameters, gradients and optimizer state as ZeRO-3 does.");
  if (options.nnodes > 1 && env.url === null) {
    report('error', '/env/url', 'multi-node-loopback', `--nnodes ${options.nnodes}: veRL runs agent-loop workers on every node, but run.sh starts the env server on loopback on one node, which the others cannot reach. Start one server every node reaches (\`vistool serve --host ADDRESS --allow-remote --token-file FILE --images-dir DIR\`, FILE and DIR on storage all nodes share) and set env.url and env.token_file; docs/VERL.md, "More than one node".`);
  }
  if (env.url !== null && raw.rewards !== undefined) warn('/rewards', 'rewards-remote', 'rewards are not sent anywhere: env.url points at a server someone else started, and that server scores with its own --reward-config.');
}

/**
 * data.max_prompt_length: the computed budget, or the one given by hand when an image at the
 * bounds still fits it. veRL raises on an opening prompt past it ("Multimodal prompt produced N
 * tokens"), so a budget that a large chart overflows is refused here, not found mid-run.
 */
function checkPromptLength(budget: PromptBudget, chosen: number | null, config: RunConfig, report: Report): number {
  const pixelsPointer = config.policy.model === 'micro' ? '/policy/micro/max_pixels' : '/policy/max_pixels';
  const boundsProblem = pixelBoundsProblem(budget.bounds);
  if (boundsProblem !== null) report('error', pixelsPointer, 'pixel-bounds', `${boundsProblem} (${budget.boundsFrom}); data.mm_processor_kwargs must hold bounds Qwen2.5-VL's processor accepts.`);
  if (chosen === null) return budget.promptTokens;
  if (chosen < budget.promptTokens) {
    report('error', pixelsPointer, 'prompt-overflow', `data.max_prompt_length ${chosen} (--max-prompt-length) is too small: the opening prompt can take ${budget.promptTokens} tokens, ${budget.textTokens} of text (${budget.textFrom}) and ${budget.imageTokens} for an image at max_pixels ${budget.bounds.maxPixels} (${budget.boundsFrom}). veRL stops on such a prompt. Give --max-prompt-length ${budget.promptTokens} or more, or lower policy.max_pixels to about ${Math.max(784, (chosen - budget.textTokens) * 784)} pixels.`);
  }
  return chosen;
}

/**
 * With rl.use_dynamic_bsz, veRL packs micro-batches up to ppo_max_token_len_per_gpu tokens and
 * asserts that one sequence fits (verl/utils/seqlen_balancing.py: "max_token_len must be greater
 * than the sequence length"); a padded sequence is data.max_prompt_length + data.max_response_length.
 */
function checkTokensPerGpu(config: RunConfig, promptLength: number, responseLength: number, report: Report): void {
  const { rl } = config;
  const sequence = promptLength + responseLength;
  if (!rl.use_dynamic_bsz || rl.ppo_max_token_len_per_gpu >= sequence) return;
  report('error', '/rl/ppo_max_token_len_per_gpu', 'tokens-per-gpu', `rl.ppo_max_token_len_per_gpu (${rl.ppo_max_token_len_per_gpu}) is less than one sequence at the image bounds: data.max_prompt_length ${promptLength} + data.max_response_length ${responseLength} = ${sequence} tokens, and veRL's dynamic batching stops on a sequence longer than its token limit (seqlen_balancing.py). Set rl.ppo_max_token_len_per_gpu to ${sequence} or more, or lower policy.max_pixels (each 784 pixels is one image token), rl.max_new_tokens or env.max_turns.`);
}

// --- Paths and derived numbers -------------------------------------------------------------------

interface SplitRoot {
  key: 'data.train' | 'data.eval';
  /** The tasks.jsonl the run config names, or null when the trainer generates the split. */
  file: string | null;
  parquet: 'train.parquet' | 'val.parquet';
  generated: string;
  genSplit: 'train' | 'test';
  /** The split's task folder for run.sh (to stand between double quotes). */
  root: string;
  /** The same folder for commands run from the repository root. */
  shownRoot: string;
}

interface ExportPaths {
  inRepo(absolute: string): boolean;
  /** A path for run.sh, to stand between double quotes: under $REPO when it is in the repository, else absolute. */
  shellPath(absolute: string): string;
  fromBase(path: string): string;
  /** A path for commands run from the repository root: relative when inside it. */
  shown(absolute: string): string;
  outputDir: string;
  roots: SplitRoot[];
  /** The task folders the env server serves (--root), each once. */
  uniqueRoots: string[];
}

function exportPaths(config: RunConfig, options: VerlExportOptions): ExportPaths {
  const { data } = config;
  const inRepo = (absolute: string) => isInside(options.repoRoot, absolute);
  const shellPath = (absolute: string) => (inRepo(absolute) ? `$REPO${relative(options.repoRoot, absolute) ? '/' + inDoubleQuotes(relative(options.repoRoot, absolute)) : ''}` : inDoubleQuotes(absolute));
  const fromBase = (path: string) => resolve(options.baseDir, path);
  const shown = (absolute: string) => (inRepo(absolute) ? relative(options.repoRoot, absolute) || '.' : absolute);
  const outputDir = fromBase(config.output_dir);
  const splits = [
    { key: 'data.train' as const, file: data.train, parquet: 'train.parquet' as const, generated: 'data/train', genSplit: 'train' as const },
    { key: 'data.eval' as const, file: data.eval, parquet: 'val.parquet' as const, generated: 'data/eval', genSplit: 'test' as const },
  ];
  // Each split's task folder: the tasks.jsonl's folder (its images are relative to it), or the
  // folder the trainer generates tasks into (output_dir/data/train, output_dir/data/eval).
  const roots = splits.map((s) => {
    const folder = s.file === null ? resolve(outputDir, s.generated) : resolve(fromBase(s.file), '..');
    return { ...s, root: s.file === null ? `$RUN_DIR/${s.generated}` : shellPath(folder), shownRoot: shown(folder) };
  });
  return { inRepo, shellPath, fromBase, shown, outputDir, roots, uniqueRoots: [...new Set(roots.map((r) => r.root))] };
}

interface DerivedNumbers {
  budget: PromptBudget;
  imageTokens: number;
  promptLength: number;
  /** Observation turns: every turn but the last. */
  observations: number;
  /** Observations that carry an edited image. */
  imageObservations: number;
  responseLength: number;
  dtype: string;
  saveFreq: number;
  testFreq: number;
  epochs: number;
  rolloutTp: number;
}

function derivedNumbers(config: RunConfig, gpus: number, budget: PromptBudget, promptLength: number): DerivedNumbers {
  const { rl, policy } = config;
  const imageTokens = budget.imageTokens;
  const { observations, imageObservations, responseTokens } = episodeBudget(config, budget);
  return {
    budget,
    imageTokens,
    promptLength,
    observations,
    imageObservations,
    responseLength: responseTokens,
    dtype: policy.dtype === 'auto' ? (config.device === 'cpu' ? 'float32' : 'bfloat16') : policy.dtype,
    saveFreq: config.checkpoint.every_steps > 0 ? config.checkpoint.every_steps : rl.steps,
    testFreq: config.eval.every_steps > 0 ? config.eval.every_steps : config.eval.before_and_after ? rl.steps : -1,
    epochs: rl.steps * (rl.dynamic_sampling ? rl.max_num_gen_batches : 1),
    rolloutTp: gpus % 2 === 0 ? 2 : 1,
  };
}

/** The run's presentation block as it is: the env server chooses the system turn by use_tools and applies the view. */
function presentationOf(config: RunConfig) {
  return episodeSettingsOf(config as unknown as Record<string, unknown>).presentation;
}

// --- verl.yaml -----------------------------------------------------------------------------------

function verlYaml(plan: ExportPlan): string {
  const { options } = plan;
  const header = [
    `veRL 0.9.1 config for the vistool run config ${options.configLabel}.`,
    `Generated by \`${options.commandLine}\`.`,
    "Change the run config and export again; one-off changes go on run.sh's command line as Hydra",
    'overrides (./run.sh trainer.n_gpus_per_node=8). "vistool: KEY" names the run-config key a value',
    'comes from. The ${oc.env:...} folders are exported by run.sh: VISTOOL_VERL_DIR (this folder),',
    'VISTOOL_REPO (the vistool checkout), VISTOOL_RUN_DIR (the run directory).',
    'docs/VERL.md maps every run-config key.',
  ];
  const y = new VerlYaml(header, { hydra: { searchpath: ['pkg://verl/trainer/config'] }, defaults: ['ppo_trainer', '_self_'] });
  for (const section of [dataSection, modelSection, actorSection, refSection, rolloutSection, algorithmSection, rewardSection, trainerSection, samplerSection]) section(y, plan);
  return y.toString();
}

function dataSection(y: VerlYaml, { config, micro, numbers, options }: ExportPlan): void {
  const { rl, env, policy, data } = config;
  const { imageTokens, observations, imageObservations, budget } = numbers;
  y.note('data', ['train.parquet and val.parquet are not written by this export: a separate converter makes them from each', 'tasks.jsonl (`python3 -m vistool_verl data convert --to verl`, verl_bridge/); the commands are at the top of run.sh.']);
  y.set('data.train_files', '${oc.env:VISTOOL_VERL_DIR}/train.parquet', `data.train (${data.train ?? 'generated: RUN_DIR/data/train'}), converted`);
  y.set('data.val_files', '${oc.env:VISTOOL_VERL_DIR}/val.parquet', `data.eval (${data.eval ?? 'generated: RUN_DIR/data/eval'}), converted`);
  y.set('data.train_batch_size', rl.prompts_per_step, 'rl.prompts_per_step');
  if (options.maxPromptLength != null) {
    y.set('data.max_prompt_length', numbers.promptLength, `--max-prompt-length (the opening prompt needs at most ${budget.promptTokens}: ${budget.textTokens} text + ${imageTokens} image tokens)`);
  } else {
    y.set('data.max_prompt_length', numbers.promptLength, `policy.${micro ? 'micro.' : ''}max_pixels (${budget.textTokens} text tokens + ${imageTokens} image tokens)`, [
      `The opening prompt's text: ${budget.textFrom}; its image: at most ${imageTokens} tokens at max_pixels ${budget.bounds.maxPixels} (⌊max_pixels / 784⌋).`,
    ]);
  }
  y.set('data.max_response_length', numbers.responseLength, 'env.max_turns × rl.max_new_tokens + observations', [
    `veRL budgets a whole multi-turn response: ${env.max_turns} turns × ${rl.max_new_tokens} tokens, ${observations} observation(s) × ${OBSERVATION_TEXT_TOKENS} text tokens,`,
    `and ${imageObservations} edited image(s) × ${imageTokens} tokens (env.max_tool_calls, policy.${micro ? 'micro.' : ''}max_pixels).`,
  ]);
  y.set('data.val_max_samples', config.eval.n, 'eval.n');
  y.set('data.seed', config.seed, 'seed');
  y.fixed('data.image_key', 'images', 'the converter writes the PNG bytes under images');
  y.fixed('data.return_raw_chat', true, 'the agent loop renders the chat itself');
  // Both bounds, always: transformers 5 ignores one without the other, and without them the
  // processor's own (up to 16,384 tokens an image) would meet a budget computed for these.
  const boundsNote = (key: 'min_pixels' | 'max_pixels') => (micro ? `policy.micro.${key}` : policy[key] === null ? `policy.${key} (null: Qwen2.5-VL's processor default)` : `policy.${key}`);
  y.set('data.mm_processor_kwargs.min_pixels', budget.bounds.minPixels, boundsNote('min_pixels'));
  y.set('data.mm_processor_kwargs.max_pixels', budget.bounds.maxPixels, boundsNote('max_pixels'));
}

function modelSection(y: VerlYaml, { config: { policy }, micro }: ExportPlan): void {
  if (micro) {
    // Not `???`: a mandatory value merged over ppo_trainer's default does not replace it.
    y.set('actor_rollout_ref.model.path', '${oc.env:VISTOOL_MODEL_PATH}', "policy.model ('micro': veRL loads a saved folder; set VISTOOL_MODEL_PATH or pass actor_rollout_ref.model.path=FOLDER)");
  } else {
    y.set('actor_rollout_ref.model.path', policy.model, 'policy.model');
  }
  y.set('actor_rollout_ref.model.lora_rank', policy.lora.enabled ? policy.lora.r : 0, policy.lora.enabled ? 'policy.lora.r' : 'policy.lora.enabled (false: full fine-tune)');
  if (policy.lora.enabled) {
    y.set('actor_rollout_ref.model.lora_alpha', policy.lora.alpha, 'policy.lora.alpha');
    y.set('actor_rollout_ref.model.target_modules', policy.lora.target_modules, 'policy.lora.target_modules');
  }
  const checkpointing = policy.gradient_checkpointing ?? !micro;
  y.set('actor_rollout_ref.model.enable_gradient_checkpointing', checkpointing, `policy.gradient_checkpointing${policy.gradient_checkpointing === null ? ` (null: ${micro ? 'off for micro' : 'on'})` : ''}`);
}

const STRATEGY_WHY: Record<RunConfig['distributed']['strategy'], string> = {
  fsdp: "distributed.strategy 'fsdp' (FSDP2 full shard)",
  zero3: "distributed.strategy 'zero3' (no DeepSpeed in veRL: FSDP2 full shard is the same split)",
  ddp: "distributed.strategy 'ddp' (FSDP2 with fsdp_size 1: a whole copy per GPU)",
};

function actorSection(y: VerlYaml, { config, miniBatch, microBatch, microNote, numbers: { dtype } }: ExportPlan): void {
  const { rl, policy } = config;
  const strategy = config.distributed.strategy;
  y.set('actor_rollout_ref.actor.strategy', 'fsdp2', STRATEGY_WHY[strategy]);
  y.set('actor_rollout_ref.actor.optim.lr', float(rl.lr), 'rl.lr');
  y.fixed('actor_rollout_ref.actor.optim.weight_decay', float(0.0), "vistool's RL AdamW has no weight decay (veRL's default is 0.01)");
  y.set('actor_rollout_ref.actor.optim.clip_grad', float(rl.max_grad_norm), 'rl.max_grad_norm');
  y.set('actor_rollout_ref.actor.optim.betas', rl.betas.map(float), 'rl.betas');
  y.set('actor_rollout_ref.actor.ppo_mini_batch_size', miniBatch, rl.ppo_mini_batch_size === null ? 'rl.ppo_mini_batch_size (null: the whole batch, rl.prompts_per_step)' : 'rl.ppo_mini_batch_size');
  y.set('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', microBatch, microNote ?? 'rl.micro_batch_size');
  y.set('actor_rollout_ref.actor.use_dynamic_bsz', rl.use_dynamic_bsz, 'rl.use_dynamic_bsz');
  y.set('actor_rollout_ref.actor.ppo_max_token_len_per_gpu', rl.ppo_max_token_len_per_gpu, 'rl.ppo_max_token_len_per_gpu', ["veRL counts a micro-batch's tokens without padding; vistool counts rows × the longest row."]);
  y.set('actor_rollout_ref.actor.ppo_epochs', rl.ppo_epochs, 'rl.ppo_epochs');
  y.set('actor_rollout_ref.actor.clip_ratio_low', float(rl.clip_ratio_low), 'rl.clip_ratio_low');
  y.set('actor_rollout_ref.actor.clip_ratio_high', float(rl.clip_ratio_high), 'rl.clip_ratio_high');
  y.set('actor_rollout_ref.actor.clip_ratio_c', float(rl.clip_ratio_c), 'rl.clip_ratio_c');
  y.set('actor_rollout_ref.actor.loss_agg_mode', rl.loss_agg_mode, 'rl.loss_agg_mode');
  // Dr. GRPO's constant divisor (seq-mean-token-sum-norm); null leaves veRL's own, its response length.
  if (rl.loss_scale_factor !== null) y.set('actor_rollout_ref.actor.loss_scale_factor', rl.loss_scale_factor, 'rl.loss_scale_factor');
  y.set('actor_rollout_ref.actor.use_kl_loss', rl.kl_coef > 0, 'rl.kl_coef (> 0: KL loss against the start policy)');
  y.set('actor_rollout_ref.actor.kl_loss_coef', float(rl.kl_coef), 'rl.kl_coef');
  y.set('actor_rollout_ref.actor.kl_loss_type', rl.kl_estimator, 'rl.kl_estimator');
  y.set('actor_rollout_ref.actor.fsdp_config.dtype', dtype, `policy.dtype${policy.dtype === 'auto' ? ` (auto, device ${config.device})` : ''}`, ['veRL keeps fp32 master weights (fsdp_config.model_dtype). Its FSDP engine computes in mixed_precision.param_dtype', '(default bf16), not in dtype: both are set.']);
  y.set('actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype', dtype, 'policy.dtype');
  if (strategy === 'fsdp') y.set('actor_rollout_ref.actor.fsdp_config.reshard_after_forward', config.distributed.reshard_after_forward, 'distributed.reshard_after_forward');
  if (strategy === 'ddp') y.set('actor_rollout_ref.actor.fsdp_config.fsdp_size', 1, "distributed.strategy 'ddp' (shard groups of one GPU: replicated)");
  if (strategy !== 'ddp') y.set('actor_rollout_ref.actor.fsdp_config.offload_policy', config.distributed.cpu_offload, 'distributed.cpu_offload (FSDP2 CPUOffloadPolicy: parameters, gradients and optimizer state in CPU memory)');
}

function refSection(y: VerlYaml, { config: { rl }, microBatch, numbers: { dtype } }: ExportPlan): void {
  y.note('actor_rollout_ref.ref', ['The reference policy exists only when actor.use_kl_loss is true.']);
  y.set('actor_rollout_ref.ref.strategy', 'fsdp2', 'distributed.strategy');
  y.set('actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', microBatch, 'rl.micro_batch_size');
  y.set('actor_rollout_ref.ref.log_prob_use_dynamic_bsz', rl.use_dynamic_bsz, 'rl.use_dynamic_bsz');
  y.set('actor_rollout_ref.ref.log_prob_max_token_len_per_gpu', rl.ppo_max_token_len_per_gpu, 'rl.ppo_max_token_len_per_gpu');
  y.set('actor_rollout_ref.ref.fsdp_config.dtype', dtype, 'policy.dtype');
  y.set('actor_rollout_ref.ref.fsdp_config.mixed_precision.param_dtype', dtype, 'policy.dtype');
}

function rolloutSection(y: VerlYaml, { config, microBatch, numbers: { dtype, imageObservations, rolloutTp } }: ExportPlan): void {
  const { rl, env } = config;
  y.fixed('actor_rollout_ref.rollout.name', 'vllm');
  y.fixed('actor_rollout_ref.rollout.mode', 'async', 'the agent loop needs the async server');
  y.set('actor_rollout_ref.rollout.n', rl.group_size, 'rl.group_size');
  y.set('actor_rollout_ref.rollout.temperature', float(rl.temperature), 'rl.temperature');
  y.set('actor_rollout_ref.rollout.seed', config.seed, 'seed');
  y.set('actor_rollout_ref.rollout.dtype', dtype, 'policy.dtype');
  y.set('actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', microBatch, 'rl.micro_batch_size');
  y.set('actor_rollout_ref.rollout.log_prob_use_dynamic_bsz', rl.use_dynamic_bsz, 'rl.use_dynamic_bsz');
  y.set('actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu', rl.ppo_max_token_len_per_gpu, 'rl.ppo_max_token_len_per_gpu');
  y.fixed('actor_rollout_ref.rollout.tensor_model_parallel_size', rolloutTp, `not in the run config: ${rolloutTp === 2 ? "the seed paper's TP2" : 'one GPU per vLLM engine'}`);
  y.set('actor_rollout_ref.rollout.limit_images', 1 + imageObservations, 'env.max_tool_calls (the task image and each edited one; vLLM limit_mm_per_prompt)');
  y.fixed('actor_rollout_ref.rollout.multi_turn.enable', true);
  y.set('actor_rollout_ref.rollout.multi_turn.max_assistant_turns', env.max_turns, 'env.max_turns');
  y.fixed('actor_rollout_ref.rollout.agent.default_agent_loop', 'vistool_agent', 'verl_bridge/vistool_verl/agent_loop.py');
  y.fixed('actor_rollout_ref.rollout.agent.agent_loop_config_path', '${oc.env:VISTOOL_VERL_DIR}/agent_loop.yaml');
}

function algorithmSection(y: VerlYaml, { config: { rl } }: ExportPlan): void {
  y.fixed('algorithm.adv_estimator', 'grpo', `rl.advantage '${rl.advantage}'`);
  y.set('algorithm.norm_adv_by_std_in_grpo', rl.advantage === 'grpo', `rl.advantage ('dr_grpo': no division by the group std)`);
  y.fixed('algorithm.use_kl_in_reward', false, 'vistool puts KL in the loss (rl.kl_coef), never in the reward');
  y.set('algorithm.filter_groups.enable', rl.dynamic_sampling, 'rl.dynamic_sampling (DAPO dynamic sampling)');
  if (rl.dynamic_sampling) {
    y.set('algorithm.filter_groups.metric', rl.dynamic_sampling_metric === 'accuracy' ? 'acc' : 'reward', `rl.dynamic_sampling_metric '${rl.dynamic_sampling_metric}'${rl.dynamic_sampling_metric === 'accuracy' ? ' (the reward function returns acc)' : " (veRL's own name for the episode reward it holds, rm_scores)"}`);
  }
  // veRL's decoupled rollout correction is vistool's rl.rollout_is; it needs the engine's log-probs back.
  if (rl.rollout_is !== 'off') {
    y.set('algorithm.rollout_correction.rollout_is', rl.rollout_is, 'rl.rollout_is');
    y.set('algorithm.rollout_correction.rollout_is_threshold', float(rl.rollout_is_threshold), 'rl.rollout_is_threshold');
    y.set('actor_rollout_ref.rollout.calculate_log_probs', true, "rl.rollout_is (the weights need vLLM's log-probs of the sampled tokens)");
  }
}

function rewardSection(y: VerlYaml): void {
  y.note('reward', ["The env server scores each episode with the run config's rewards (run.sh passes --reward-config);", 'this function hands that score to veRL.']);
  y.fixed('reward.custom_reward_function.path', '${oc.env:VISTOOL_REPO}/verl_bridge/vistool_verl/reward.py');
  y.fixed('reward.custom_reward_function.name', 'compute_score');
}

function trainerSection(y: VerlYaml, { config, options, gpus, numbers: { epochs, saveFreq, testFreq } }: ExportPlan): void {
  const { rl } = config;
  const reportTo = config.logging.report_to;
  if (reportTo.includes('wandb')) y.set('trainer.project_name', config.logging.wandb_project, 'logging.wandb_project');
  else y.fixed('trainer.project_name', 'vistool');
  y.set('trainer.experiment_name', config.name, 'name');
  const fileLogger = "file: veRL's metrics, one line per step, into the run's metrics.jsonl (run.sh sets VERL_FILE_LOGGER_PATH)";
  if (reportTo.length > 0) y.set('trainer.logger', ['console', 'file', ...reportTo], `logging.report_to, after console and ${fileLogger}`);
  else y.fixed('trainer.logger', ['console', 'file'], fileLogger);
  y.set('trainer.device', config.device === 'cpu' ? 'cpu' : 'cuda', config.device === 'auto' ? "device ('auto': veRL needs CUDA)" : 'device');
  if (options.nGpusPerNode === null && config.device === 'cpu') y.set('trainer.n_gpus_per_node', gpus, "device 'cpu'");
  else y.fixed('trainer.n_gpus_per_node', gpus, `not in the run config: ${options.nGpusPerNode !== null ? '--n-gpus-per-node' : `the default ${DEFAULT_GPUS_PER_NODE} (--n-gpus-per-node N changes it)`}`);
  y.fixed('trainer.nnodes', options.nnodes, 'not in the run config: --nnodes');
  y.set('trainer.total_training_steps', rl.steps, 'rl.steps');
  y.set('trainer.total_epochs', epochs, `rl.steps${rl.dynamic_sampling ? ' × rl.max_num_gen_batches' : ''} (enough passes that rl.steps ends the run)`);
  y.set('trainer.save_freq', saveFreq, config.checkpoint.every_steps > 0 ? 'checkpoint.every_steps' : 'checkpoint.every_steps (0: only at the end)');
  y.set('trainer.max_actor_ckpt_to_keep', config.checkpoint.keep, 'checkpoint.keep');
  y.set('trainer.default_local_dir', '${oc.env:VISTOOL_RUN_DIR}/checkpoints', 'output_dir');
  y.set('trainer.val_before_train', config.eval.before_and_after && config.eval.before, 'eval.before_and_after, eval.before');
  y.set('trainer.test_freq', testFreq, config.eval.every_steps > 0 ? 'eval.every_steps' : 'eval.before_and_after (once, at the end)');
  if (config.logging.rollouts_per_step > 0) y.set('trainer.rollout_data_dir', '${oc.env:VISTOOL_RUN_DIR}/verl-rollouts', 'logging.rollouts_per_step (> 0; veRL writes every rollout of a step)');
}

function samplerSection(y: VerlYaml, { config: { rl } }: ExportPlan): void {
  const drop = rl.failed_groups === 'drop';
  y.note('trainer.v1.sampler', [
    "vistool's sampler (verl_bridge/vistool_verl/failed_groups.py): what a GRPO group with a failed episode (the env server",
    "could not take a turn or score it) does. drop: the group is evicted whole and a fresh prompt drawn in its place;",
    "keep: veRL 0.9.1's own, the survivors are trained over a smaller group (docs/VERL.md).",
  ]);
  y.fixed('trainer.v1.sampler.custom_sampler.path', 'pkg://vistool_verl.failed_groups');
  y.fixed('trainer.v1.sampler.custom_sampler.name', 'VistoolReplayBuffer');
  // The sampler sets its own refill switch from failed_groups; veRL's trainer reads this one to fetch single prompts, so they must agree.
  y.set('trainer.v1.sampler.sync_refill_failed_groups', drop,
    `rl.failed_groups ('${rl.failed_groups}'${drop ? ': veRL then fetches single prompts, which an exact refill needs' : ': no refill'})`);
  y.set('trainer.v1.sampler.sampler_kwargs.failed_groups', rl.failed_groups, 'rl.failed_groups');
  y.set('trainer.v1.sampler.sampler_kwargs.group_size', rl.group_size, 'rl.group_size (veRL does not tell a sampler rollout.n)');
  y.set('trainer.v1.sampler.sampler_kwargs.train_batch_size', rl.prompts_per_step, 'rl.prompts_per_step');
  if (rl.dynamic_sampling) {
    y.set('trainer.v1.sampler.sampler_kwargs.filter_groups_metric', rl.dynamic_sampling_metric === 'accuracy' ? 'acc' : 'reward',
      'rl.dynamic_sampling_metric (veRL gives a custom sampler no algorithm.filter_groups)');
  }
}

// --- agent_loop.yaml -----------------------------------------------------------------------------

function agentLoopYaml({ config, options }: ExportPlan): string {
  const { env, rl } = config;
  const presentation = presentationOf(config);
  return [
    '# The vistool_agent loop for veRL\'s agent-loop registry (verl.yaml points at this file with',
    '# actor_rollout_ref.rollout.agent.agent_loop_config_path).',
    `# Generated by \`${options.commandLine}\`.`,
    '# The env server\'s URL and token file and the run directory reach the loop through',
    '# VISTOOL_ENV_URL, VISTOOL_ENV_TOKEN_FILE and VISTOOL_RUN_DIR, which run.sh exports. In the run',
    '# directory the loop writes each group\'s rollout records to rollouts/step-N.jsonl as it ends',
    '# (validation rollouts to rollouts/val-step-N.jsonl).',
    '# The tools switch is use_tools: veRL passes its own `tools` argument to every agent loop.',
    '- name: vistool_agent',
    '  _target_: vistool_verl.agent_loop.VistoolAgentLoop',
    `  max_turns: ${env.max_turns}  # vistool: env.max_turns`,
    `  max_tool_calls: ${env.max_tool_calls}  # vistool: env.max_tool_calls`,
    `  use_tools: ${env.tools}  # vistool: env.tools`,
    `  max_new_tokens: ${rl.max_new_tokens}  # vistool: rl.max_new_tokens (each turn's cap; data.max_response_length caps the episode)`,
    `  train_turns: ${rl.train_turns}  # vistool: rl.train_turns (final: only the turn that ends the episode is trained)`,
    '  # What the policy reads; the env server applies it (the system turn for use_tools, the image view).',
    '  presentation:',
    `    system_prompt: ${JSON.stringify(presentation.system_prompt)}  # vistool: policy.system_prompt`,
    `    view: ${JSON.stringify(presentation.view)}  # vistool: policy.view`,
    '',
  ].join('\n');
}

// --- run.sh --------------------------------------------------------------------------------------

/** What to run once before run.sh (from the repository root): tasks, when the config generates them, and the parquet rows. */
function nextStepsOf({ config, options, paths }: ExportPlan): string[] {
  const { env, data } = config;
  const presentation = presentationOf(config);
  const presentationIsDefault = JSON.stringify(presentation) === JSON.stringify(DEFAULT_PRESENTATION);
  const convertFlags = [...(env.tools ? [] : ['--no-tools']), ...(presentationIsDefault ? [] : ['--presentation', JSON.stringify(presentation)])].map(shellWord).join(' ');
  // The val rows say they are (extra_info.split): veRL does not tell the agent loop when it validates, and the loop files those rollouts apart.
  const convertCommand = (root: string, parquet: string) =>
    `python3 -m vistool_verl data convert --to verl ${shellWord(`${root}/tasks.jsonl`)} --out ${shellWord(`${paths.shown(options.outDir)}/${parquet}`)}${parquet === 'val.parquet' ? ' --split val' : ''}${convertFlags ? ' ' + convertFlags : ''}`;
  const generateCommand = (split: SplitRoot) => {
    const words = ['data', 'gen', ...dataGenArguments(data.generate as unknown as Record<string, unknown>, Number(config.seed), split.genSplit)];
    return `node bin/vistool.js ${words.map(shellWord).join(' ')} --out ${shellWord(split.shownRoot)}`;
  };
  const nextSteps: string[] = [];
  for (const r of paths.roots) {
    if (r.file === null) nextSteps.push(generateCommand(r));
    nextSteps.push(convertCommand(r.shownRoot, r.parquet));
  }
  return nextSteps;
}

function runScript(plan: ExportPlan, nextSteps: readonly string[]): string {
  const { config: { env }, options, paths } = plan;
  const repoLine = paths.inRepo(options.outDir)
    ? `REPO="$(cd "$DIR/${inDoubleQuotes(relative(options.outDir, options.repoRoot) || '.')}" && pwd)"`
    : `REPO="${inDoubleQuotes(options.repoRoot)}"`;
  const checks = [
    ...paths.roots.map((r) => `[ -f "${r.root}/tasks.jsonl" ] || fail "${r.root}/tasks.jsonl is missing (${r.key}); see 'Before the first run' in $0"`),
    ...paths.roots.map((r) => `[ -f "$DIR/${r.parquet}" ] || fail "$DIR/${r.parquet} is missing; see 'Before the first run' in $0"`),
  ];
  return [
    '#!/usr/bin/env bash',
    `# veRL run of the vistool run config ${options.configLabel}: starts the vistool env server, then`,
    "# veRL's PPO trainer with verl.yaml from this folder. Arguments are Hydra overrides for veRL, e.g.",
    '#   ./run.sh trainer.n_gpus_per_node=8 actor_rollout_ref.rollout.gpu_memory_utilization=0.6',
    `# Generated by \`${options.commandLine}\`.`,
    "# Environment: RUN_DIR (the run directory; default: the run config's output_dir), PYTHON (a python",
    '# with veRL 0.9.1 and vistool_verl, e.g. `make verl-env`; default python3), NODE (default: env.node).',
    '#',
    '# Before the first run, from the repository root (the parquet rows come from a separate converter,',
    '# verl_bridge/vistool_verl/parquet_rows.py):',
    ...nextSteps.map((step) => `#   ${step}`),
    'set -euo pipefail',
    'fail() { echo "run.sh: $*" >&2; exit 1; }',
    'DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"',
    repoLine,
    `RUN_DIR="\${RUN_DIR:-${paths.shellPath(paths.outputDir)}}"  # vistool: output_dir`,
    'mkdir -p "$RUN_DIR"',
    'RUN_DIR="$(cd "$RUN_DIR" && pwd)"',
    'PYTHON="${PYTHON:-python3}"',
    `NODE="\${NODE:-${inDoubleQuotes(env.node)}}"  # vistool: env.node`,
    '',
    '# The tasks (the env server reads their images) and their parquet rows (veRL reads those).',
    ...checks,
    '',
    ...(env.url === null ? localServerLines(plan) : remoteServerLines(plan)),
    'export VISTOOL_RUN_DIR="$RUN_DIR" VISTOOL_REPO="$REPO" VISTOOL_VERL_DIR="$DIR"',
    "# The bridge and the trainer package from this checkout (or the installed extension's folder), so PYTHON needs",
    "# veRL's dependencies only; Ray's workers inherit the path.",
    'export PYTHONPATH="$REPO/verl_bridge:$REPO/trainer${PYTHONPATH:+:$PYTHONPATH}"',
    "# veRL's file logger (trainer.logger 'file') writes the run's metrics.jsonl, which the dashboard tails;",
    '# the agent loop writes rollouts/step-N.jsonl there (VISTOOL_RUN_DIR). veRL opens the file anew, so a',
    '# second start in the same RUN_DIR replaces the metrics of the first.',
    'export VERL_FILE_LOGGER_PATH="$RUN_DIR/metrics.jsonl"',
    '',
    "# Hydra's own log folder goes into the run directory, not the current folder.",
    '"$PYTHON" -m verl.trainer.main_ppo --config-path "$DIR" --config-name verl hydra.run.dir="$RUN_DIR/logs/hydra" "$@"',
    '',
  ].join('\n');
}

/** run.sh's env server: its own, on loopback, scoring with the run config's rewards. */
function localServerLines({ raw, paths }: ExportPlan): string[] {
  const rewardJson = JSON.stringify(raw.rewards ?? {}, null, 2);
  return [
    "# The env server: loopback, a fresh token, the episode images in the run directory, the tasks' folders as roots.",
    'mkdir -p "$RUN_DIR/images" "$RUN_DIR/logs"',
    "cat > \"$RUN_DIR/logs/reward-config.json\" <<'JSON'  # vistool: rewards",
    rewardJson,
    'JSON',
    'SERVER_OUT="$RUN_DIR/logs/env-server.out"',
    ': > "$SERVER_OUT"',
    'MALLOC_MMAP_THRESHOLD_=65536 "$NODE" "$REPO/bin/vistool.js" serve --port 0 --token-file "$RUN_DIR/env-token" --images-dir "$RUN_DIR/images" \\',
    `  ${paths.uniqueRoots.map((root) => `--root "${root}"`).join(' ')} --reward-config "$RUN_DIR/logs/reward-config.json" --quiet \\`,
    '  > "$SERVER_OUT" 2> "$RUN_DIR/logs/env-server.log" &',
    'SERVER_PID=$!',
    'trap \'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true\' EXIT',
    '# Its first stdout line is {"event":"listening","url":...}.',
    'for _ in $(seq 1 600); do',
    '  [ "$(wc -l < "$SERVER_OUT")" -ge 1 ] && break',
    '  kill -0 "$SERVER_PID" 2>/dev/null || fail "the env server stopped before listening; see $RUN_DIR/logs/env-server.log"',
    '  sleep 0.1',
    'done',
    'LISTENING="$(head -n 1 "$SERVER_OUT")"',
    'VISTOOL_ENV_URL="$(printf \'%s\\n\' "$LISTENING" | sed -n \'s/.*"url":"\\([^"]*\\)".*/\\1/p\')"',
    '[ -n "$VISTOOL_ENV_URL" ] || fail "no URL in the env server\'s first line (${LISTENING:-none after 60 s}); see $RUN_DIR/logs/env-server.log"',
    'export VISTOOL_ENV_URL',
    'export VISTOOL_ENV_TOKEN_FILE="$RUN_DIR/env-token"',
  ];
}

/** run.sh's env server when env.url names one someone else started. */
function remoteServerLines({ config: { env }, paths }: ExportPlan): string[] {
  const url = env.url as string;
  return [
    '# The env server someone else started (env.url); it scores with its own --reward-config.',
    `export VISTOOL_ENV_URL=${shellWord(url)}  # vistool: env.url`,
    ...(env.token_file !== null
      ? [`export VISTOOL_ENV_TOKEN_FILE="${paths.shellPath(paths.fromBase(env.token_file))}"  # vistool: env.token_file`]
      : [
          '[ -n "${VISTOOL_TOKEN:-}" ] || fail "env.url is set without env.token_file: export VISTOOL_TOKEN (the server\'s token)"',
          '(umask 077 && printf \'%s\\n\' "$VISTOOL_TOKEN" > "$RUN_DIR/env-token")',
          'export VISTOOL_ENV_TOKEN_FILE="$RUN_DIR/env-token"',
        ]),
  ];
}
