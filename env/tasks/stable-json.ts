/**
 * JSON with object keys in sorted order: a canonical text for comparing values whose key order
 * may differ (a record read back from disk against one rebuilt in memory). Never used to write
 * files: records are written with their own fixed key order.
 */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}
