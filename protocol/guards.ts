/**
 * Small structural checks for data that crosses a trust boundary (a message from a webview, a
 * line of a run file). They only look at values; they never evaluate or coerce them.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isString(value: unknown): value is string {
  return typeof value === 'string';
}

export function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** Whether `value` is an object whose listed keys pass their checks (other keys are allowed). */
export function hasFields(value: unknown, checks: Record<string, (field: unknown) => boolean>): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  return Object.entries(checks).every(([key, check]) => check(value[key]));
}

/** A check that also accepts `undefined` (an optional field). */
export function optional(check: (field: unknown) => boolean): (field: unknown) => boolean {
  return (field) => field === undefined || check(field);
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isString);
}

export function isNumberInRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max;
}
