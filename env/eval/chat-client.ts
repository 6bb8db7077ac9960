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
import { attemptChatCompletion, type ChatWording, preview, retryWait } from '../core/chat-completion.js';
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
    const key = (o.env ?? process.env)[o.apiKeyEnv];
    const endpoint = this.endpoint;
    const wording: ChatWording = {
      timedOut: (ms) => `request to ${endpoint} timed out after ${ms} ms (--timeout-s)`,
      unreachable: (detail) => `policy server unreachable at ${endpoint}: ${detail}`,
      busy: (status, body) => `${endpoint} answered ${status}: ${body}`,
      refused: (status, body, keySent) =>
        status === 401 || status === 403
          ? `${endpoint} answered ${status}: ${keySent ? `the key in $${o.apiKeyEnv} was refused` : `no key was sent: set $${o.apiKeyEnv} (or name another variable with --api-key-env)`}`
          : `${endpoint} answered ${status}: ${body} (check the model name '${o.model}' and the request options)`,
      notJson: (body) => `${endpoint} answered 200 with a body that is not JSON: ${body}`,
    };
    const request = { endpoint, body: { model: o.model, messages, temperature: o.temperature, max_tokens: o.maxTokens }, apiKey: key, timeoutMs: o.timeoutMs, wording, ...(signal ? { signal } : {}) };
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      usage.requests++;
      const outcome = await attemptChatCompletion(request);
      if (outcome.kind === 'reply') {
        const reply = replyText(outcome.body);
        if (reply === null) throw new PolicyRequestError(`${endpoint} answered 200 but not with a chat completion (no choices[0].message): ${preview(outcome.text)}`);
        usage.promptTokens += tokenCount(outcome.body, 'prompt_tokens');
        usage.completionTokens += tokenCount(outcome.body, 'completion_tokens');
        return reply;
      }
      if (outcome.kind === 'fail') throw new PolicyRequestError(outcome.reason);
      if (attempt > o.maxRetries) throw new PolicyRequestError(`${outcome.reason}; gave up after ${attempt} attempt(s) (--max-retries ${o.maxRetries})`);
      const wait = retryWait(attempt, outcome.retryAfterMs, { initialMs: o.backoffInitialMs, maxMs: o.backoffMaxMs, retryAfterMaxMs: o.retryAfterMaxMs }, o.random);
      if ('tooLong' in wait) throw new PolicyRequestError(`${outcome.reason}; the server asked to retry after ${wait.tooLong} ms, longer than the ${o.retryAfterMaxMs} ms this eval waits (--retry-after-max-s)`);
      usage.retries++;
      o.onRetry?.({ attempt, delayMs: wait.delayMs, reason: outcome.reason });
      await sleep(wait.delayMs, undefined, signal ? { signal } : undefined);
    }
  }
}
