/**
 * The LLM-as-judge client, the seed paper's second reward channel: asks an OpenAI-compatible
 * chat-completions endpoint whether a prediction matches the gold answer.
 *
 * It must never stop training. Every failure — server down, timeout, 5xx after the retries,
 * a reply that is neither <|YES|>/<|NO|> nor {"correct": bool} — becomes a verdict
 * `{status: 'error', reason}` and the rule reward carries on (VTool-R1 could not train without
 * its judge server: issue #5). `judge()` never throws and never rejects.
 *
 * Requests are bounded by a semaphore, each attempt by a timeout (AbortController), and each
 * judgement — queueing, retries and waits included — by judge.deadline_ms; 429, 5xx, timeouts and
 * network errors are retried with exponential backoff and jitter, honouring Retry-After. Verdicts are cached by (model, prompt, question, gold, prediction) and identical
 * judgements in flight are asked once. The API key is read from the environment variable NAMED in
 * the config at request time; it is never stored in the config, logged, or put in a reason.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { answerText } from './answer-match.js';
import { attemptChatCompletion, type ChatAttempt, type ChatWording, preview, retryWait } from '../core/chat-completion.js';
import type { JudgeConfig } from './config.js';
import { VerdictCache, verdictKey } from './judge-cache.js';
import { fillPrompt, loadPromptTemplate, type PromptTemplate } from './judge-prompt.js';
import { parseJudgeReply, type JudgeVerdict } from './judge-verdict.js';
import { Semaphore } from '../core/semaphore.js';

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

/** An attempt whose reply is the judge's message text. */
type JudgeAttempt = Exclude<ChatAttempt, { kind: 'reply' }> | { kind: 'reply'; text: string };

type Asked = { verdict: JudgeVerdict; reachedServer: boolean };

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
    const deadline = started + this.config.deadline_ms;
    const { verdict, reachedServer } = await this.withinDeadline(this.ask(fillPrompt(this.template, { question, gold, prediction }), deadline), deadline);
    if (reachedServer) {
      // The README's latency: judgements the server answered, not refused connections or deadlines.
      this.counters.judged++;
      this.counters.latencyTotalMs += performance.now() - started;
    }
    if (verdict.status === 'ok') await this.cache.set(key, verdict.correct, { model: this.config.model, question, gold, prediction });
    else this.counters.failures++;
    return verdict;
  }

  /**
   * `asking`, or a soft failure once `deadline` passes (the request is abandoned, its slot freed
   * when it settles): a hanging or rate-limiting judge costs a step at most judge.deadline_ms.
   */
  private async withinDeadline(asking: Promise<Asked>, deadline: number): Promise<Asked> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<Asked>((resolve) => {
      timer = setTimeout(
        () => resolve({ verdict: { status: 'error', reason: this.deadlineReason() }, reachedServer: false }),
        Math.max(0, deadline - performance.now()),
      );
    });
    try {
      return await Promise.race([asking, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  private deadlineReason(): string {
    return `no verdict within judge.deadline_ms (${this.config.deadline_ms} ms), retries and waits included`;
  }

  private async ask(prompt: string, deadline: number): Promise<Asked> {
    let reachedServer = false;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.semaphore.run(() =>
        performance.now() >= deadline ? Promise.resolve<JudgeAttempt>({ kind: 'fail', reason: this.deadlineReason(), answered: false }) : this.attemptOnce(prompt, deadline),
      );
      if (outcome.kind === 'reply') {
        const parsed = parseJudgeReply(outcome.text);
        return { verdict: 'correct' in parsed ? { status: 'ok', correct: parsed.correct, cached: false } : { status: 'error', reason: parsed.garbage }, reachedServer: true };
      }
      reachedServer ||= outcome.answered;
      if (outcome.kind === 'fail') return { verdict: { status: 'error', reason: outcome.reason }, reachedServer };
      if (attempt > this.config.max_retries) {
        return { verdict: { status: 'error', reason: `${outcome.reason}; gave up after ${attempt} attempt(s) (judge.max_retries is ${this.config.max_retries})` }, reachedServer };
      }
      const wait = retryWait(attempt, outcome.retryAfterMs, { initialMs: this.config.backoff_initial_ms, maxMs: this.config.backoff_max_ms, retryAfterMaxMs: this.config.retry_after_max_ms }, this.options.random);
      if ('tooLong' in wait) {
        return { verdict: { status: 'error', reason: `${outcome.reason}; the server asked to retry after ${wait.tooLong} ms, beyond judge.retry_after_max_ms (${this.config.retry_after_max_ms})` }, reachedServer };
      }
      const delayMs = wait.delayMs;
      if (performance.now() + delayMs >= deadline) {
        return { verdict: { status: 'error', reason: `${outcome.reason}; the next retry (in ${Math.round(delayMs)} ms) would pass judge.deadline_ms (${this.config.deadline_ms} ms)` }, reachedServer };
      }
      this.counters.retries++;
      this.options.onRetry?.({ attempt, delayMs, reason: outcome.reason });
      await sleep(delayMs);
    }
  }

  private async attemptOnce(prompt: string, deadline: number): Promise<JudgeAttempt> {
    const endpoint = this.endpoint;
    const config = this.config;
    const timeoutMs = Math.max(1, Math.min(config.timeout_ms, deadline - performance.now()));
    const wording: ChatWording = {
      timedOut: (ms) => `judge request to ${endpoint} timed out after ${Math.round(ms)} ms (judge.timeout_ms ${config.timeout_ms}, judge.deadline_ms ${config.deadline_ms})`,
      unreachable: (detail) => `judge unreachable at ${endpoint}: ${detail}`,
      busy: (status, body) => `judge answered HTTP ${status}: ${body}`,
      refused: (status, body) => {
        const hint = status === 401 || status === 403 ? ` (check the key in the environment variable ${config.api_key_env})` : status === 404 ? ' (check judge.base_url and judge.model)' : '';
        return `judge answered HTTP ${status}${hint}: ${body}`;
      },
      notJson: (body) => `judge answered garbage: the body is not JSON: "${body}"`,
    };
    this.counters.requests++;
    const outcome = await attemptChatCompletion({
      endpoint,
      body: { model: config.model, messages: [{ role: 'user', content: prompt }], temperature: config.temperature, max_tokens: config.max_tokens },
      apiKey: (this.options.env ?? process.env)[config.api_key_env],
      timeoutMs,
      wording,
    });
    if (outcome.kind !== 'reply') return outcome;
    const choices = (outcome.body as { choices?: unknown } | null)?.choices;
    const content = Array.isArray(choices) ? (choices[0] as { message?: { content?: unknown } } | undefined)?.message?.content : undefined;
    if (typeof content !== 'string') return { kind: 'fail', reason: `judge answered garbage: no choices[0].message.content string in "${preview(outcome.text)}"`, answered: true };
    return { kind: 'reply', text: content };
  }
}
