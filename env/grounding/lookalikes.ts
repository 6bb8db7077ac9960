/**
 * Letters a sans-serif font draws (almost) alike: capital I and small l, and letters whose
 * capital is their small form enlarged (o/O, c/C, s/S, ...). The recogniser often sees both and
 * picks by a small margin; where it was unsure (the other reading kept real probability), the
 * position in the word decides, as a reader would: "lvo" → "Ivo", "FulI" → "Full", "IIl" → "III".
 * With `titleCase` (chart and table labels), an unsure first letter becomes a capital: "oct" → "Oct",
 * and a lone "1." is the initial "I.". Words of only I, l and 1 with a capital I are Roman numerals.
 * Only ever swaps a character for the recogniser's own runner-up.
 */
import type { ReadCharacter } from './types.js';

/** The runner-up must have kept at least this probability for a swap. */
const UNSURE = 0.05;
const SAME_SHAPE_CAPITALS = new Set([...'cosuvwxz']);

function isLower(ch: string | undefined): boolean {
  return ch !== undefined && ch !== ch.toUpperCase() && ch === ch.toLowerCase();
}

function isUpper(ch: string | undefined): boolean {
  return ch !== undefined && ch !== ch.toLowerCase() && ch === ch.toUpperCase();
}

function unsureBetween(ch: ReadCharacter, a: string, b: string): boolean {
  return ch.text === a && ch.alternative?.text === b && ch.alternative.probability >= UNSURE;
}

/** The word's characters with look-alikes resolved; spaces are not expected inside `word`. */
export function resolveLookalikes(word: readonly ReadCharacter[], titleCase = false): ReadCharacter[] {
  const out = word.map((c) => ({ ...c }));
  const swap = (i: number) => {
    const c = out[i] as ReadCharacter;
    const alt = c.alternative as { text: string; probability: number };
    out[i] = { ...c, text: alt.text, probability: alt.probability, alternative: { text: c.text, probability: c.probability } };
  };
  out.forEach((c, i) => {
    const prev = out[i - 1]?.text;
    const next = out[i + 1]?.text;
    // Capital I starts words and sits among capitals; small l follows small letters.
    if (unsureBetween(c, 'l', 'I') && ((i === 0 && isLower(next)) || (isUpper(prev) && !isLower(next)))) swap(i);
    else if (unsureBetween(c, 'I', 'l') && isLower(prev)) swap(i);
    else if (titleCase && i === 0 && SAME_SHAPE_CAPITALS.has(c.text) && c.alternative?.text === c.text.toUpperCase() && c.alternative.probability >= UNSURE) swap(i);
  });
  // Roman numerals: a word of only I, l, 1 (and |) with at least one I is all capital I ("II1" → "III").
  if (out.length > 1 && out.every((c) => /^[Il1|]$/.test(c.text)) && out.some((c) => c.text === 'I')) {
    for (const c of out) c.text = 'I';
  }
  // An initial in a name: a lone "1." among words is "I." ("Ivo 1. Moreau").
  if (titleCase && out.length === 2 && out[0]?.text === '1' && out[1]?.text === '.') (out[0] as ReadCharacter).text = 'I';
  return out;
}
