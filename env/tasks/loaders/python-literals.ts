/**
 * Reads one `NAME = {int: "string", ...}` assignment out of a Python source file, without
 * running Python: CharXiv keeps its question templates in `src/constants.py`, and its protocol
 * sends the templated text, not the bare question. Only what such a table holds is accepted:
 * integer keys; values made of adjacent string literals (single, double or triple quotes, an
 * r/u prefix, the usual escapes); comments, trailing commas and backslash line continuations.
 * Anything else is an error naming the line, never a guess.
 */

export class PythonLiteralError extends Error {
  override name = 'PythonLiteralError';
}

const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', a: '\x07', b: '\b', f: '\f', v: '\v' };

class Reader {
  at = 0;
  constructor(readonly text: string, readonly file: string) {}

  line(): number {
    return this.text.slice(0, this.at).split('\n').length;
  }

  fail(what: string): never {
    throw new PythonLiteralError(`${this.file}:${this.line()}: ${what}`);
  }

  /** Skips spaces, newlines, comments and backslash continuations. */
  skip(): void {
    for (;;) {
      const rest = this.text.slice(this.at);
      const space = /^(?:[ \t\r\n]+|#[^\n]*|\\\r?\n)/.exec(rest);
      if (!space) return;
      this.at += space[0].length;
    }
  }

  take(char: string): boolean {
    this.skip();
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  integer(): number {
    this.skip();
    const match = /^\d+/.exec(this.text.slice(this.at));
    if (!match) this.fail('expected an integer key');
    this.at += match[0].length;
    return Number(match[0]);
  }

  /** One string literal at the cursor, or null when there is none. */
  stringLiteral(): string | null {
    this.skip();
    const head = /^([rRuU]?)('''|"""|'|")/.exec(this.text.slice(this.at));
    if (!head) return null;
    const raw = head[1]!.toLowerCase() === 'r';
    const quote = head[2]!;
    this.at += head[0].length;
    let out = '';
    for (;;) {
      if (this.at >= this.text.length) this.fail(`unterminated string (opened with ${quote})`);
      if (this.text.startsWith(quote, this.at)) {
        this.at += quote.length;
        return out;
      }
      const char = this.text[this.at]!;
      if (char === '\n' && quote.length === 1) this.fail('a newline inside a one-line string');
      if (char === '\\' && !raw) {
        const next = this.text[this.at + 1] ?? '';
        if (next === '\n') {
          this.at += 2;
          continue;
        }
        const escaped = ESCAPES[next];
        if (escaped === undefined) this.fail(`an escape \\${next} this reader does not take`);
        out += escaped;
        this.at += 2;
        continue;
      }
      out += char;
      this.at++;
    }
  }

  /** Adjacent string literals, joined, as Python joins them. */
  stringValue(): string {
    const first = this.stringLiteral();
    if (first === null) this.fail('expected a string value');
    let value = first;
    for (let next = this.stringLiteral(); next !== null; next = this.stringLiteral()) value += next;
    return value;
  }
}

/** The table assigned to `name` at the top level of `source`: integer keys to strings. */
export function readPythonStringTable(source: string, name: string, file = 'python source'): Map<number, string> {
  const assignment = new RegExp(`^${name}\\s*=\\s*\\{`, 'm').exec(source);
  if (!assignment) throw new PythonLiteralError(`${file}: no top-level assignment ${name} = {...}`);
  const reader = new Reader(source, file);
  reader.at = assignment.index + assignment[0].length;
  const table = new Map<number, string>();
  for (;;) {
    if (reader.take('}')) return table;
    const key = reader.integer();
    if (!reader.take(':')) reader.fail(`expected ':' after key ${key}`);
    table.set(key, reader.stringValue());
    if (reader.take(',')) continue;
    if (reader.take('}')) return table;
    reader.fail(`expected ',' or '}' after the value of key ${key}`);
  }
}

/** Python's str.format with positional `{}` fields only (and `{{`, `}}`); other fields are refused. */
export function formatPositional(template: string, args: readonly string[]): string {
  let next = 0;
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (whole, field: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    if (field !== '') throw new PythonLiteralError(`template field {${field}} is not a positional {}`);
    if (next >= args.length) throw new PythonLiteralError(`the template has more {} fields than the ${args.length} value(s) given`);
    return args[next++]!;
  });
}
