/**
 * `vistool eval`: evaluates a policy on a tasks file, with tools, without, or both, and writes
 * an eval folder the rollout viewer and the dashboard open like a training run (env/eval/README.md).
 * Progress goes to stderr; the summary table to stdout. A rerun with the same options continues
 * where a killed run stopped. Ctrl-C stops cleanly: finished tasks are kept.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { QWEN2_5_VL_PROCESSOR } from '../config/qwen-image-tokens.js';
import { DEFAULT_LIMITS } from '../episodes/episode.js';
import { OpenAIChatPolicy } from '../eval/chat-policy.js';
import { checkpointStep, defaultPython, startPolicyServer, type PolicyServer } from '../eval/checkpoint-eval.js';
import { checkpointRunConfigPath, evalEpisodeSettings, readRunConfigFile, type EvalEpisodeFlags, type EvalEpisodeSettings } from '../eval/eval-settings.js';
import { parsePolicySpec, policyLabel, describePolicy, PolicySpecError, type PolicySpec } from '../eval/policy-spec.js';
import { runChatEval } from '../eval/run-eval.js';
import { formatSummaryTable } from '../eval/table.js';
import type { Arm } from '../eval/task-result.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';

const usage = `vistool eval --policy POLICY --tasks PATH --out DIR [--tools on|off|both] [--limit N]
             [--concurrency C] [--max-turns T] [--label NAME] [--reward-config FILE]
             [--api-key-env NAME] [--temperature X] [--max-tokens N] [--timeout-s S]
             [--max-retries N] [--backoff-ms MS] [--retry-after-max-s S] [--retry-failed]
             [--stop-after-failures N] [--max-failed-share F] [--max-tool-calls N]
             [--run-config FILE] [--system-prompt TEXT] [--latest-images N] [--images-first]
             [--observation-role user|tool] [--counterfactual] [--min-pixels N] [--max-pixels N]
             [--trainer-config FILE] [--python PATH]

  --policy          openai:<base_url>#<model>  any OpenAI-compatible chat server, e.g.
                                               openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-VL-3B-Instruct
                    checkpoint:<path>          a trainer checkpoint, served by the Python trainer's
                                               serve-policy on 127.0.0.1 (one request at a time)
  --tasks           tasks.jsonl, or the folder holding it (what vistool data gen / data convert --out wrote)
  --out             eval folder: results.jsonl, results.json, rollouts/, images/, run.json
  --tools           on: with tools; off: text only; both (default): both arms on every task
  --limit           the first N tasks of the file
  --concurrency     tasks in flight at once (default 4; checkpoints: 1)
  --max-turns       assistant turns per episode (default ${DEFAULT_LIMITS.maxTurns}; with a run config: its env.max_turns)
  --max-tool-calls  tool calls per episode (default ${DEFAULT_LIMITS.maxToolCalls}; with a run config: its env.max_tool_calls)
  --run-config      openai: a run config whose presentation the episodes use (policy.system_prompt,
                    policy.view), with its turn and call limits and eval.max_new_tokens; a
                    checkpoint uses its own run config (see --trainer-config)
  --system-prompt   the system turn of every episode instead ('' : none); default: the run
                    config's policy.system_prompt, else the env's (the tool list and call format)
  --latest-images   the policy sees only the newest N images, older ones as '(earlier image)'
  --images-first    a message's images come before its text
  --observation-role  openai: the role tool observations are sent in: user (default; many servers
                    refuse images in tool messages) or tool (a vistool checkpoint served elsewhere,
                    trained on tool turns); checkpoint: policies always use tool
  --counterfactual  did the tool matter? replay every tools-arm episode with a successful call with
                    the tool results withheld (the same turns up to the first successful call, the
                    unedited image shown), the policy continuing greedily; reports the tool effect
                    (accuracy as run − accuracy withheld, Newcombe's paired 95 % interval) and the
                    share of answers that changed. Needs --temperature 0; part of the eval's identity
  --min-pixels, --max-pixels  the policy's image processor bounds, sent to the env as the
                    episodes' pixel_bounds: crop reads boxes in the image as the policy was shown it
                    (Qwen2.5-VL smart_resize under them). Default: the run config's (policy.micro.*
                    for micro, else policy.min_pixels/max_pixels), else Qwen2.5-VL's processor
                    defaults, ${QWEN2_5_VL_PROCESSOR.minPixels} and ${QWEN2_5_VL_PROCESSOR.maxPixels}; give the server's
                    own when it serves the model with other bounds (vLLM --mm-processor-kwargs)
  --label           name in tables and on the dashboard (default: the model or checkpoint)
  --reward-config   reward config JSON (env/rewards/config.schema.json, or a run config's "rewards");
                    a judge enabled there is asked, and its agreement with the rule is reported
  --api-key-env     NAME of the environment variable holding the API key (default OPENAI_API_KEY);
                    the key itself never goes on the command line or into files
  --temperature     sampling temperature (default 0)
  --max-tokens      per reply (default 1024; with a run config: its eval.max_new_tokens)
  --timeout-s       per request (default 120)
  --max-retries     retries on 429, 5xx, timeouts and network errors (default 5)
  --backoff-ms      first retry delay, doubling with jitter up to 60 s (default 1000); a Retry-After
                    header is honoured instead, up to --retry-after-max-s (default 300)
  --retry-failed    on resume, run the tasks recorded as failed again (default: keep them failed)
  --stop-after-failures  stop with an error after N task/arm failures in a row (default 10; 0: never)
  --max-failed-share  exit 1 when more than this share of the task/arm results failed (default 0.1;
                    1: never), so a script or CI does not read a broken endpoint as a finished eval
  --trainer-config  checkpoint: the run config it was trained with (default <ckpt>/../../config.json);
                    its presentation, limits and reply budget are the eval's, as the trainer's own eval
  --python          checkpoint: interpreter with vistool_trainer (default $VISTOOL_PYTHON or .venv/bin/python)

Exit 0 when the eval finished (failed tasks are recorded and counted), 1 when more than
--max-failed-share of its results failed or on an error, 130 when interrupted (rerun the same
command to continue), 2 on a usage error.`;

function number(value: string | undefined, name: string, fallback: number, check: (n: number) => boolean, expected: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || !check(n)) throw new UsageError(`--${name} must be ${expected}, got '${value}'`);
  return n;
}

const positiveInteger = (n: number) => Number.isInteger(n) && n >= 1;

function parseArms(value: string | undefined): Arm[] {
  switch (value ?? 'both') {
    case 'on':
      return ['tools'];
    case 'off':
      return ['no_tools'];
    case 'both':
      return ['tools', 'no_tools'];
    default:
      throw new UsageError(`--tools must be on, off or both, got '${value}'`);
  }
}

async function readRewardConfig(path: string | undefined): Promise<unknown> {
  if (path === undefined) return {};
  const text = await readFile(path, 'utf8').catch((err: Error) => {
    throw new UsageError(`cannot read --reward-config ${path}: ${err.message}`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--reward-config ${path} is not valid JSON: ${(err as Error).message}`);
  }
  // A whole run config is accepted too: its "rewards" section is the reward config.
  if (typeof value === 'object' && value !== null && 'rewards' in value) return (value as { rewards: unknown }).rewards;
  return value;
}

export interface EvalCliStreams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

const EVAL_OPTIONS = {
  policy: { type: 'string' },
  tasks: { type: 'string' },
  out: { type: 'string' },
  tools: { type: 'string' },
  limit: { type: 'string' },
  concurrency: { type: 'string' },
  'max-turns': { type: 'string' },
  label: { type: 'string' },
  'reward-config': { type: 'string' },
  'api-key-env': { type: 'string' },
  temperature: { type: 'string' },
  'max-tokens': { type: 'string' },
  'timeout-s': { type: 'string' },
  'max-retries': { type: 'string' },
  'backoff-ms': { type: 'string' },
  'retry-after-max-s': { type: 'string' },
  'retry-failed': { type: 'boolean', default: false },
  'stop-after-failures': { type: 'string' },
  'max-failed-share': { type: 'string' },
  'trainer-config': { type: 'string' },
  'run-config': { type: 'string' },
  'system-prompt': { type: 'string' },
  'latest-images': { type: 'string' },
  'images-first': { type: 'boolean' },
  'max-tool-calls': { type: 'string' },
  'observation-role': { type: 'string' },
  counterfactual: { type: 'boolean', default: false },
  'min-pixels': { type: 'string' },
  'max-pixels': { type: 'string' },
  python: { type: 'string' },
} as const;

function parseEvalArgs(argv: string[]) {
  return parseCommandArgs({ args: argv, allowPositionals: true, strict: true, options: EVAL_OPTIONS });
}

type EvalValues = ReturnType<typeof parseEvalArgs>['values'];

/** How the policy's chat server is asked: sampling, reply budget, timeouts and retries. */
interface ClientSettings {
  apiKeyEnv: string;
  temperature: number;
  /** --max-tokens, or 1024; a run config's eval.max_new_tokens replaces the default (not the flag). */
  maxTokens: number;
  timeoutMs: number;
  maxRetries: number;
  backoffMs: number;
  retryAfterMaxMs: number;
}

/** What the command line asks for, every flag checked. */
interface EvalRequest {
  values: EvalValues;
  spec: PolicySpec;
  tasksFile: string;
  arms: Arm[];
  limit: number | null;
  concurrency: number;
  settings: EvalEpisodeSettings;
  observationRole: 'user' | 'tool';
  client: ClientSettings;
  stopAfterFailures: number;
  maxFailedShare: number;
  rewardConfig: unknown;
  label: string;
  counterfactual: boolean;
}

export function createEvalCommand(io: EvalCliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['eval'],
    summary: 'Evaluate a policy (OpenAI-compatible server or checkpoint) with and without tools; resumable',
    usage,
    async run(argv) {
      return runEvalRequest(await evalRequestOf(argv), io);
    },
  };
}

async function evalRequestOf(argv: string[]): Promise<EvalRequest> {
  const { values, positionals } = parseEvalArgs(argv);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}' (did you mean \`vistool eval compare\`?)`);
  for (const required of ['policy', 'tasks', 'out'] as const) if (values[required] === undefined) throw new UsageError(`--${required} is required`);
  let spec: PolicySpec;
  try {
    spec = parsePolicySpec(values.policy as string);
  } catch (err) {
    if (err instanceof PolicySpecError) throw new UsageError(err.message);
    throw err;
  }
  const tasksFile = tasksFileOf(values.tasks as string);
  const arms = parseArms(values.tools);
  const limit = values.limit === undefined ? null : number(values.limit, 'limit', 0, positiveInteger, 'a positive whole number');
  const concurrency = number(values.concurrency, 'concurrency', 4, (n) => positiveInteger(n) && n <= 256, 'a whole number from 1 to 256');
  const flags = episodeFlagsOf(values);
  const observationRole = observationRoleOf(values, spec);
  const settings = await episodeSettingsOf(values, spec, flags);
  const client = clientSettingsOf(values);
  const stopAfterFailures = number(values['stop-after-failures'], 'stop-after-failures', 10, (n) => Number.isInteger(n) && n >= 0, 'a whole number (0: never stop)');
  const rewardConfig = await readRewardConfig(values['reward-config']);
  const maxFailedShare = number(values['max-failed-share'], 'max-failed-share', 0.1, (n) => n >= 0 && n <= 1, 'a share from 0 to 1 (1: never fail on failures)');
  const counterfactual = values.counterfactual === true;
  if (counterfactual && !arms.includes('tools')) throw new UsageError('--counterfactual replays the tools arm; it needs --tools on or both');
  if (counterfactual && client.temperature !== 0) {
    throw new UsageError(`--counterfactual continues the replays greedily and compares them with the run, which must be greedy too: drop --temperature ${client.temperature} (default 0)`);
  }
  return { values, spec, tasksFile, arms, limit, concurrency, settings, observationRole, client, stopAfterFailures, maxFailedShare, rewardConfig, label: values.label ?? policyLabel(spec), counterfactual };
}

function episodeFlagsOf(values: EvalValues): EvalEpisodeFlags {
  const flags: EvalEpisodeFlags = {};
  if (values['max-turns'] !== undefined) flags.maxTurns = number(values['max-turns'], 'max-turns', 0, (n) => positiveInteger(n) && n <= 50, 'a whole number from 1 to 50');
  if (values['max-tool-calls'] !== undefined) flags.maxToolCalls = number(values['max-tool-calls'], 'max-tool-calls', 0, (n) => positiveInteger(n) && n <= 50, 'a whole number from 1 to 50');
  if (values['latest-images'] !== undefined) flags.latestImages = number(values['latest-images'], 'latest-images', 0, (n) => positiveInteger(n) && n <= 1000, 'a whole number from 1 to 1000');
  if (values['images-first'] !== undefined) flags.imagesFirst = values['images-first'];
  if (values['system-prompt'] !== undefined) flags.systemPrompt = values['system-prompt'];
  if (values['min-pixels'] !== undefined) flags.minPixels = number(values['min-pixels'], 'min-pixels', 0, positiveInteger, 'a positive whole number of pixels');
  if (values['max-pixels'] !== undefined) flags.maxPixels = number(values['max-pixels'], 'max-pixels', 0, positiveInteger, 'a positive whole number of pixels');
  return flags;
}

function observationRoleOf(values: EvalValues, spec: PolicySpec): 'user' | 'tool' {
  if (spec.kind === 'checkpoint' && values['run-config'] !== undefined) {
    throw new UsageError('--run-config is for openai: policies; a checkpoint reads its own run config, or the one --trainer-config names');
  }
  const observationRole = values['observation-role'] ?? (spec.kind === 'checkpoint' ? 'tool' : 'user');
  if (observationRole !== 'user' && observationRole !== 'tool') throw new UsageError(`--observation-role must be user or tool, got '${observationRole}'`);
  if (spec.kind === 'checkpoint' && observationRole !== 'tool') throw new UsageError('--observation-role: a checkpoint reads tool observations in tool turns, as it was trained');
  return observationRole;
}

/** The episodes' presentation and limits: the run config's (--run-config, or a checkpoint's own), then the flags. */
async function episodeSettingsOf(values: EvalValues, spec: PolicySpec, flags: EvalEpisodeFlags): Promise<EvalEpisodeSettings> {
  if (spec.kind === 'openai' && values['trainer-config'] !== undefined) {
    throw new UsageError('--trainer-config is for checkpoint: policies; an openai: policy takes the presentation of a run config from --run-config');
  }
  const runConfigAt = spec.kind === 'checkpoint'
    ? checkpointRunConfigPath(spec.path, values['trainer-config'])
    : values['run-config'] !== undefined ? { path: values['run-config'], required: true } : null;
  try {
    const runConfig = runConfigAt === null ? null : await readRunConfigFile(runConfigAt.path, runConfigAt.required, spec.kind === 'checkpoint' ? '--trainer-config' : '--run-config');
    return evalEpisodeSettings(runConfig, flags);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function clientSettingsOf(values: EvalValues): ClientSettings {
  const apiKeyEnv = values['api-key-env'] ?? 'OPENAI_API_KEY';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/u.test(apiKeyEnv)) {
    throw new UsageError(`--api-key-env takes the NAME of an environment variable (letters, digits, _), got '${apiKeyEnv.slice(0, 4)}…'; never put the key itself on the command line`);
  }
  return {
    apiKeyEnv,
    temperature: number(values.temperature, 'temperature', 0, (n) => n >= 0 && n <= 2, 'a number from 0 to 2'),
    maxTokens: number(values['max-tokens'], 'max-tokens', 1024, positiveInteger, 'a positive whole number'),
    timeoutMs: 1000 * number(values['timeout-s'], 'timeout-s', 120, (n) => n > 0, 'a positive number of seconds'),
    maxRetries: number(values['max-retries'], 'max-retries', 5, (n) => Number.isInteger(n) && n >= 0 && n <= 100, 'a whole number from 0 to 100'),
    backoffMs: number(values['backoff-ms'], 'backoff-ms', 1000, (n) => n >= 0, 'a non-negative number of milliseconds'),
    retryAfterMaxMs: 1000 * number(values['retry-after-max-s'], 'retry-after-max-s', 300, (n) => n >= 0, 'a non-negative number of seconds'),
  };
}

/** Runs the eval with Ctrl-C (and SIGTERM) stopping it cleanly; the exit code. */
async function runEvalRequest(request: EvalRequest, io: EvalCliStreams): Promise<number> {
  const progress = (line: string) => io.stderr.write(line + '\n');
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    if (!controller.signal.aborted) progress(`eval: ${signal}: stopping; finished tasks are kept (rerun the same command to continue)`);
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    const { settings, spec, values } = request;
    progress(
      settings.runConfigPath === null
        ? "eval: the env's own presentation (its system turn with the tool list, every image)"
        : `eval: the presentation of ${settings.runConfigPath} (policy.system_prompt, policy.view), ${settings.maxTurns} turns, ${settings.maxToolCalls} tool calls`,
    );
    if (spec.kind !== 'checkpoint') return await evaluate(request, { baseUrl: spec.baseUrl, model: spec.model }, null, null, controller.signal, progress, io);
    // A checkpoint is served by the trainer and then evaluated exactly like an openai: model.
    const step = await checkpointStep(spec.path);
    const server = await startPolicyServer(spec.path, values.python ?? defaultPython(), controller.signal, progress, values['trainer-config'] ? { trainerConfig: values['trainer-config'] } : {});
    try {
      return await evaluate(request, { baseUrl: server.url, model: server.model }, server, step, controller.signal, progress, io);
    } finally {
      await server.close();
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** Evaluates the policy at `endpoint` (`server`: a checkpoint's serve-policy), prints the summary; the exit code. */
async function evaluate(
  request: EvalRequest,
  endpoint: { baseUrl: string; model: string },
  server: PolicyServer | null,
  step: number | null,
  signal: AbortSignal,
  progress: (line: string) => void,
  io: EvalCliStreams,
): Promise<number> {
  const { spec, values, settings, client } = request;
  const checkpoint = server !== null;
  const maxTokensUsed = values['max-tokens'] === undefined && settings.maxNewTokens !== null ? settings.maxNewTokens : client.maxTokens;
  const policy = new OpenAIChatPolicy(
    {
      baseUrl: endpoint.baseUrl,
      model: endpoint.model,
      // serve-policy inherits this environment and demands the token in VISTOOL_POLICY_API_KEY when it is set.
      apiKeyEnv: checkpoint ? 'VISTOOL_POLICY_API_KEY' : client.apiKeyEnv,
      temperature: client.temperature,
      maxTokens: maxTokensUsed,
      timeoutMs: client.timeoutMs,
      maxRetries: client.maxRetries,
      backoffInitialMs: client.backoffMs,
      backoffMaxMs: Math.max(client.backoffMs, 60_000),
      retryAfterMaxMs: client.retryAfterMaxMs,
      onRetry: (e) => progress(`eval: retry ${e.attempt} in ${(e.delayMs / 1000).toFixed(1)} s: ${e.reason}`),
    },
    // The trainer's policies were trained on observations in `tool` turns.
    { observationRole: request.observationRole },
  );
  const outcome = await runChatEval({
    policy,
    // A checkpoint by its absolute path, so a resume from another folder is the same eval.
    policyName: spec.kind === 'checkpoint' ? `checkpoint:${resolve(spec.path)}` : describePolicy(spec),
    label: request.label,
    tasksFile: request.tasksFile,
    arms: request.arms,
    limit: request.limit,
    // serve-policy generates one request at a time; more in flight would only queue and time out.
    concurrency: checkpoint ? 1 : request.concurrency,
    maxTurns: settings.maxTurns,
    maxToolCalls: settings.maxToolCalls,
    presentation: settings.presentation,
    pixelBounds: settings.pixelBounds,
    temperature: client.temperature,
    maxTokens: maxTokensUsed,
    step,
    out: values.out as string,
    rewardConfig: request.rewardConfig,
    retryFailed: values['retry-failed'] === true,
    counterfactual: request.counterfactual,
    stopAfterFailures: request.stopAfterFailures,
    progress,
    signal,
  });
  io.stdout.write(formatSummaryTable(outcome.document) + '\n');
  const buckets = Object.values(outcome.document.arms);
  const failed = buckets.reduce((sum, b) => sum + (b?.all.failed ?? 0), 0);
  const results = buckets.reduce((sum, b) => sum + (b?.all.n ?? 0), 0);
  if (failed > 0) progress(`eval: ${failed} of ${results} task/arm result(s) failed (reasons in results.jsonl); rerun with --retry-failed to try them again`);
  if (outcome.interrupted) {
    progress(`eval: interrupted after ${outcome.ran} result(s) in this run; rerun the same command to continue`);
    return 130;
  }
  if (results > 0 && failed / results > request.maxFailedShare) {
    progress(`eval: FAILED: ${failed} of ${results} results failed (${((100 * failed) / results).toFixed(1)} %), more than --max-failed-share ${request.maxFailedShare}; the summary above counts only the ones that completed`);
    return 1;
  }
  return 0;
}

export const evalCommand = createEvalCommand();

/** --tasks names the file or the folder `data gen --out` wrote (which holds tasks.jsonl). */
function tasksFileOf(path: string): string {
  let info;
  try {
    info = statSync(path);
  } catch {
    throw new UsageError(`--tasks ${path} does not exist; give a tasks.jsonl or the folder \`vistool data gen --out\` wrote`);
  }
  if (!info.isDirectory()) return path;
  const inside = join(path, 'tasks.jsonl');
  if (!existsSync(inside)) throw new UsageError(`--tasks ${path} is a folder without a tasks.jsonl; give the task file itself`);
  return inside;
}
