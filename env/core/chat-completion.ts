/**
 * One POST to an OpenAI-compatible `/chat/completions` endpoint, classified: a reply (status 2xx
 * with a JSON body), a failure worth retrying (429, 408, 5xx, a timeout, a network error, with
 * the server's Retry-After), or one that is not (other 4xx, a body that is not JSON). Shared by
 * the eval's policy client (env/eval/chat-client.ts) and the LLM judge (env/rewards/judge.ts):
 * they differ in what a failure becomes (an error thrown, a soft verdict) and in their retry
 * budgets, not in how one request goes.
 *
 * The timeout covers the body too: a server that sends headers and then stalls is a timeout.
 * The caller's words go into every reason (`ChatWording`), so a message names the setting to
 * change (--timeout-s, judge.timeout_ms) in the caller's vocabulary.
 */
import { backoffDelay, type BackoffPolicy, retryAfterMs } from './backoff.js';

export interface ChatWording {
  timedOut(timeoutMs: number): string;
  unreachable(detail: string): string;
  /** A status worth retrying (429, 408, 5xx). */
  busy(status: number, body: string): string;
  /** Any other non-2xx status; `keySent` says whether an Authorization header went out. */
  refused(status: number, body: string, keySent: boolean): string;
  notJson(body: string): string;
}

export interface ChatCompletionRequest {
  endpoint: string;
  /** The request body (model, messages, temperature, max_tokens). */
  body: Record<string, unknown>;
  /** Sent as a bearer token when non-empty; never put in a reason. */
  apiKey: string | undefined;
  timeoutMs: number;
  signal?: AbortSignal;
  wording: ChatWording;
}

/** `answered`: the server took the request (a status, or a timeout after connecting), not a refused connection. */
export type ChatAttempt =
  | { kind: 'reply'; body: unknown; text: string }
  | { kind: 'retry'; reason: string; retryAfterMs: number | null; answered: boolean }
  | { kind: 'fail'; reason: string; answered: boolean };

function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

/** A body on one line, cut to 160 characters, for a reason. */
export function preview(text: string): string {
  const oneLine = text.replace(/\s+/gu, ' ').trim();
  return oneLine.length > 160 ? `${oneLine.slice(0, 157)}...` : oneLine;
}

/** What went wrong on the network, from fetch's error and its cause (ECONNREFUSED, ENOTFOUND, ...). */
function networkReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: string }).code;
    return code ? `${code} (${cause.message})` : cause.message;
  }
  return err.message;
}

export async function attemptChatCompletion(request: ChatCompletionRequest): Promise<ChatAttempt> {
  const { wording } = request;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (request.apiKey) headers.authorization = `Bearer ${request.apiKey}`;
  // AbortSignal.timeout takes whole milliseconds; a deadline-bounded timeout is rarely whole.
  const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(request.timeoutMs)));
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  let status: number;
  let text: string;
  let retryAfter: string | null;
  try {
    const response = await fetch(request.endpoint, { method: 'POST', headers, body: JSON.stringify(request.body), signal });
    status = response.status;
    retryAfter = response.headers.get('retry-after');
    text = await response.text();
  } catch (err) {
    // The caller's own abort is not a failure of the server: it propagates.
    request.signal?.throwIfAborted();
    if (timeout.aborted) return { kind: 'retry', reason: wording.timedOut(request.timeoutMs), retryAfterMs: null, answered: true };
    return { kind: 'retry', reason: wording.unreachable(networkReason(err)), retryAfterMs: null, answered: false };
  }
  if (isRetryableStatus(status)) return { kind: 'retry', reason: wording.busy(status, preview(text)), retryAfterMs: retryAfterMs(retryAfter), answered: true };
  if (status < 200 || status >= 300) return { kind: 'fail', reason: wording.refused(status, preview(text), Boolean(request.apiKey)), answered: true };
  try {
    return { kind: 'reply', body: JSON.parse(text) as unknown, text };
  } catch {
    return { kind: 'fail', reason: wording.notJson(preview(text)), answered: true };
  }
}

export interface RetryPolicy extends BackoffPolicy {
  /** A Retry-After longer than this is not waited for. */
  retryAfterMaxMs: number;
}

/**
 * How long to wait before retry number `attempt` (the attempt that failed, from 1): the server's
 * Retry-After when it sent one, else backoff with jitter. `tooLong` when the server asks for more
 * than the policy waits.
 */
export function retryWait(attempt: number, serverAsksMs: number | null, policy: RetryPolicy, random?: () => number): { delayMs: number } | { tooLong: number } {
  if (serverAsksMs !== null) return serverAsksMs > policy.retryAfterMaxMs ? { tooLong: serverAsksMs } : { delayMs: serverAsksMs };
  return { delayMs: backoffDelay(attempt - 1, policy, random) };
}
