/**
 * Finds Markdown code fences (```lang … ```) in a message, in order, without reading their
 * contents. An opening fence with no closing one runs to the end of the message and is
 * marked unclosed. One forward scan.
 */
import { Code, isBlankCode, isWordCode } from './chars.js';
import { findFrom } from './text-regions.js';

export interface Fence {
  /** The info word after the opening backticks, lower-cased ('' when none). */
  lang: string;
  /** Offset of the opening backticks. */
  start: number;
  contentStart: number;
  contentEnd: number;
  /** Offset just after the closing backticks (or the message end when unclosed). */
  end: number;
  closed: boolean;
}

const TICKS = '```';

/** Characters of a fence's info word: letters, digits and _ + . - */
function isLangCode(c: number): boolean {
  return isWordCode(c) || c === 43 || c === 46 || c === 45;
}

export function findFences(text: string): Fence[] {
  const fences: Fence[] = [];
  let at = findFrom(text, TICKS);
  while (at !== -1) {
    let i = at + TICKS.length;
    const langStart = i;
    while (i < text.length && isLangCode(text.charCodeAt(i))) i++;
    const lang = text.slice(langStart, i).toLowerCase();
    // Content starts on the next line when the rest of the opening line is blank.
    let j = i;
    while (j < text.length && isBlankCode(text.charCodeAt(j)) && text.charCodeAt(j) !== Code.Newline) j++;
    const contentStart = text.charCodeAt(j) === Code.Newline ? j + 1 : i;
    const close = findFrom(text, TICKS, contentStart);
    if (close === -1) {
      fences.push({ lang, start: at, contentStart, contentEnd: text.length, end: text.length, closed: false });
      break;
    }
    fences.push({ lang, start: at, contentStart, contentEnd: close, end: close + TICKS.length, closed: true });
    at = findFrom(text, TICKS, close + TICKS.length);
  }
  return fences;
}
