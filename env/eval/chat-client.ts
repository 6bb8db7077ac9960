/**
 * A client for one model on an OpenAI-compatible chat-completions server (vLLM, SGLang, hosted
 * APIs): sends a conversation, returns the reply text.
 *
 * Rate limits and failures: 429, 408, 5xx, timeouts and network errors are retried with
 * exponential backoff and jitter, honouring Retry-After (seconds or a date) up to a ceiling;
 * other 4xx and bodies that are not chat completions fail at once. Every failure is a
 * `PolicyRequestError` whose message says what happened, where, and what to change.
 *
 * The API key is read from the environment variable NAMED by the caller at request time; it is
 * never stored, logged or written into an error message.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay, retryAfterMs } from '../core/backoff.js';
import { replyText, type OpenAIMessage } from './openai-messages.js';

export interface ChatClientOptions {
  baseUrl: string;
  model: string;
  /** NAME of the environment variable with the API key; unset or empty: no Authorization header. */
  apiKeyEnv: string;
  temperature: number;
  maxTokens: number;
  /** Per attempt, covering the response body too. */
  timeoutMs: number;
  /** Retries after the first attempt. */
  maxRetries: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A Retry-After longer than this is not waited for: the request fails instead. */
  retryAfterMaxMs: number;
  env?: Readonly<Record<string, string | undefined>>;
  random?: () => number;
  onRetry?: (event: { attempt: number; delayMs: number; reason: string }) => void;
}

export interface ChatUsage {
  requests: number;
  retries: number;
  promptTokens: number;
  completionTokens: number;
}

export class PolicyRequestError extends Error {
  override name = 'PolicyRequestError';
}

type Attempt =
  | { kind: 'reply'; text: string; promptTokens: number; completionTokens: number }
  | { kind: 'retry'; reason: string; retryAfterMs: number | null }
  | { kind: 'fail'; reason: string };

const RETRYABLE_STATUS = (status: number): boolean => status === 429 || status === 408 || status >= 500;

function preview(text: string): string {
  const oneLine = text.replace(/\s+/gu, ' ').trim();
  return oneLine.length > 160 ? `${oneLine.slice(0, 157)}...` : oneLine;
}

function networkReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: string }).code;
    return code ? `${code} (${cause.message})` : cause.message;
  }
  return err.message;
}

function tokenCount(body: unknown, field: 'prompt_tokens' | 'completion_tokens'): number {
  const usage = typeof body === 'object' && body !== null ? (body as { usage?: Record<string, unknown> }).usage : undefined;
  const value = usage?.[field];
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export class ChatClient {
  readonly endpoint: string;

  constructor(private readonly options: ChatClientOptions) {
    this.endpoint = `${options.baseUrl.replace(/\/+$/u, '')}/chat/completions`;
  }

  /** The reply text; `usage` is updated with every attempt, failed or not. Throws PolicyRequestError. */
  async complete(messages: OpenAIMessage[], usage: ChatUsage, signal?: AbortSignal): Promise<string> {
    const o = this.options;
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const outcome = await this.attemptOnce(messages, usage, signal);
      if (outcome.kind === 'reply') {
        usage.promptTokens += outcome.promptTokens;
        usage.completionTokens += outcome.completionTokens;
        return outcome.text;
      }
      if (outcome.kind === 'fail') throw new PolicyRequestError(outcome.reason);
      if (attempt > o.maxRetries) throw new PolicyRequestError(`${outcome.reason}; gave up after ${attempt} attempt(s) (--max-retries ${o.maxRetries})`);
      let delayMs = backoffDelay(attempt - 1, { initialMs: o.backoffInitialMs, maxMs: o.backoffMaxMs }, o.random);
      if (outcome.retryAfterMs !== null) {
        if (outcome.retryAfterMs > o.retryAfterMaxMs) {
          throw new PolicyRequestError(`${outcome.reason}; the server asked to retry after ${outcome.retryAfterMs} ms, longer than the ${o.retryAfterMaxMs} ms this eval waits (--retry-after-max-s)`);
        }
        delayMs = outcome.retryAfterMs;
      }
      usage.retries++;
      o.onRetry?.({ attempt, delayMs, reason: outcome.reason });
      await sleep(delayMs, undefined, signal ? { signal } : undefined);
    }
  }

  private async attemptOnce(messages: OpenAIMessage[], usage: ChatUsage, signal?: AbortSignal): Promise<Attempt> {
    const o = this.options;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    const key = (o.env ?? process.env)[o.apiKeyEnv];
    if (key) headers.authorization = `Bearer ${key}`;
    const body = JSON.stringify({ model: o.model, messages, temperature: o.temperature, max_tokens: o.maxTokens });
    const timeout = AbortSignal.timeout(o.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    usage.requests++;
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const response = await fetch(this.endpoint, { method: 'POST', headers, body, signal: combined });
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (err) {
      signal?.throwIfAborted();
      const reason = timeout.aborted
        ? `request to ${this.endpoint} timed out after ${o.timeoutMs} ms (--timeout-s)`
        : `policy server unreachable at ${this.endpoint}: ${networkReason(err)}`;
      return { kind: 'retry', reason, retryAfterMs: null };
    }
    if (status === 401 || status === 403) {
      const hint = key ? `the key in $${o.apiKeyEnv} was refused` : `no key was sent: set $${o.apiKeyEnv} (or name another variable with --api-key-env)`;
      return { kind: 'fail', reason: `${this.endpoint} answered ${status}: ${hint}` };
    }
    if (RETRYABLE_STATUS(status)) return { kind: 'retry', reason: `${this.endpoint} answered ${status}: ${preview(text)}`, retryAfterMs: retryAfterMs(retryAfter) };
    if (status < 200 || status >= 300) {
      return { kind: 'fail', reason: `${this.endpoint} answered ${status}: ${preview(text)} (check the model name '${o.model}' and the request options)` };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { kind: 'fail', reason: `${this.endpoint} answered 200 with a body that is not JSON: ${preview(text)}` };
    }
    const reply = replyText(parsed);
    if (reply === null) return { kind: 'fail', reason: `${this.endpoint} answered 200 but not with a chat completion (no choices[0].message): ${preview(text)}` };
    return { kind: 'reply', text: reply, promptTokens: tokenCount(parsed, 'prompt_tokens'), completionTokens: tokenCount(parsed, 'completion_tokens') };
  }
}
