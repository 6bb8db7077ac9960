/**
 * The LLM-as-judge client, the seed paper's second reward channel: asks an OpenAI-compatible
 * chat-completions endpoint whether a prediction matches the gold answer.
 *
 * It must never stop training. Every failure — server down, timeout, 5xx after the retries,
 * a reply that is neither <|YES|>/<|NO|> nor {"correct": bool} — becomes a verdict
 * `{status: 'error', reason}` and the rule reward carries on (VTool-R1 could not train without
 * its judge server: issue #5). `judge()` never throws and never rejects.
 *
 * Requests are bounded by a semaphore, each attempt by a timeout (AbortController); 429, 5xx,
 * timeouts and network errors are retried with exponential backoff and jitter, honouring
 * Retry-After. Verdicts are cached by (model, prompt, question, gold, prediction) and identical
 * judgements in flight are asked once. The API key is read from the environment variable NAMED in
 * the config at request time; it is never stored in the config, logged, or put in a reason.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { answerText } from './answer.js';
import { backoffDelay, retryAfterMs } from './backoff.js';
import type { JudgeConfig } from './config.js';
import { VerdictCache, verdictKey } from './judge-cache.js';
import { fillPrompt, loadPromptTemplate, type PromptTemplate } from './judge-prompt.js';
import { parseJudgeReply, type JudgeVerdict } from './judge-verdict.js';
import { Semaphore } from './semaphore.js';

export interface JudgeRequest {
  question: string;
  gold: string | readonly string[];
  prediction: string | readonly string[];
}

export interface RetryEvent {
  /** The attempt that failed, from 1. */
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface JudgeClientOptions {
  /** Where the API key variable is looked up; process.env by default. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Jitter source in [0, 1); Math.random by default. */
  random?: () => number;
  /** Called before each retry (for logs). */
  onRetry?: (event: RetryEvent) => void;
  /** A template already loaded; otherwise config.prompt_file (or the shipped prompt) is read now. */
  template?: PromptTemplate;
}

type Attempt = { kind: 'reply'; text: string } | { kind: 'retry'; reason: string; retryAfterMs: number | null } | { kind: 'fail'; reason: string };

function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: string }).code;
    return code ? `${code} (${cause.message})` : cause.message;
  }
  return err.message;
}

function preview(body: string): string {
  const oneLine = body.replace(/\s+/gu, ' ').trim();
  return oneLine.length > 160 ? `${oneLine.slice(0, 157)}...` : oneLine;
}

export class JudgeClient {
  readonly template: PromptTemplate;
  private readonly semaphore: Semaphore;
  private readonly cache: VerdictCache;
  private readonly pending = new Map<string, Promise<JudgeVerdict>>();
  private readonly endpoint: string;
  private readonly counters = { requests: 0, retries: 0, failures: 0, cacheHits: 0, judged: 0, latencyTotalMs: 0 };

  constructor(
    private readonly config: JudgeConfig,
    private readonly options: JudgeClientOptions = {},
  ) {
    this.template = options.template ?? loadPromptTemplate(config.prompt_file);
    this.semaphore = new Semaphore(config.concurrency);
    this.cache = new VerdictCache(config.cache_size, config.cache_file);
    this.endpoint = `${config.base_url.replace(/\/+$/u, '')}/chat/completions`;
  }

  /**
   * Metrics in the run's naming: `judge/requests` (HTTP attempts, retries included),
   * `judge/retries`, `judge/failures` (judgements that fell back to the rule), `judge/cache_hits`,
   * `judge/latency_ms` (mean time of the judgements that went to the server). Cumulative.
   */
  metrics(): Record<string, number> {
    const c = this.counters;
    return {
      'judge/requests': c.requests,
      'judge/retries': c.retries,
      'judge/failures': c.failures,
      'judge/cache_hits': c.cacheHits,
      'judge/latency_ms': c.judged === 0 ? 0 : c.latencyTotalMs / c.judged,
    };
  }

  /** Resolves when every verdict so far is written to the cache file. */
  flush(): Promise<void> {
    return this.cache.flush();
  }

  async judge(request: JudgeRequest): Promise<JudgeVerdict> {
    try {
      const gold = answerText(request.gold);
      const prediction = answerText(request.prediction);
      const key = verdictKey({ model: this.config.model, promptHash: this.template.hash, question: request.question, gold, prediction });
      const cached = await this.cache.get(key);
      if (cached !== undefined) {
        this.counters.cacheHits++;
        return { status: 'ok', correct: cached, cached: true };
      }
      const inFlight = this.pending.get(key);
      if (inFlight) {
        this.counters.cacheHits++;
        const shared = await inFlight;
        return shared.status === 'ok' ? { ...shared, cached: true } : shared;
      }
      const asking = this.askAndRecord(key, request.question, gold, prediction);
      this.pending.set(key, asking);
      try {
        return await asking;
      } finally {
        this.pending.delete(key);
      }
    } catch (err) {
      this.counters.failures++;
      return { status: 'error', reason: `judge client error: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  private async askAndRecord(key: string, question: string, gold: string, prediction: string): Promise<JudgeVerdict> {
    const started = performance.now();
    const verdict = await this.ask(fillPrompt(this.template, { question, gold, prediction }));
    this.counters.judged++;
    this.counters.latencyTotalMs += performance.now() - started;
    if (verdict.status === 'ok') await this.cache.set(key, verdict.correct, { model: this.config.model, question, gold, prediction });
    else this.counters.failures++;
    return verdict;
  }

  private async ask(prompt: string): Promise<JudgeVerdict> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.semaphore.run(() => this.attemptOnce(prompt));
      if (outcome.kind === 'reply') {
        const parsed = parseJudgeReply(outcome.text);
        return 'correct' in parsed ? { status: 'ok', correct: parsed.correct, cached: false } : { status: 'error', reason: parsed.garbage };
      }
      if (outcome.kind === 'fail') return { status: 'error', reason: outcome.reason };
      if (attempt > this.config.max_retries) {
        return { status: 'error', reason: `${outcome.reason}; gave up after ${attempt} attempt(s) (judge.max_retries is ${this.config.max_retries})` };
      }
      let delayMs = backoffDelay(attempt - 1, { initialMs: this.config.backoff_initial_ms, maxMs: this.config.backoff_max_ms }, this.options.random);
      if (outcome.retryAfterMs !== null) {
        if (outcome.retryAfterMs > this.config.retry_after_max_ms) {
          return {
            status: 'error',
            reason: `${outcome.reason}; the server asked to retry after ${outcome.retryAfterMs} ms, beyond judge.retry_after_max_ms (${this.config.retry_after_max_ms})`,
          };
        }
        delayMs = outcome.retryAfterMs;
      }
      this.counters.retries++;
      this.options.onRetry?.({ attempt, delayMs, reason: outcome.reason });
      await sleep(delayMs);
    }
  }

  private async attemptOnce(prompt: string): Promise<Attempt> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    const key = (this.options.env ?? process.env)[this.config.api_key_env];
    if (key) headers.authorization = `Bearer ${key}`;
    const body = JSON.stringify({
      model: this.config.model,
      messages: [{ role: 'user', content: prompt }],
      temperature: this.config.temperature,
      max_tokens: this.config.max_tokens,
    });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.config.timeout_ms);
    this.counters.requests++;
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      // The timeout covers the body too: a server that sends headers and then stalls is a timeout.
      const response = await fetch(this.endpoint, { method: 'POST', headers, body, signal: controller.signal });
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (err) {
      const reason = controller.signal.aborted
        ? `judge request to ${this.endpoint} timed out after ${this.config.timeout_ms} ms (judge.timeout_ms)`
        : `judge unreachable at ${this.endpoint}: ${describeNetworkError(err)}`;
      return { kind: 'retry', reason, retryAfterMs: null };
    } finally {
      clearTimeout(timer);
    }
    if (status === 429 || status === 408 || status >= 500) {
      return { kind: 'retry', reason: `judge answered HTTP ${status}: ${preview(text)}`, retryAfterMs: retryAfterMs(retryAfter) };
    }
    if (status < 200 || status >= 300) {
      const hint = status === 401 || status === 403 ? ` (check the key in the environment variable ${this.config.api_key_env})` : status === 404 ? ' (check judge.base_url and judge.model)' : '';
      return { kind: 'fail', reason: `judge answered HTTP ${status}${hint}: ${preview(text)}` };
    }
    return this.replyText(text);
  }

  private replyText(body: string): Attempt {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { kind: 'fail', reason: `judge answered garbage: the body is not JSON: "${preview(body)}"` };
    }
    const choices = (parsed as { choices?: unknown } | null)?.choices;
    const content = Array.isArray(choices) ? (choices[0] as { message?: { content?: unknown } } | undefined)?.message?.content : undefined;
    if (typeof content !== 'string') {
      return { kind: 'fail', reason: `judge answered garbage: no choices[0].message.content string in "${preview(body)}"` };
    }
    return { kind: 'reply', text: content };
  }
}
