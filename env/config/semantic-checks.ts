/**
 * The run-config checks a JSON Schema cannot express: relations between keys (ε_high below
 * ε_low, a group too small for GRPO, more tool calls than turns), paths that do not exist,
 * settings this machine cannot run (CUDA or bfloat16 without a device), a remote env server
 * without its token, and micro-model shapes the architecture rejects. Each problem says how to
 * fix it, and carries a fix when one is obvious.
 *
 * One engine for the CLI (`vistool config validate`) and the editor's diagnostics. Pure: it
 * reads the disk only through `facts.pathKind`, never writes, never runs anything.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { isInside } from '../core/paths.js';
import { GEOMETRY_FAMILIES } from '../tasks/geometry/questions.js';
import { validateTaskRecord } from '../tasks/load.js';
import type { EnvironmentFacts } from './environment-facts.js';
import { type ConfigProblem, dottedPath, pointerOf, problem } from './problem.js';
import { schemaAt } from './run-config-schema.js';
import type { RunConfig } from '../../protocol/run-config.js';
import { tokenBudgetProblems } from './token-budget-check.js';

export interface CheckInput {
  /** The config as written. */
  raw: Record<string, unknown>;
  /** The config with the schema's defaults filled in (run-config-schema.ts withDefaults). */
  config: Record<string, unknown>;
  /** Folder relative paths are resolved against (the trainer's working folder). */
  baseDir: string;
  facts: EnvironmentFacts;
}

type Json = Record<string, unknown>;

function section(config: Json, key: string): Json {
  const value = config[key];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function has(raw: Json, ...path: string[]): boolean {
  let value: unknown = raw;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !(key in value)) return false;
    value = (value as Json)[key];
  }
  return true;
}

/** The pointer of the first key that the text has, so a problem lands on something written. */
function firstWritten(raw: Json, ...paths: string[][]): string {
  for (const path of paths) if (has(raw, ...path)) return pointerOf(...path);
  return pointerOf(...(paths[0] ?? []));
}

const GEOMETRY_FAMILY_NAMES: readonly string[] = GEOMETRY_FAMILIES;

const HF_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

function looksLikePath(model: string): boolean {
  return model.startsWith('/') || model.startsWith('./') || model.startsWith('../') || model.startsWith('~') || model.includes('\\');
}

/** One check's view of the config: the input, where its problems go, and paths resolved as the trainer resolves them. */
interface CheckContext extends CheckInput {
  add(found: ConfigProblem): void;
  resolvePath(path: string): string;
}

type SemanticCheck = (c: CheckContext) => void;

export function semanticProblems(input: CheckInput): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const context: CheckContext = {
    ...input,
    add: (found) => problems.push(found),
    resolvePath: (path) => (isAbsolute(path) ? path : resolve(input.baseDir, path)),
  };
  for (const check of SEMANTIC_CHECKS) check(context);
  return problems;
}

const rlOn = (config: Json) => section(config, 'rl').enabled !== false;

// --- RL: clip range, group size, batch shape --------------------------------------------

function clipHigherRange({ raw, config, add }: CheckContext): void {
  const rl = section(config, 'rl');
  const low = num(rl.clip_ratio_low);
  const high = num(rl.clip_ratio_high);
  if (rlOn(config) && low !== null && high !== null && high < low) {
    const fixValue = Math.max(Number(schemaAt('/rl/clip_ratio_high')?.default), low);
    add(
      problem({
        code: 'rl/clip-high-below-low',
        severity: 'error',
        source: 'semantic',
        pointer: firstWritten(raw, ['rl', 'clip_ratio_high'], ['rl', 'clip_ratio_low'], ['rl']),
        message: `rl.clip_ratio_high (ε_high = ${high}) is below rl.clip_ratio_low (ε_low = ${low}): clip-higher needs ε_high ≥ ε_low, or low-probability tokens can never grow. DAPO uses ε_low 0.2, ε_high 0.28.`,
        fixes: [{ kind: 'set', title: `Set rl.clip_ratio_high to ${fixValue}`, pointer: '/rl/clip_ratio_high', value: fixValue }],
      }),
    );
  }
}

function groupSize({ raw, config, add }: CheckContext): void {
  const rl = section(config, 'rl');
  const group = num(rl.group_size);
  if (rlOn(config) && group !== null && group < 2) {
    add(
      problem({
        code: 'rl/group-too-small',
        severity: 'error',
        source: 'semantic',
        pointer: firstWritten(raw, ['rl', 'group_size'], ['rl']),
        message: `rl.group_size is ${group}: GRPO's advantage compares rollouts of the same prompt, so a group of ${group} has no baseline and every advantage is 0. Use 2 or more (8 is common), or turn RL off with rl.enabled: false.`,
        fixes: [{ kind: 'set', title: 'Set rl.group_size to 8', pointer: '/rl/group_size', value: 8 }],
      }),
    );
  }
}

// The importance weights need the engine's own log-probs; the transformers sampler returns none.
function rolloutIsNeedsVllm({ raw, config, add }: CheckContext): void {
  const rl = section(config, 'rl');
  const level = rl.rollout_is;
  const engine = rl.rollout_engine ?? schemaAt('/rl/rollout_engine')?.default;
  if (rlOn(config) && typeof level === 'string' && level !== 'off' && engine !== 'vllm') {
    add(
      problem({
        code: 'rl/rollout-is-needs-vllm',
        severity: 'error',
        source: 'semantic',
        pointer: firstWritten(raw, ['rl', 'rollout_is'], ['rl']),
        message: `rl.rollout_is is '${level}' but rl.rollout_engine is '${String(engine)}': the importance weights correct for a rollout engine that samples from another copy of the weights (vLLM's), and the transformers sampler samples the trained model itself, returning no log-probs to weigh by. Set rl.rollout_is to 'off', or rl.rollout_engine to 'vllm'.`,
        fixes: [
          { kind: 'set', title: "Set rl.rollout_is to 'off'", pointer: '/rl/rollout_is', value: 'off' },
          { kind: 'set', title: "Set rl.rollout_engine to 'vllm'", pointer: '/rl/rollout_engine', value: 'vllm' },
        ],
      }),
    );
  }
}

// Folding is for the transformers sampler; the vLLM engine is sent folded weights anyway.
function foldNeedsHf({ raw, config, add }: CheckContext): void {
  const rl = section(config, 'rl');
  const engine = rl.rollout_engine ?? schemaAt('/rl/rollout_engine')?.default;
  if (rlOn(config) && rl.fold_lora_for_sampling === true && engine !== 'hf') {
    add(
      problem({
        code: 'rl/fold-needs-hf',
        severity: 'error',
        source: 'semantic',
        pointer: firstWritten(raw, ['rl', 'fold_lora_for_sampling'], ['rl']),
        message: `rl.fold_lora_for_sampling is true but rl.rollout_engine is '${String(engine)}': folding is for the transformers sampler, and the vLLM engine is always sent the folded weights. Set rl.fold_lora_for_sampling to false, or rl.rollout_engine to 'hf'.`,
        fixes: [
          { kind: 'set', title: 'Set rl.fold_lora_for_sampling to false', pointer: '/rl/fold_lora_for_sampling', value: false },
          { kind: 'set', title: "Set rl.rollout_engine to 'hf'", pointer: '/rl/rollout_engine', value: 'hf' },
        ],
      }),
    );
  }
}

function microBatchEven({ raw, config, add }: CheckContext): void {
  const rl = section(config, 'rl');
  const group = num(rl.group_size);
  const prompts = num(rl.prompts_per_step);
  const microBatch = num(rl.micro_batch_size);
  // With rl.use_dynamic_bsz the micro-batches are cut by tokens and rl.micro_batch_size is not read.
  if (rlOn(config) && rl.use_dynamic_bsz !== true && group !== null && group >= 2 && prompts !== null && microBatch !== null) {
    const rollouts = prompts * group;
    if (microBatch < rollouts && rollouts % microBatch !== 0) {
      const even = [...Array(rollouts).keys()].map((i) => i + 1).filter((d) => rollouts % d === 0 && d <= microBatch).at(-1) ?? 1;
      add(
        problem({
          code: 'rl/micro-batch-uneven',
          severity: 'warning',
          source: 'semantic',
          pointer: firstWritten(raw, ['rl', 'micro_batch_size'], ['rl', 'group_size'], ['rl']),
          message: `a step's batch (rl.prompts_per_step × rl.group_size = ${prompts} × ${group} = ${rollouts} rollouts) is not divisible by rl.micro_batch_size (${microBatch}): the last micro-batch holds ${rollouts % microBatch}, so memory use and token weighting vary between micro-batches. ${even} divides it evenly.`,
          fixes: [{ kind: 'set', title: `Set rl.micro_batch_size to ${even}`, pointer: '/rl/micro_batch_size', value: even }],
        }),
      );
    }
  }
}

// --- Stages and episode limits --------------------------------------------------------------

function someStageOn({ raw, config, add }: CheckContext): void {
  const [rl, sft] = [section(config, 'rl'), section(config, 'sft')];
  if (sft.enabled === false && rl.enabled === false) {
    add(
      problem({
        code: 'stages/none',
        severity: 'warning',
        source: 'semantic',
        pointer: firstWritten(raw, ['rl', 'enabled'], ['sft', 'enabled']),
        message: 'both sft.enabled and rl.enabled are false: the run trains nothing and only evaluates. Turn one stage on, or use `python -m vistool_trainer eval` for an evaluation.',
        fixes: [{ kind: 'set', title: 'Set rl.enabled to true', pointer: '/rl/enabled', value: true }],
      }),
    );
  }
}

function toolCallsLeaveATurn({ raw, config, add }: CheckContext): void {
  const env = section(config, 'env');
  const maxTurns = num(env.max_turns);
  const maxCalls = num(env.max_tool_calls);
  if (env.tools !== false && maxTurns !== null && maxCalls !== null && maxCalls >= maxTurns) {
    add(
      problem({
        code: 'env/tool-calls-fill-turns',
        severity: 'warning',
        source: 'semantic',
        pointer: firstWritten(raw, ['env', 'max_tool_calls'], ['env', 'max_turns'], ['env']),
        message: `env.max_tool_calls (${maxCalls}) is not below env.max_turns (${maxTurns}): a policy can spend every turn on tool calls and never answer, and such episodes score 0. Keep at least one turn for the answer.`,
        fixes: [{ kind: 'set', title: `Set env.max_tool_calls to ${Math.max(0, maxTurns - 1)}`, pointer: '/env/max_tool_calls', value: Math.max(0, maxTurns - 1) }],
      }),
    );
  }
}

// --- Data ------------------------------------------------------------------------------------

/** data.train and data.eval name task files that exist, in the workspace. */
function dataFiles({ config, baseDir, facts, add, resolvePath }: CheckContext): void {
  const data = section(config, 'data');
  for (const split of ['train', 'eval'] as const) {
    const path = str(data[split]);
    if (path === null) continue;
    const absolute = resolvePath(path);
    const kind = facts.pathKind(absolute);
    const pointer = pointerOf('data', split);
    if (kind === 'dir') {
      const inside = join(absolute, 'tasks.jsonl');
      const fixes = facts.pathKind(inside) === 'file' ? [{ kind: 'set' as const, title: `Use ${join(path, 'tasks.jsonl')}`, pointer, value: join(path, 'tasks.jsonl') }] : [];
      add(problem({ code: 'data/not-a-file', severity: 'error', source: 'semantic', pointer, message: `data.${split} is a folder (${absolute}); it must name a tasks.jsonl file.`, fixes }));
    } else if (kind === 'file') {
      const found = firstRecordProblem(facts, absolute);
      if (found !== null) {
        add(problem({ code: 'data/not-task-file', severity: 'error', source: 'semantic', pointer, message: `data.${split} (${absolute}) is not a tasks.jsonl: ${found}. Each line must be one task record (env/tasks/task-record.schema.json); \`npx vistool data check ${path}\` checks the whole file.` }));
      }
      const roots = facts.workspaceRoots;
      if (roots && roots.length > 0 && !roots.some((root) => isInside(resolve(root), absolute))) {
        add(problem({ code: 'data/outside-workspace', severity: 'warning', source: 'semantic', pointer, message: `data.${split} (${absolute}) is outside the workspace (${roots.join(', ')}): the env server will read images from that folder. Copy the data into the workspace if that is not meant.` }));
      }
    } else if (kind === null) {
      add(
        problem({
          code: 'data/missing',
          severity: 'error',
          source: 'semantic',
          pointer,
          message: `data.${split} names ${absolute}, which does not exist (relative paths are resolved against ${baseDir}). Generate tasks with \`npx vistool data gen --kind table --n 400 --seed 1 --out DIR\`, or set data.${split} to null to let the run generate them.`,
          fixes: [{ kind: 'set', title: `Set data.${split} to null (generate tasks for the run)`, pointer, value: null }],
        }),
      );
    }
  }
}

/**
 * The held-out split must be held out: data.eval the same file as data.train, or sharing task ids
 * with it (among each file's first records: a data file can be huge), scores tasks the policy
 * trained on, and every accuracy it reports is optimistic.
 */
function evalHeldOut({ config, facts, add, resolvePath }: CheckContext): void {
  const data = section(config, 'data');
  const trainPath = str(data.train);
  const evalPath = str(data.eval);
  if (trainPath === null || evalPath === null) return;
  const train = resolvePath(trainPath);
  const held = resolvePath(evalPath);
  if (facts.pathKind(train) !== 'file' || facts.pathKind(held) !== 'file') return;
  const pointer = pointerOf('data', 'eval');
  if (sameFile(facts, train, held)) {
    add(problem({ code: 'data/eval-is-train', severity: 'warning', source: 'semantic', pointer, message: `data.eval is the same file as data.train (${held}): the evaluation would score tasks the policy trained on. Point data.eval at a held-out split (\`npx vistool data gen --split test\` writes one), or set it to null to generate one.` }));
    return;
  }
  const trainIds = new Set(taskIds(facts, train));
  const shared = taskIds(facts, held).filter((id) => trainIds.has(id));
  if (shared.length > 0) {
    const examples = shared.slice(0, 3).map((id) => `'${id}'`).join(', ');
    add(problem({ code: 'data/eval-overlaps-train', severity: 'warning', source: 'semantic', pointer, message: `data.eval shares ${shared.length} task id${shared.length === 1 ? '' : 's'} with data.train among their first records (e.g. ${examples}): those tasks are not held out. Use a split written apart from the training one.` }));
  }
}

function sameFile(facts: EnvironmentFacts, a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  const real = facts.realPath;
  return real !== undefined && real(a) !== null && real(a) === real(b);
}

/** The ids of a data file's first records (the lines `facts.firstLines` reads). */
function taskIds(facts: EnvironmentFacts, path: string): string[] {
  const ids: string[] = [];
  for (const line of facts.firstLines?.(path, 2000) ?? []) {
    try {
      const id = (JSON.parse(line) as { id?: unknown }).id;
      if (typeof id === 'string' || typeof id === 'number') ids.push(String(id));
    } catch {
      // a line cut at the read limit, or not JSON: data/not-task-file reports the file's problems
    }
  }
  return ids;
}

function generateUnused({ raw, config, add }: CheckContext): void {
  const data = section(config, 'data');
  if (data.train !== null && data.eval !== null && typeof data.train === 'string' && typeof data.eval === 'string' && has(raw, 'data', 'generate')) {
    add(problem({ code: 'data/generate-unused', severity: 'info', source: 'semantic', pointer: '/data/generate', target: 'key', message: 'data.generate is ignored: both data.train and data.eval name task files. Remove it, or set one of them to null to generate that split.', fixes: [{ kind: 'remove', title: 'Remove data.generate', pointer: '/data/generate' }] }));
  }
}

// Geometry diagrams and charts/tables ask different question families (env/tasks/README.md).
function familiesOfKind({ raw, config, add }: CheckContext): void {
  const generate = section(section(config, 'data'), 'generate');
  const families = Array.isArray(generate.families) ? generate.families.filter((f): f is string => typeof f === 'string') : [];
  const geometry = generate.kind === 'geometry';
  const mismatched = families.filter((f) => GEOMETRY_FAMILY_NAMES.includes(f) !== geometry);
  if (mismatched.length > 0) {
    add(problem({
      code: 'data/families-kind', severity: 'error', source: 'semantic', pointer: firstWritten(raw, ['data', 'generate', 'families'], ['data', 'generate', 'kind']),
      message: `data.generate.families ${mismatched.join(', ')} ${mismatched.length === 1 ? 'is' : 'are'} not asked of kind '${String(generate.kind)}': ${geometry ? `geometry asks ${GEOMETRY_FAMILY_NAMES.join(', ')}` : `${GEOMETRY_FAMILY_NAMES.join(', ')} are asked of kind 'geometry' only`}.`,
      fixes: [{ kind: 'set', title: 'Ask every family of the kind (null)', pointer: '/data/generate/families', value: null }],
    }));
  }
}

function evalWithinGenerated({ raw, config, add }: CheckContext): void {
  const data = section(config, 'data');
  const generate = section(data, 'generate');
  const evaluation = section(config, 'eval');
  const evalN = num(evaluation.n);
  const nEval = num(generate.n_eval);
  if (data.eval === null && evalN !== null && nEval !== null && evalN > nEval) {
    add(
      problem({
        code: 'eval/more-than-generated',
        severity: 'warning',
        source: 'semantic',
        pointer: firstWritten(raw, ['eval', 'n'], ['data', 'generate', 'n_eval']),
        message: `eval.n (${evalN}) is more than the held-out tasks the run generates (data.generate.n_eval = ${nEval}): only ${nEval} will be evaluated.`,
        fixes: [{ kind: 'set', title: `Set eval.n to ${nEval}`, pointer: '/eval/n', value: nEval }],
      }),
    );
  }
}

// rl.fresh_tasks keeps the last training tasks from SFT; with a generated split its size is known here.
function freshTasksLeaveSft({ raw, config, add }: CheckContext): void {
  const data = section(config, 'data');
  const rl = section(config, 'rl');
  const sft = section(config, 'sft');
  const fresh = num(rl.fresh_tasks) ?? 0;
  const nTrain = num(section(data, 'generate').n_train) ?? num(schemaAt('/data/generate/n_train')?.default);
  if (!rlOn(config) || fresh === 0 || typeof data.train === 'string' || nTrain === null) return;
  const probe = sft.enabled === false ? 0 : num(sft.probe_tasks) ?? num(schemaAt('/sft/probe_tasks')?.default) ?? 0;
  const needed = 1 + probe;
  if (nTrain - fresh >= needed) return;
  add(
    problem({
      code: 'rl/fresh-tasks-too-many',
      severity: 'error',
      source: 'semantic',
      pointer: firstWritten(raw, ['rl', 'fresh_tasks'], ['rl']),
      message: `rl.fresh_tasks (${fresh}) keeps too many of data.generate.n_train's ${nTrain} training tasks from SFT, which needs at least ${needed} (one to train on${probe ? `, and sft.probe_tasks ${probe} for its probe` : ''}). Raise data.generate.n_train to ${fresh + needed} or more, or lower rl.fresh_tasks.`,
      fixes: [
        { kind: 'set', title: `Set data.generate.n_train to ${fresh + needed}`, pointer: '/data/generate/n_train', value: fresh + needed },
        { kind: 'set', title: 'Set rl.fresh_tasks to 0 (RL draws from every training task)', pointer: '/rl/fresh_tasks', value: 0 },
      ],
    }),
  );
}

// --- Policy ----------------------------------------------------------------------------------

/** policy.model is 'micro', a model folder, or a Hugging Face id (cached or not). */
function policyModel({ raw, config, baseDir, facts, add, resolvePath }: CheckContext): void {
  const model = str(section(config, 'policy').model);
  if (model !== null && model !== 'micro') {
    // No ~ expansion: the trainer hands the string to from_pretrained as it is.
    const absolute = resolvePath(model);
    const local = facts.pathKind(absolute);
    if (local === 'dir') {
      if (facts.pathKind(join(absolute, 'config.json')) !== 'file') {
        add(problem({ code: 'policy/model-folder-without-config', severity: 'error', source: 'semantic', pointer: '/policy/model', message: `policy.model is the folder ${absolute}, which has no config.json: it must hold a Hugging Face model (save_pretrained output), e.g. a checkpoints/step-NNNNNN/policy folder.` }));
      }
    } else if (local === 'file') {
      add(problem({ code: 'policy/model-is-file', severity: 'error', source: 'semantic', pointer: '/policy/model', message: `policy.model is the file ${absolute}; it must be 'micro', a Hugging Face id (Qwen/Qwen2.5-VL-3B-Instruct) or a model folder.` }));
    } else if (looksLikePath(model) || !HF_ID.test(model)) {
      add(problem({ code: 'policy/model-missing', severity: 'error', source: 'semantic', pointer: '/policy/model', message: `policy.model names ${absolute}, which does not exist (relative paths are resolved against ${baseDir}). Use 'micro', a Hugging Face id such as Qwen/Qwen2.5-VL-3B-Instruct, or an existing model folder.`, fixes: [{ kind: 'set', title: "Use the embedded micro model ('micro')", pointer: '/policy/model', value: 'micro' }] }));
    } else if (facts.huggingFaceCache !== null && facts.pathKind(join(facts.huggingFaceCache, `models--${model.replace('/', '--')}`)) !== 'dir') {
      add(problem({ code: 'policy/model-not-cached', severity: 'info', source: 'semantic', pointer: '/policy/model', message: `${model} is not in the Hugging Face cache (${facts.huggingFaceCache}): the trainer downloads it when the run starts, which needs network access (or set HF_HUB_OFFLINE=1 and use a local folder).` }));
    }
    if (has(raw, 'policy', 'micro')) {
      add(problem({ code: 'policy/micro-unused', severity: 'warning', source: 'semantic', pointer: '/policy/micro', target: 'key', message: `policy.micro is ignored: it sizes the embedded micro model, and policy.model is '${model}'.`, fixes: [{ kind: 'remove', title: 'Remove policy.micro', pointer: '/policy/micro' }] }));
    }
  }
}

/** The micro model's shapes Qwen2.5-VL's architecture accepts. */
function microShapes({ raw, config, add }: CheckContext): void {
  const policy = section(config, 'policy');
  const micro = section(policy, 'micro');
  if (str(policy.model) !== 'micro') return;
  const pairs: [string, string, string][] = [
    ['text_hidden', 'text_heads', 'text'],
    ['vision_hidden', 'vision_heads', 'vision'],
  ];
  for (const [hiddenKey, headsKey, tower] of pairs) {
    const hidden = num(micro[hiddenKey]);
    const heads = num(micro[headsKey]);
    if (hidden === null || heads === null || heads < 1) continue;
    if (hidden % heads !== 0) {
      add(problem({ code: 'micro/heads-do-not-divide', severity: 'error', source: 'semantic', pointer: firstWritten(raw, ['policy', 'micro', headsKey], ['policy', 'micro', hiddenKey], ['policy', 'micro']), message: `policy.micro.${hiddenKey} (${hidden}) is not divisible by policy.micro.${headsKey} (${heads}): each ${tower} attention head gets hidden/heads dimensions. Pick a head count that divides ${hidden}.` }));
    } else if (tower === 'text' && ((hidden / heads) % 2 !== 0 || hidden / heads < 8)) {
      add(problem({ code: 'micro/head-dim', severity: 'error', source: 'semantic', pointer: firstWritten(raw, ['policy', 'micro', headsKey], ['policy', 'micro', hiddenKey], ['policy', 'micro']), message: `the text head dimension (text_hidden / text_heads = ${hidden / heads}) must be even and at least 8: Qwen2.5-VL's multimodal rotary embedding splits half of it across time, height and width.` }));
    }
  }
  const heads = num(micro.text_heads);
  const kvHeads = num(micro.text_kv_heads);
  if (heads !== null && kvHeads !== null && kvHeads > 0 && heads % kvHeads !== 0) {
    add(problem({ code: 'micro/kv-heads', severity: 'error', source: 'semantic', pointer: firstWritten(raw, ['policy', 'micro', 'text_kv_heads'], ['policy', 'micro']), message: `policy.micro.text_heads (${heads}) is not a multiple of policy.micro.text_kv_heads (${kvHeads}): grouped-query attention shares each key/value head among an equal number of query heads.` }));
  }
}

function pixelRanges({ raw, config, add }: CheckContext): void {
  const policy = section(config, 'policy');
  const micro = section(policy, 'micro');
  for (const [minPointer, maxPointer, minValue, maxValue] of [
    [['policy', 'min_pixels'], ['policy', 'max_pixels'], num(policy.min_pixels), num(policy.max_pixels)],
    [['policy', 'micro', 'min_pixels'], ['policy', 'micro', 'max_pixels'], num(micro.min_pixels), num(micro.max_pixels)],
  ] as const) {
    if (minValue !== null && maxValue !== null && minValue > maxValue) {
      add(problem({ code: 'policy/pixels-range', severity: 'error', source: 'semantic', pointer: firstWritten(raw, [...minPointer], [...maxPointer]), message: `${dottedPath(pointerOf(...minPointer))} (${minValue}) is larger than ${dottedPath(pointerOf(...maxPointer))} (${maxValue}): the image processor needs min ≤ max.` }));
    }
  }
}

/** The opening prompt and the episode at the pixel bounds against the bundled vLLM engine's length (token-budget-check.ts). */
function tokenBudget({ raw, config, add }: CheckContext): void {
  const policy = section(config, 'policy');
  const min = num(policy.min_pixels);
  const max = num(policy.max_pixels);
  if (min !== null && max !== null && min > max) return; // pixelRanges reports it
  for (const found of tokenBudgetProblems(config as unknown as RunConfig, raw)) add(found);
}

/** rl.train_turns 'final' is the veRL bridge's (its agent loop masks the turns); the bundled trainer trains every turn. */
function trainTurnsOnVerl({ raw, config, add }: CheckContext): void {
  const turns = str(section(config, 'rl').train_turns);
  if (!rlOn(config) || turns !== 'final' || str(config.engine) === 'verl') return;
  add(problem({ code: 'rl/train-turns-verl-only', severity: 'error', source: 'semantic', pointer: firstWritten(raw, ['rl', 'train_turns']), message: "rl.train_turns 'final' (only the turn that ends the episode is trained, VTool-R1 v2's mask) is carried out by the veRL bridge, and engine is not 'verl': vistool's own trainer trains every turn and would refuse to start. Set engine to 'verl' (`vistool config export --to verl`), or rl.train_turns to 'all'.", fixes: [{ kind: 'set', title: "Set rl.train_turns to 'all'", pointer: '/rl/train_turns', value: 'all' }] }));
}

// --- Device and precision ----------------------------------------------------------------------

/** Whether the policy runs on the CPU: device 'cpu', or no CUDA device found and none required. */
function runsOnCpu(config: Json, facts: EnvironmentFacts): boolean {
  const device = str(config.device);
  return device === 'cpu' || (facts.cudaDevices === 0 && device !== 'cuda');
}

function deviceAndPrecision({ raw, config, facts, add }: CheckContext): void {
  const device = str(config.device);
  const dtype = str(section(config, 'policy').dtype);
  if (device === 'cuda' && facts.cudaDevices === 0) {
    add(problem({ code: 'device/no-cuda', severity: 'error', source: 'semantic', pointer: firstWritten(raw, ['device']), message: "device is 'cuda' but the trainer's environment check found no CUDA device on this machine. Use 'auto' (CUDA when there is one) or 'cpu', or run where the GPUs are (Remote-SSH).", fixes: [{ kind: 'set', title: "Set device to 'auto'", pointer: '/device', value: 'auto' }] }));
  }
  const onCpu = runsOnCpu(config, facts);
  if (dtype === 'bfloat16' || dtype === 'float16') {
    if (onCpu) {
      add(problem({ code: 'dtype/half-on-cpu', severity: 'warning', source: 'semantic', pointer: '/policy/dtype', message: `policy.dtype is '${dtype}' but the policy runs on the CPU${device === 'cpu' ? '' : ' (no CUDA device found)'}: half precision is slow there and some operations lack CPU kernels. 'auto' uses float32 on CPU and bfloat16 on CUDA.`, fixes: [{ kind: 'set', title: "Set policy.dtype to 'auto'", pointer: '/policy/dtype', value: 'auto' }] }));
    } else if (dtype === 'bfloat16' && facts.bf16 === false) {
      add(problem({ code: 'dtype/no-bf16', severity: 'error', source: 'semantic', pointer: '/policy/dtype', message: "policy.dtype is 'bfloat16' but a CUDA device here does not support bfloat16 (pre-Ampere GPU). Use 'float16' or 'float32'.", fixes: [{ kind: 'set', title: "Set policy.dtype to 'float16'", pointer: '/policy/dtype', value: 'float16' }] }));
    }
  }
}

// --- Distributed training --------------------------------------------------------------------

function distributedOptions({ raw, config, facts, add }: CheckContext): void {
  const device = str(config.device);
  const onCpu = runsOnCpu(config, facts);
  const distributed = section(config, 'distributed');
  const strategy = str(distributed.strategy) ?? 'ddp';
  if (distributed.cpu_offload === true && strategy !== 'ddp' && onCpu) {
    add(problem({ code: 'distributed/offload-on-cpu', severity: 'error', source: 'semantic', pointer: '/distributed/cpu_offload', message: `distributed.cpu_offload moves the sharded state from GPU to CPU memory, but the policy runs on the CPU${device === 'cpu' ? '' : ' (no CUDA device found)'}: the trainer refuses it. Set it to false, or run on CUDA.`, fixes: [{ kind: 'set', title: 'Set distributed.cpu_offload to false', pointer: '/distributed/cpu_offload', value: false }] }));
  }
  for (const [key, usedBy] of [['cpu_offload', ['fsdp', 'zero3']], ['reshard_after_forward', ['fsdp']]] as const) {
    if (has(raw, 'distributed', key) && !(usedBy as readonly string[]).includes(strategy)) {
      add(problem({ code: 'distributed/option-unused', severity: 'info', source: 'semantic', pointer: `/distributed/${key}`, target: 'key', message: `distributed.${key} is ignored: it applies to strategy ${usedBy.map((name) => `'${name}'`).join(' or ')}, and distributed.strategy is '${strategy}'.`, fixes: [{ kind: 'remove', title: `Remove distributed.${key}`, pointer: `/distributed/${key}` }] }));
    }
  }
}

// --- Env server --------------------------------------------------------------------------------

/** A remote env server needs a valid URL and its token; a token file without one is unused. */
function envServer({ raw, config, facts, add, resolvePath }: CheckContext): void {
  const env = section(config, 'env');
  const url = str(env.url);
  if (url !== null) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      add(problem({ code: 'env/url-invalid', severity: 'error', source: 'semantic', pointer: '/env/url', message: `env.url (${url}) is not a URL; write it as http://HOST:PORT (the address \`vistool serve\` printed), or null to start a local server.` }));
    }
    if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      add(problem({ code: 'env/url-invalid', severity: 'error', source: 'semantic', pointer: '/env/url', message: `env.url must be http:// or https://, not ${parsed.protocol}` }));
    }
    const tokenFile = str(env.token_file);
    if (tokenFile !== null) {
      const absolute = resolvePath(tokenFile);
      if (facts.pathKind(absolute) !== 'file') {
        add(problem({ code: 'env/token-file-missing', severity: 'error', source: 'semantic', pointer: '/env/token_file', message: `env.token_file names ${absolute}, which does not exist: \`vistool serve --token-file FILE\` writes the token there when the server starts.` }));
      }
    } else if (!facts.envVars.has('VISTOOL_TOKEN')) {
      add(problem({ code: 'env/token-missing', severity: 'error', source: 'semantic', pointer: '/env/url', message: 'env.url is set but the server\'s token is nowhere: set env.token_file to the file `vistool serve --token-file` wrote, or export VISTOOL_TOKEN before starting the trainer.', fixes: [{ kind: 'set', title: 'Set env.url to null (start a local server for the run)', pointer: '/env/url', value: null }] }));
    }
  } else if (has(raw, 'env', 'token_file') && env.token_file !== null) {
    add(problem({ code: 'env/token-file-unused', severity: 'info', source: 'semantic', pointer: '/env/token_file', target: 'key', message: 'env.token_file is ignored while env.url is null: the run starts its own local server with a fresh token.' }));
  }
}

// --- Rewards: the LLM judge --------------------------------------------------------------------

function judgeKey({ raw, config, facts, add }: CheckContext): void {
  const judge = section(section(config, 'rewards'), 'judge');
  if (judge.enabled === true) {
    const keyVar = str(judge.api_key_env) ?? 'VISTOOL_JUDGE_API_KEY';
    const baseUrl = str(judge.base_url) ?? '';
    let loopback = false;
    try {
      loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(baseUrl).hostname);
    } catch {
      // An unparsable URL is the schema's or the server's to report; treat it as remote here.
    }
    if (!facts.envVars.has(keyVar)) {
      add(
        problem({
          code: 'rewards/judge-key-missing',
          severity: loopback ? 'info' : 'warning',
          source: 'semantic',
          pointer: firstWritten(raw, ['rewards', 'judge', 'api_key_env'], ['rewards', 'judge', 'enabled'], ['rewards', 'judge']),
          message: loopback
            ? `the judge is enabled and $${keyVar} is not set: requests to ${baseUrl} go without an Authorization header (fine for a local vLLM server).`
            : `the judge at ${baseUrl || '(no base_url)'} is enabled but $${keyVar} is not set in this environment, so requests carry no API key and will be refused. Export ${keyVar}=<key> where the run starts (rewards.judge.api_key_env names the variable, never the key).`,
        }),
      );
    }
  }
}

// --- Rewards: what the tool bonus asks for ---------------------------------------------------

/** tool_bonus_requires 'on_target' changes nothing when no tool bonus is paid: say so rather than let it look active. */
function toolBonusRequires({ raw, config, add }: CheckContext): void {
  const rewards = section(config, 'rewards');
  if (section(rewards, 'tool').tool_bonus_requires !== 'on_target') return;
  const pointer = firstWritten(raw, ['rewards', 'tool', 'tool_bonus_requires']);
  if (section(rewards, 'tool').group_ranking === true) {
    add(problem({ code: 'rewards/tool-bonus-requires-unused', severity: 'warning', source: 'semantic', pointer, message: "rewards.tool.tool_bonus_requires is 'on_target' but rewards.tool.group_ranking is on, which switches the tool bonus off: the on-target rule pays nothing. Turn group_ranking off, or drop tool_bonus_requires." }));
  } else if (num(section(rewards, 'weights').tool_bonus) === 0) {
    add(problem({ code: 'rewards/tool-bonus-requires-unused', severity: 'warning', source: 'semantic', pointer, message: "rewards.tool.tool_bonus_requires is 'on_target' but rewards.weights.tool_bonus is 0: no tool bonus is paid, on target or not. Give weights.tool_bonus a weight (0.2 by default), or drop tool_bonus_requires.", fixes: [{ kind: 'set', title: 'Set rewards.weights.tool_bonus to 0.2', pointer: '/rewards/weights/tool_bonus', value: 0.2 }] }));
  }
}

/** Every check, in the order their problems are listed. */
const SEMANTIC_CHECKS: readonly SemanticCheck[] = [
  clipHigherRange,
  groupSize,
  rolloutIsNeedsVllm,
  foldNeedsHf,
  microBatchEven,
  someStageOn,
  toolCallsLeaveATurn,
  dataFiles,
  evalHeldOut,
  generateUnused,
  familiesOfKind,
  evalWithinGenerated,
  freshTasksLeaveSft,
  policyModel,
  microShapes,
  pixelRanges,
  tokenBudget,
  trainTurnsOnVerl,
  deviceAndPrecision,
  distributedOptions,
  envServer,
  judgeKey,
  toolBonusRequires,
];

/** How many leading records `config validate` reads of each data file. */
const CHECKED_RECORDS = 5;

/** The first problem among a data file's first records ("line N: ..."), or null when they are task records. */
function firstRecordProblem(facts: EnvironmentFacts, path: string): string | null {
  const lines = facts.firstLines?.(path, 200);
  if (!lines) return null;
  let checked = 0;
  for (let i = 0; i < lines.length && checked < CHECKED_RECORDS; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    checked++;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return `line ${i + 1} is not JSON (${JSON.stringify(line.length > 60 ? line.slice(0, 57) + '...' : line)})`;
    }
    const problems = validateTaskRecord(value);
    if (problems.length > 0) return `line ${i + 1}: ${problems[0]}`;
  }
  return checked === 0 ? 'it has no records in its first 64 KiB' : null;
}
