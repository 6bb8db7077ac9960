/** What a parsed tool call's arguments must be: plain JSON data (used by the property test and bench/fuzz.ts). */
/** True when `value` is JSON data all the way down: no functions, no prototype objects, no cycles. */
export function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.keys(value).every((key) => isPlainJson((value as Record<string, unknown>)[key]));
}
