/**
 * The policy a panel host replays training rollouts against (the viewer's "replay without the
 * tool's result"): an OpenAI-compatible chat endpoint, named as `vistool eval --policy` names one,
 * `openai:<base_url>#<model>` — typically a checkpoint behind the trainer's
 * `python -m vistool_trainer serve-policy`, whose `listening` line gives both.
 *
 * Checked before anything is sent: a URL (http or https, no credentials in it), and on this
 * machine unless the person allows otherwise, because a replay sends the rollout's question,
 * images and the model's own turns to it. `checkpoint:` is refused with what to do instead: a
 * viewer does not start and stop a trainer process behind a button.
 */
import { parsePolicySpec, PolicySpecError } from '../eval/policy-spec.js';

export interface ReplayPolicy {
  baseUrl: string;
  model: string;
  /**
   * The role tool observations are sent with. 'tool' (the default) is what the trainer's policies
   * were trained on and serve-policy reads; 'user' for servers that refuse images in tool turns.
   */
  observationRole: 'user' | 'tool';
  /** NAME of the environment variable holding the bearer token (serve-policy's VISTOOL_POLICY_API_KEY by default). */
  apiKeyEnv: string;
  /** How the policy is shown to the person: `openai:<base_url>#<model>`, never a key. */
  description: string;
}

/** What a host knows about replays: a policy to use, or why there is none (shown on the disabled button). */
export type ReplayPolicyState = { policy: ReplayPolicy } | { policy: null; reason: string };

export class ReplayPolicyError extends Error {
  override name = 'ReplayPolicyError';
}

export interface ReplayPolicyOptions {
  /** Allow an endpoint on another machine (the rollouts' images and text are sent to it). */
  allowRemote?: boolean;
  observationRole?: string;
  apiKeyEnv?: string;
  /** How the host's setting is called in messages: `--policy` for `vistool view`, the VS Code setting's id there. */
  settingName?: string;
  /** How the host's switch for remote policies is called in messages. */
  allowRemoteName?: string;
}

export const DEFAULT_REPLAY_API_KEY_ENV = 'VISTOOL_POLICY_API_KEY';

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

/** Whether a URL's host is this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/u.test(hostname);
}

/** The replay policy named by `text`; a ReplayPolicyError that says what to write instead. */
export function parseReplayPolicy(text: string, options: ReplayPolicyOptions = {}): ReplayPolicy {
  const setting = options.settingName ?? '--policy';
  let spec;
  try {
    spec = parsePolicySpec(text.trim());
  } catch (err) {
    if (err instanceof PolicySpecError) throw new ReplayPolicyError(err.message.replace(/--policy/gu, setting));
    throw err;
  }
  if (spec.kind === 'checkpoint') {
    throw new ReplayPolicyError(
      `${setting} '${text}': a replay asks a served policy; serve the checkpoint with \`python -m vistool_trainer serve-policy --checkpoint ${spec.path} --port 0\` and give the URL and model of its "listening" line as openai:<url>#<model>`,
    );
  }
  const hostname = new URL(spec.baseUrl).hostname;
  if (!options.allowRemote && !isLoopbackHost(hostname)) {
    throw new ReplayPolicyError(
      `${setting} '${text}': ${hostname} is not this machine, and a replay sends the rollout's question, images and turns to it; use a policy served on 127.0.0.1 (serve-policy listens there), or allow remote policies explicitly (${options.allowRemoteName ?? '--allow-remote-policy'})`,
    );
  }
  const observationRole = options.observationRole ?? 'tool';
  if (observationRole !== 'user' && observationRole !== 'tool') throw new ReplayPolicyError(`the observation role must be user or tool, got '${observationRole}'`);
  const apiKeyEnv = options.apiKeyEnv ?? DEFAULT_REPLAY_API_KEY_ENV;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/u.test(apiKeyEnv)) {
    throw new ReplayPolicyError(`the API key setting takes the NAME of an environment variable (letters, digits, _), got '${apiKeyEnv.slice(0, 4)}…'; never put the key itself there`);
  }
  return { baseUrl: spec.baseUrl, model: spec.model, observationRole, apiKeyEnv, description: `openai:${spec.baseUrl}#${spec.model}` };
}

/** A host's state from its setting: unset and invalid settings become the reason the button is disabled. */
export function replayPolicyState(text: string | undefined, options: ReplayPolicyOptions = {}): ReplayPolicyState {
  const setting = options.settingName ?? '--policy';
  if (text === undefined || text.trim() === '') {
    return { policy: null, reason: `no policy to replay with: give ${setting} openai:<url>#<model> (a checkpoint served by \`python -m vistool_trainer serve-policy\`, or any OpenAI-compatible server on this machine)` };
  }
  try {
    return { policy: parseReplayPolicy(text, options) };
  } catch (err) {
    if (err instanceof ReplayPolicyError) return { policy: null, reason: err.message };
    throw err;
  }
}
