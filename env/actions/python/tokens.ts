/**
 * The tokenizer of the restricted Python reader: names, decimal numbers, string literals,
 * operators and newlines, with offsets. It only reads text; nothing is evaluated.
 *
 * Refused here, with a message for the model: f-strings (they run code), bytes, non-decimal
 * numbers, characters Python would not accept outside a string. Lines indented deeper than
 * the block get an 'indent' token, so the parser can first refuse the `for` or `if` above them.
 * Newlines inside brackets are joined, as Python does; `#` comments and `\` continuations are
 * skipped. A common indentation of the whole block is allowed (models indent fenced code).
 */

/** 'indent' marks a line indented deeper than the block: the parser refuses it where it meets it. */
export type TokenKind = 'name' | 'number' | 'string' | 'op' | 'newline' | 'indent' | 'end';

export interface Token {
  kind: TokenKind;
  /** Name text, operator text, or the decoded string value. */
  text: string;
  /** Numeric value of a number token. */
  number?: number;
  offset: number;
}

export type Tokenized = { ok: true; tokens: Token[] } | { ok: false; message: string; offset: number };

class TokenError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const OPERATOR_PAIRS = new Set(['==', '!=', '<=', '>=', '**', '//', '->', ':=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '@=', '<<', '>>']);
const SINGLE_OPERATORS = '()[]{},:;=.+-*/%@<>!~^&|';

export function tokenize(source: string): Tokenized {
  try {
    return { ok: true, tokens: new Tokenizer(source).run() };
  } catch (err) {
    if (err instanceof TokenError) return { ok: false, message: err.message, offset: err.offset };
    throw err;
  }
}

class Tokenizer {
  private readonly tokens: Token[] = [];
  private i = 0;
  private depth = 0;
  private atLineStart = true;
  private readonly baseIndent: number;

  constructor(private readonly src: string) {
    this.baseIndent = commonIndent(src);
  }

  run(): Token[] {
    const src = this.src;
    while (this.i < src.length) {
      const c = src.charAt(this.i);
      if (this.atLineStart && this.depth === 0) {
        this.lineStart();
        continue;
      }
      if (c === ' ' || c === '\t' || c === '\f' || c === '\r') {
        this.i++;
      } else if (c === '#') {
        while (this.i < src.length && src.charAt(this.i) !== '\n') this.i++;
      } else if (c === '\\' && (src.charAt(this.i + 1) === '\n' || (src.charAt(this.i + 1) === '\r' && src.charAt(this.i + 2) === '\n'))) {
        this.i += src.charAt(this.i + 1) === '\n' ? 2 : 3;
      } else if (c === '\n') {
        if (this.depth === 0) {
          this.pushNewline(this.i);
          this.atLineStart = true;
        }
        this.i++;
      } else if (isNameStart(c) || (c === '\\' && src.charAt(this.i + 1) === '_')) {
        this.nameOrString();
      } else if (isDigit(c) || (c === '.' && isDigit(src.charAt(this.i + 1)))) {
        this.number();
      } else if (c === '"' || c === "'") {
        this.string(this.i, '');
      } else {
        this.operator(c);
      }
    }
    this.pushNewline(src.length);
    this.tokens.push({ kind: 'end', text: '', offset: src.length });
    return this.tokens;
  }

  /** Skips the indentation that starts a logical line, refusing more than the block's own. */
  private lineStart(): void {
    const src = this.src;
    let j = this.i;
    while (j < src.length && (src.charAt(j) === ' ' || src.charAt(j) === '\t')) j++;
    const next = src.charAt(j);
    const blank = j >= src.length || next === '\n' || next === '\r' || next === '#';
    if (!blank && j - this.i > this.baseIndent) this.tokens.push({ kind: 'indent', text: '', offset: j });
    this.i = j;
    this.atLineStart = false;
  }

  private pushNewline(offset: number): void {
    const last = this.tokens[this.tokens.length - 1];
    if (last && last.kind !== 'newline') this.tokens.push({ kind: 'newline', text: '\n', offset });
  }

  private nameOrString(): void {
    const src = this.src;
    const start = this.i;
    let j = start;
    // `\_` is a Markdown-escaped underscore (focus\_on\_rows\_with\_draw): ReFocus and VTool-R1 strip
    // the backslash before they parse, so a name reads as if it were not there.
    while (j < src.length && (isNameChar(src.charAt(j)) || (src.charAt(j) === '\\' && src.charAt(j + 1) === '_'))) j += src.charAt(j) === '\\' ? 2 : 1;
    const word = src.slice(start, j).replaceAll('\\_', '_');
    const quote = src.charAt(j);
    if ((quote === '"' || quote === "'") && word.length <= 2 && /^[rRuUfFbB]+$/.test(word)) {
      const prefix = word.toLowerCase();
      if (prefix.includes('f')) {
        throw new TokenError('f-strings are not allowed (they run code): write a plain string literal such as "Country"', start);
      }
      if (prefix.includes('b')) throw new TokenError('bytes literals are not allowed: write a plain string literal such as "Country"', start);
      if (prefix !== 'r' && prefix !== 'u') throw new TokenError(`unknown string prefix ${word}`, start);
      this.i = j;
      this.string(start, prefix);
      return;
    }
    this.tokens.push({ kind: 'name', text: word, offset: start });
    this.i = j;
  }

  private number(): void {
    const src = this.src;
    const start = this.i;
    if (src.charAt(start) === '0' && /[xXoObB]/.test(src.charAt(start + 1))) {
      throw new TokenError('write numbers in decimal (hex, octal and binary literals are not allowed)', start);
    }
    let j = start;
    while (j < src.length && /[0-9_]/.test(src.charAt(j))) j++;
    if (src.charAt(j) === '.') {
      j++;
      while (j < src.length && /[0-9_]/.test(src.charAt(j))) j++;
    }
    if (/[eE]/.test(src.charAt(j))) {
      let k = j + 1;
      if (src.charAt(k) === '+' || src.charAt(k) === '-') k++;
      if (isDigit(src.charAt(k))) {
        while (k < src.length && /[0-9_]/.test(src.charAt(k))) k++;
        j = k;
      }
    }
    if (/[jJ]/.test(src.charAt(j))) throw new TokenError('complex numbers are not allowed', start);
    if (isNameChar(src.charAt(j))) throw new TokenError(`invalid number ${src.slice(start, j + 1)}`, start);
    const text = src.slice(start, j);
    const value = Number(text.replace(/_/g, ''));
    if (!Number.isFinite(value)) throw new TokenError(`number ${text} is out of range`, start);
    this.tokens.push({ kind: 'number', text, number: value, offset: start });
    this.i = j;
  }

  /** Reads a string literal whose quote is at this.i; `start` includes any prefix. */
  private string(start: number, prefix: string): void {
    const src = this.src;
    const quote = src.charAt(this.i);
    const triple = src.startsWith(quote.repeat(3), this.i);
    const delimiter = triple ? quote.repeat(3) : quote;
    const raw = prefix === 'r';
    let j = this.i + delimiter.length;
    const out: string[] = [];
    for (;;) {
      if (j >= src.length) throw new TokenError(`string literal is not closed: end it with ${delimiter}`, start);
      const c = src.charAt(j);
      if (src.startsWith(delimiter, j)) {
        j += delimiter.length;
        break;
      }
      if (c === '\n' && !triple) throw new TokenError(`string literal is not closed before the end of the line: end it with ${quote}`, start);
      if (c === '\\') {
        const next = src.charAt(j + 1);
        if (raw) {
          out.push(c, next);
          j += 2;
          continue;
        }
        j = this.escape(j, out);
        continue;
      }
      out.push(c);
      j++;
    }
    this.tokens.push({ kind: 'string', text: out.join(''), offset: start });
    this.i = j;
  }

  /** Decodes the escape at src[j] === '\\' into out; returns the index after it. */
  private escape(j: number, out: string[]): number {
    const src = this.src;
    const next = src.charAt(j + 1);
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v' };
    if (next === '\n') return j + 2;
    // A Markdown-escaped underscore, as ReFocus and VTool-R1 read it (they strip `\_` before parsing).
    if (next === '_') {
      out.push('_');
      return j + 2;
    }
    const mapped = simple[next];
    if (mapped !== undefined) {
      out.push(mapped);
      return j + 2;
    }
    if (next >= '0' && next <= '7') {
      let k = j + 1;
      while (k < j + 4 && src.charAt(k) >= '0' && src.charAt(k) <= '7') k++;
      out.push(String.fromCharCode(parseInt(src.slice(j + 1, k), 8)));
      return k;
    }
    const width = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
    if (width > 0) {
      const hex = src.slice(j + 2, j + 2 + width);
      if (hex.length !== width || !/^[0-9a-fA-F]+$/.test(hex)) throw new TokenError(`invalid \\${next} escape in a string`, j);
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) throw new TokenError(`invalid \\${next} escape in a string`, j);
      out.push(String.fromCodePoint(code));
      return j + 2 + width;
    }
    // Python keeps unknown escapes as written.
    out.push('\\', next);
    return j + 2;
  }

  private operator(c: string): void {
    const src = this.src;
    const start = this.i;
    const two = src.slice(start, start + 2);
    if (OPERATOR_PAIRS.has(two)) {
      this.tokens.push({ kind: 'op', text: two, offset: start });
      this.i += 2;
      return;
    }
    if (!SINGLE_OPERATORS.includes(c)) {
      throw new TokenError(`unexpected character ${JSON.stringify(c)}: outside strings, write only tool calls, names and literal values`, start);
    }
    if (c === '(' || c === '[' || c === '{') this.depth++;
    else if ((c === ')' || c === ']' || c === '}') && this.depth > 0) this.depth--;
    this.tokens.push({ kind: 'op', text: c, offset: start });
    this.i++;
  }
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

function isNameStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
}

function isNameChar(c: string): boolean {
  return isNameStart(c) || isDigit(c);
}

/** The smallest indentation of the block's non-blank, non-comment lines. */
function commonIndent(src: string): number {
  let smallest = Infinity;
  let at = 0;
  while (at <= src.length) {
    const nl = src.indexOf('\n', at);
    const end = nl === -1 ? src.length : nl;
    let j = at;
    while (j < end && (src.charAt(j) === ' ' || src.charAt(j) === '\t')) j++;
    if (j < end && src.charAt(j) !== '#' && src.charAt(j) !== '\r') smallest = Math.min(smallest, j - at);
    if (nl === -1) break;
    at = nl + 1;
  }
  return smallest === Infinity ? 0 : smallest;
}
