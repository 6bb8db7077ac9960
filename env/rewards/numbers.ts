/**
 * Reads a number out of a short answer the way a person grading ChartQA would: `1,234`, `-4.2`,
 * `1e3`, `12%`, `$3.5M`, `3.5 million`, `2k`, `12 kg`, `seven`, `twenty-one`, `one hundred`.
 * It only recognises answers that ARE a number (optionally with a currency, a scale word and a
 * unit); a sentence that merely contains a number is not one, so text answers stay text.
 * It never evaluates anything: this is a hand-written recogniser, not an expression evaluator.
 *
 * Ambiguity rule (documented in env/rewards/README.md): chart data is often written with the
 * scale on the axis, so a gold "12" may be a percentage and a gold "3.5" may be millions. A
 * percent sign or a scale suffix therefore yields two readings — the scaled value and the face
 * value — and an answer matches when any reading matches: gold 0.12 ~ "12%", gold 12 ~ "12%",
 * gold 3500000 ~ "$3.5M", gold 3.5 ~ "3.5 million". Units (`kg`, `people`, `USD`) are ignored.
 */

export interface ParsedNumber {
  /** The value as written, scale applied: "12%" → 0.12, "$3.5M" → 3500000. */
  value: number;
  /** Every value the answer may mean (the value first, then the face value when a scale was written). */
  readings: number[];
  /** True for a plain integer literal with no separators, scale or unit ("2019"): how years are written. */
  plainInteger: boolean;
}

const SMALL_NUMBER_WORDS: Readonly<Record<string, number>> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16, seventeen: 17,
  eighteen: 18, nineteen: 19, twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70,
  eighty: 80, ninety: 90,
};

const LARGE_NUMBER_WORDS: Readonly<Record<string, number>> = {
  thousand: 1e3, million: 1e6, billion: 1e9, trillion: 1e12,
};

/** Scale words and suffixes after a numeral. One-letter suffixes must touch the digits ("2k", "$3.5M"): "12 m" is metres. */
const WORD_SCALES: Readonly<Record<string, number>> = {
  thousand: 1e3, thousands: 1e3, million: 1e6, millions: 1e6, mn: 1e6, mil: 1e6, mln: 1e6,
  billion: 1e9, billions: 1e9, bn: 1e9, trillion: 1e12, trillions: 1e12, tn: 1e12,
  percent: 0.01, 'per cent': 0.01, pct: 0.01,
};
const LETTER_SCALES: Readonly<Record<string, number>> = { k: 1e3, m: 1e6, b: 1e9, t: 1e12, '%': 0.01 };

const HEDGES = /^(?:about|approximately|approx\.?|around|roughly|nearly|almost|circa|ca\.|~|≈)\s*/u;
const CURRENCY = /^(?:[$€£¥₹]|usd|eur|gbp|us\$)\s*/u;
const NUMERAL = /^(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:e[+-]?\d+)?/u;
/** What may follow a number: a unit of up to three words (letters, °, /, ², ³, µ, dots). */
const UNIT = /^(?:[\p{L}°µ²³/.$€£¥₹]+(?:\s+[\p{L}°µ²³/.]+){0,2})?$/u;

function clean(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2212\u2012\u2013\u2014]/gu, '-')
    .replace(/\s+/gu, ' ')
    .trim()
    .replace(/^["'`“”‘’(]+|["'`“”‘’).,;:!?]+$/gu, '')
    .trim();
}

/** Parses an answer that is a number; returns null for anything else. */
export function parseNumber(text: string): ParsedNumber | null {
  let rest = clean(text).replace(HEDGES, '');
  let sign = 1;
  const takeSign = (): void => {
    const m = /^([+-]|minus\s|negative\s)\s*/u.exec(rest);
    if (m) {
      if (m[1] !== '+') sign = -sign;
      rest = rest.slice(m[0].length);
    }
  };
  takeSign();
  const currency = CURRENCY.exec(rest);
  if (currency) rest = rest.slice(currency[0].length);
  takeSign();

  const numeral = NUMERAL.exec(rest);
  if (numeral) return fromNumeral(numeral[0], rest.slice(numeral[0].length), sign, currency !== null);
  return fromWords(rest, sign);
}

function fromNumeral(literal: string, after: string, sign: number, hadCurrency: boolean): ParsedNumber | null {
  const face = sign * Number(literal.replace(/,/gu, ''));
  if (!Number.isFinite(face)) return null;
  let rest = after;
  let scale = 1;
  const letter = /^(%|k|m|b|t)(?![\p{L}])/u.exec(rest);
  const spacedPercent = /^\s+%/u.exec(rest);
  const word = /^\s*(thousands?|millions?|mn|mil|mln|billions?|bn|trillions?|tn|per cent|percent|pct)(?![\p{L}])/u.exec(rest);
  if (letter?.[1] !== undefined) {
    scale = LETTER_SCALES[letter[1]] ?? 1;
    rest = rest.slice(letter[0].length);
  } else if (spacedPercent) {
    scale = 0.01;
    rest = rest.slice(spacedPercent[0].length);
  } else if (word?.[1] !== undefined) {
    scale = WORD_SCALES[word[1]] ?? 1;
    rest = rest.slice(word[0].length);
  }
  const unit = rest.trim();
  if (!UNIT.test(unit)) return null;
  const value = face * scale;
  const readings = scale === 1 ? [value] : [value, face];
  const plainInteger = /^\d+$/u.test(literal) && scale === 1 && unit === '' && !hadCurrency;
  return { value, readings, plainInteger };
}

/** English number words: "seven", "twenty-one", "one hundred and five", "a thousand", "two million". */
function fromWords(text: string, sign: number): ParsedNumber | null {
  const tokens = text.replace(/-/gu, ' ').split(' ').filter((t) => t.length > 0);
  let total = 0;
  let current = 0;
  let consumed = 0;
  let sawNumberWord = false;
  for (const [i, token] of tokens.entries()) {
    const small = SMALL_NUMBER_WORDS[token];
    const large = LARGE_NUMBER_WORDS[token];
    const next = tokens[i + 1];
    const previous = i > 0 ? SMALL_NUMBER_WORDS[tokens[i - 1] as string] : undefined;
    // Only "twenty one" style pairs may stand side by side; "seven eleven" is not a number.
    const badPair = small !== undefined && previous !== undefined && !(previous >= 20 && previous % 10 === 0 && small >= 1 && small <= 9);
    if (small !== undefined && !badPair) {
      current += small;
    } else if (token === 'hundred' && sawNumberWord) {
      current = (current === 0 ? 1 : current) * 100;
    } else if (large !== undefined && sawNumberWord) {
      total += (current === 0 ? 1 : current) * large;
      current = 0;
    } else if (token === 'a' && i === 0 && next !== undefined && (next === 'hundred' || LARGE_NUMBER_WORDS[next] !== undefined)) {
      current = 1;
    } else if (token === 'and' && sawNumberWord && next !== undefined && SMALL_NUMBER_WORDS[next] !== undefined) {
      // "one hundred and five"
    } else {
      break;
    }
    sawNumberWord = true;
    consumed = i + 1;
  }
  if (consumed === 0) return null;
  let unit = tokens.slice(consumed).join(' ');
  let scale = 1;
  const percent = /^(?:percent|per cent|%)(?:\s|$)/u.exec(unit);
  if (percent) {
    scale = 0.01;
    unit = unit.slice(percent[0].length);
  }
  // "Seven Eleven" is a name, not 7 eleven-units: number words never count as a unit.
  const unitWords = unit.trim().split(' ');
  if (unitWords.some((w) => SMALL_NUMBER_WORDS[w] !== undefined || LARGE_NUMBER_WORDS[w] !== undefined || w === 'hundred')) return null;
  if (!UNIT.test(unit.trim())) return null;
  const face = sign * (total + current);
  const value = face * scale;
  return { value, readings: scale === 1 ? [value] : [value, face], plainInteger: false };
}

/**
 * ChartQA relaxed accuracy between two readings: within `tolerance` relative error of the gold,
 * exact when the gold is 0 (a relative error is undefined there).
 */
export function withinTolerance(prediction: number, gold: number, tolerance: number): boolean {
  if (gold === 0) return prediction === 0;
  // A floor far below any printed precision, so 0.1 + 0.2 equals 0.3 even at tolerance 0.
  const slack = Math.max(tolerance * Math.abs(gold), 1e-9 * Math.abs(gold));
  return Math.abs(prediction - gold) <= slack;
}
