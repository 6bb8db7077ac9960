/**
 * Min/max downsampling of a series for a chart of known width, so a panel is sent about one
 * point per pixel column however long the run is, and still sees every spike.
 *
 * The rule, which the tests recompute on their own: points [from, to) of a series sorted by x
 * are left as they are when there are at most `maxPoints` of them. Otherwise the x span from
 * the first point to the last is cut into B = ⌊(maxPoints − 2) / 2⌋ buckets of equal width
 * (bucket ⌊(x − x_first) / span · B⌋, the last x in bucket B − 1; by position when every x is
 * the same), and what is kept is the first point, the last point, and of the points between them
 * each bucket's lowest and highest (the earliest on ties), all in x order: at most maxPoints. LTTB (what Chart.js's decimation offers) picks one point per bucket
 * by area and can drop a one-step spike; an RL curve's spikes are what a user looks for.
 * (Equal-x buckets, not equal counts, because a bucket is a pixel column: wall time is uneven.)
 *
 * In protocol/ because both sides shape series (series-shape.ts): the panel host
 * (env/runs/metric-series.ts) and a static bundle's page (webview/shared/static-backend.ts). Pure.
 */

/** Indices into xs/ys of the points to draw, ascending. */
export function minMaxIndices(xs: ArrayLike<number>, ys: ArrayLike<number>, from: number, to: number, maxPoints: number): number[] {
  const count = to - from;
  if (count <= 0) return [];
  if (count <= maxPoints) return Array.from({ length: count }, (_, i) => from + i);
  const buckets = Math.max(1, Math.floor((maxPoints - 2) / 2));
  const first = xs[from] as number;
  const span = (xs[to - 1] as number) - first;
  const lows = new Int32Array(buckets).fill(-1);
  const highs = new Int32Array(buckets).fill(-1);
  for (let i = from + 1; i < to - 1; i++) {
    const b = span > 0 ? Math.min(buckets - 1, Math.floor((((xs[i] as number) - first) / span) * buckets)) : Math.min(buckets - 1, Math.floor(((i - from) / count) * buckets));
    const y = ys[i] as number;
    const low = lows[b] as number;
    if (low === -1 || y < (ys[low] as number)) lows[b] = i;
    const high = highs[b] as number;
    if (high === -1 || y > (ys[high] as number)) highs[b] = i;
  }
  const kept = [from];
  for (let b = 0; b < buckets; b++) {
    const low = lows[b] as number;
    const high = highs[b] as number;
    if (low === -1) continue;
    if (low === high) kept.push(low);
    else kept.push(Math.min(low, high), Math.max(low, high));
  }
  kept.push(to - 1);
  return kept;
}
