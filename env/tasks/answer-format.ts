/**
 * How numeric answers are written, for the generator (exact integer arithmetic on units).
 * Canonical form: plain decimal, no thousands separators, no trailing zeros ("12.5", "7", "-3").
 * Averages are rounded half away from zero to 2 decimals, computed on integers, never floats.
 */
import { unitsToDecimalString } from './data-table.js';

export function canonicalDecimal(text: string): string {
  if (!text.includes('.')) return text === '-0' ? '0' : text;
  const trimmed = text.replace(/0+$/, '').replace(/\.$/, '');
  return trimmed === '-0' || trimmed === '' ? '0' : trimmed;
}

export function formatUnits(units: number, decimals: number): string {
  return canonicalDecimal(unitsToDecimalString(units, decimals));
}

/** numerator / denominator (integers, denominator > 0), rounded half away from zero to `places` decimals. */
export function roundRatio(numerator: number, denominator: number, places: number): string {
  if (!Number.isSafeInteger(numerator) || !Number.isSafeInteger(denominator) || denominator <= 0) throw new Error(`roundRatio needs safe integers and a positive denominator, got ${numerator}/${denominator}`);
  const scaled = BigInt(numerator) * 10n ** BigInt(places);
  const d = BigInt(denominator);
  const negative = scaled < 0n;
  const abs = negative ? -scaled : scaled;
  const q = (2n * abs + d) / (2n * d); // floor(abs/d + 1/2): half away from zero on |x|
  const units = Number(negative ? -q : q);
  return formatUnits(units, places);
}
