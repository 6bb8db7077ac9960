/**
 * Draws unique labels (row keys, chart categories) from the vocabulary pools, in three lengths
 * and optionally "similar" (sharing a stem, as real tables do: "Lyon Nord", "Lyon Sud"), which
 * is one of the difficulty levers. Labels must be unique within one image: the bands are keyed
 * by them. Never returns fewer labels than asked: it throws a LabelPoolError instead.
 */
import type { Rng } from './prng.js';
import { CITIES, CLUB_SUFFIXES, COMPANIES, COUNTRIES, FIRST_NAMES, LAST_NAMES, MONTHS, PRODUCT_ADJECTIVES, PRODUCT_NOUNS } from './vocabulary.js';

export type LabelLength = 'short' | 'medium' | 'long';
export type LabelPool = 'person' | 'city' | 'product' | 'club' | 'country' | 'company' | 'year' | 'month';

export interface LabelStyle {
  length: LabelLength;
  /** Make part of the labels share a stem with another label. */
  similar: boolean;
  /** Hard cap on characters per label (tight canvases). */
  maxChars: number;
}

export class LabelPoolError extends Error {
  override name = 'LabelPoolError';
}

const SIMILAR_SUFFIXES = ['Nord', 'Sud', 'Est', 'West', 'II', 'III', 'Jr', 'B', 'Plus', 'Max'];

function candidates(rng: Rng, pool: LabelPool, length: LabelLength): string[] {
  switch (pool) {
    case 'person': {
      if (length === 'short') return [...FIRST_NAMES, ...LAST_NAMES].filter((n) => n.length <= 5);
      const out: string[] = [];
      for (const first of FIRST_NAMES) for (const last of LAST_NAMES) out.push(length === 'long' ? `${first} ${first[0]}. ${last}` : `${first} ${last}`);
      return out;
    }
    case 'city':
      if (length === 'long') return CITIES.flatMap((c) => [`${c} Centre`, `Greater ${c}`, `${c} Harbour`]);
      return length === 'short' ? CITIES.filter((c) => c.length <= 6) : [...CITIES];
    case 'product': {
      if (length === 'short') return PRODUCT_NOUNS.filter((n) => n.length <= 6);
      const out: string[] = [];
      for (const adj of PRODUCT_ADJECTIVES) for (const noun of PRODUCT_NOUNS) out.push(length === 'long' ? `${adj} ${noun} ${rng.pick(['Pro', 'XL', 'Mk II', 'Deluxe', 'Lite'])}` : `${adj} ${noun}`);
      return out;
    }
    case 'club': {
      if (length === 'short') return CITIES.filter((c) => c.length <= 6);
      const out: string[] = [];
      for (const city of CITIES) for (const suffix of CLUB_SUFFIXES) out.push(length === 'long' ? `${city} ${suffix} Football Club` : `${city} ${suffix}`);
      return out;
    }
    case 'country':
      return length === 'short' ? COUNTRIES.filter((c) => c.length <= 6) : length === 'long' ? COUNTRIES.filter((c) => c.length >= 7) : [...COUNTRIES];
    case 'company':
      return length === 'long' ? COMPANIES.flatMap((c) => [`${c} Holdings`, `${c} Group`, `${c} Industries`]) : length === 'short' ? COMPANIES.filter((c) => c.length <= 6) : [...COMPANIES];
    case 'year':
    case 'month':
      return [];
  }
}

/** Consecutive years or months: ordered axes read left to right. */
function sequence(rng: Rng, pool: 'year' | 'month', count: number): string[] {
  if (pool === 'month') {
    if (count > MONTHS.length) throw new LabelPoolError(`only ${MONTHS.length} months exist; asked for ${count}`);
    const start = rng.int(0, MONTHS.length - count);
    return MONTHS.slice(start, start + count);
  }
  const start = rng.int(1990, 2024 - count);
  return Array.from({ length: count }, (_, i) => String(start + i));
}

/** `count` unique labels from `pool` in the given style. */
export function drawLabels(rng: Rng, pool: LabelPool, count: number, style: LabelStyle): string[] {
  if (pool === 'year' || pool === 'month') return sequence(rng, pool, count);
  const all = [...new Set(candidates(rng, pool, style.length))].filter((l) => l.length <= style.maxChars);
  const stemmable = all.filter((l) => l.length + 5 <= style.maxChars);
  if (style.similar && count >= 3 && stemmable.length > 0) {
    // About a third of the labels come in pairs that share a stem.
    const stems = rng.sample(stemmable, Math.min(Math.floor(count / 3), stemmable.length));
    const picked = new Set<string>();
    for (const stem of stems) {
      const [a, b] = rng.sample(SIMILAR_SUFFIXES, 2) as [string, string];
      for (const label of [`${stem} ${a}`, `${stem} ${b}`]) if (label.length <= style.maxChars && picked.size < count) picked.add(label);
    }
    for (const label of rng.shuffle(all)) {
      if (picked.size >= count) break;
      picked.add(label);
    }
    if (picked.size >= count) return rng.shuffle([...picked]);
  }
  if (all.length < count) {
    throw new LabelPoolError(`the ${style.length} ${pool} pool has ${all.length} labels of at most ${style.maxChars} characters; ${count} were asked for (a larger --image-size allows longer labels)`);
  }
  return rng.sample(all, count);
}
