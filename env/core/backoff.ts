/**
 * When to try a failed HTTP request again (the LLM judge, the eval chat client): exponential backoff with "equal jitter" (half the
 * delay fixed, half random, so retries from many workers spread out but never come back at once),
 * and the server's own Retry-After when it sends one.
 */

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

/** Delay before retry number `retry` (0 for the first retry). `random` returns [0, 1). */
export function backoffDelay(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** retry);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * Milliseconds a Retry-After header asks for: delta-seconds ("2", "0.5") or an HTTP date.
 * Null when absent or unreadable (the caller then uses its own backoff).
 */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+(?:\.\d+)?$/u.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}
