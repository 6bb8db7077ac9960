/**
 * Finds Markdown code fences (```lang … ```) in a message, in order, without reading their
 * contents. An opening fence with no closing one runs to the end of the message and is
 * marked unclosed. One forward scan.
 */

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

export function findFences(text: string): Fence[] {
  const fences: Fence[] = [];
  let at = text.indexOf(TICKS);
  while (at !== -1) {
    let i = at + TICKS.length;
    const langStart = i;
    while (i < text.length && /[A-Za-z0-9_+.-]/.test(text.charAt(i))) i++;
    const lang = text.slice(langStart, i).toLowerCase();
    // Content starts on the next line when the rest of the opening line is blank.
    let j = i;
    while (j < text.length && (text.charAt(j) === ' ' || text.charAt(j) === '\t' || text.charAt(j) === '\r')) j++;
    const contentStart = text.charAt(j) === '\n' ? j + 1 : i;
    const close = text.indexOf(TICKS, contentStart);
    if (close === -1) {
      fences.push({ lang, start: at, contentStart, contentEnd: text.length, end: text.length, closed: false });
      break;
    }
    fences.push({ lang, start: at, contentStart, contentEnd: close, end: close + TICKS.length, closed: true });
    at = text.indexOf(TICKS, close + TICKS.length);
  }
  return fences;
}
