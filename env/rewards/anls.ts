/**
 * Average Normalised Levenshtein Similarity (ANLS, DocVQA) for long free-text answers:
 * similarity = 1 − edit distance / longer length, and 0 when the distance ratio reaches the
 * threshold τ (0.5 in the DocVQA definition), so a half-wrong string earns nothing.
 * Inputs are compared as given: callers normalise first.
 */

/** Levenshtein distance over code points, two rows of memory. */
export function levenshtein(a: string, b: string): number {
  const s = [...a];
  const t = [...b];
  if (s.length === 0) return t.length;
  if (t.length === 0) return s.length;
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  let current = new Array<number>(t.length + 1).fill(0);
  for (let i = 1; i <= s.length; i++) {
    current[0] = i;
    for (let j = 1; j <= t.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (s[i - 1] === t[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    [previous, current] = [current, previous];
  }
  return previous[t.length] ?? 0;
}

/** ANLS of one prediction against one gold string, in [0, 1]. */
export function anls(prediction: string, gold: string, threshold = 0.5): number {
  const longer = Math.max([...prediction].length, [...gold].length);
  if (longer === 0) return 1;
  const distance = levenshtein(prediction, gold) / longer;
  return distance < threshold ? 1 - distance : 0;
}
