/**
 * Tick labels for a chart axis, chosen for the axis as a whole rather than tick by tick: one
 * notation and one number of decimals for every tick, so an axis never reads "80000" next to
 * "1.00e+5". Steps above ten thousand read as 20k, 40k, … 1.2M; tiny or huge values share one
 * exponent style; decimals are as many as the most exact tick needs (0.25, 0.50, 0.75);
 * durations all take h:mm:ss once the axis passes an hour. Pure.
 */

const UNITS: [number, string][] = [
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

const MOST_DIGITS = 6;

/** The fewest digits d (0 to 6) with which `write(v, d)` gives every value back, up to rounding noise. */
function digitsFor(values: readonly number[], write: (value: number, digits: number) => string): number {
  for (let d = 0; d < MOST_DIGITS; d++) {
    if (values.every((v) => Math.abs(Number(write(v, d)) - v) <= 1e-9 * Math.max(Math.abs(v), Number.MIN_VALUE))) return d;
  }
  return MOST_DIGITS;
}

/** Labels for numeric ticks, all in one notation with one number of digits. */
export function formatTicks(values: readonly number[]): string[] {
  const finite = values.filter((v) => Number.isFinite(v));
  const largest = Math.max(0, ...finite.map((v) => Math.abs(v)));
  if (largest === 0) return values.map(() => '0');
  const nonZero = finite.filter((v) => v !== 0);
  if (largest >= 1e15 || largest < 1e-3) {
    const digits = digitsFor(nonZero, (v, d) => v.toExponential(d));
    return values.map((v) => (v === 0 ? '0' : v.toExponential(digits)));
  }
  const [unit, suffix] = largest >= 1e4 ? (UNITS.find(([size]) => largest >= size) ?? [1, '']) : [1, ''];
  const decimals = digitsFor(nonZero.map((v) => v / unit), (v, d) => v.toFixed(d));
  return values.map((v) => (v === 0 ? '0' : `${(v / unit).toFixed(decimals)}${suffix}`));
}

/** Labels for elapsed seconds: m:ss under an hour for every tick, h:mm:ss for every tick above. */
export function formatDurationTicks(values: readonly number[]): string[] {
  const hours = values.some((v) => Math.round(Math.abs(v)) >= 3600);
  return values.map((v) => {
    const s = Math.max(0, Math.round(v));
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const rest = String(s % 60).padStart(2, '0');
    return hours ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${Math.floor(s / 60)}:${rest}`;
  });
}

/** Labels for a whole axis at once (Chart.js asks tick by tick; the notation must be shared). */
export function tickLabeller(format: (values: number[]) => string[]): (value: number | string, index: number, ticks: { value: number }[]) => string {
  let last: { value: number }[] | null = null;
  let labels: string[] = [];
  return (value, index, ticks) => {
    if (ticks !== last) {
      last = ticks;
      labels = format(ticks.map((t) => t.value));
    }
    return labels[index] ?? String(value);
  };
}

/**
 * Labels for a log-scale axis (TensorBoard's and W&B's habit): only the powers of ten are labelled,
 * the ticks between them (2, 3, … 9 × 10^k) are left blank. Powers from 0.001 to 10k read as plain
 * numbers (0.01, 1, 100, 10k), the others as 1e-5 or 1e+6.
 */
export function formatLogTicks(values: readonly number[]): string[] {
  return values.map((v) => {
    if (!(v > 0)) return '';
    const exponent = Math.round(Math.log10(v));
    if (Math.abs(v / 10 ** exponent - 1) > 1e-9) return '';
    if (exponent < -3 || exponent > 4) return `1e${exponent < 0 ? '' : '+'}${exponent}`;
    return exponent >= 4 ? `${10 ** (exponent - 3)}k` : exponent < 0 ? (10 ** exponent).toFixed(-exponent) : String(10 ** exponent);
  });
}
