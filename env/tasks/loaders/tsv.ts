/**
 * Rows of a tab-separated file as pandas' `read_csv(sep="\t")` reads VLMEvalKit's benchmark
 * files: fields split on tabs, rows on newlines (a trailing CR dropped), a field that starts with
 * a double quote runs to the closing quote (tabs and newlines inside it kept, `""` is one quote),
 * blank lines skipped. Streamed: HR-Bench's files are 2–5 GB, far past what one string can hold,
 * so only the current row is in memory. Each row carries the line it starts on, for errors.
 */
import { createReadStream } from 'node:fs';
import { ConvertError } from './common.js';

export interface TsvRow {
  fields: string[];
  /** The 1-based line the row starts on. */
  line: number;
}

type State = 'start' | 'plain' | 'quoted' | 'quote-in-quoted';

const PLAIN_END = /[\t\n]/g;

function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

export async function* readTsv(file: string): AsyncGenerator<TsvRow> {
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 });
  let state: State = 'start';
  let parts: string[] = [];
  let fields: string[] = [];
  let line = 1;
  let rowLine = 1;
  const endField = (endsRow: boolean): void => {
    let text = parts.join('');
    if (endsRow && text.endsWith('\r')) text = text.slice(0, -1);
    fields.push(text);
    parts = [];
  };
  const takeRow = (): TsvRow | null => {
    const row = fields.length === 1 && fields[0] === '' ? null : { fields, line: rowLine };
    fields = [];
    return row;
  };
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let i = 0;
      while (i < chunk.length) {
        if (state === 'start') {
          if (fields.length === 0) rowLine = line;
          if (chunk[i] === '"') {
            state = 'quoted';
            i++;
          } else state = 'plain';
        } else if (state === 'plain') {
          PLAIN_END.lastIndex = i;
          const m = PLAIN_END.exec(chunk);
          if (!m) {
            parts.push(chunk.slice(i));
            i = chunk.length;
            continue;
          }
          parts.push(chunk.slice(i, m.index));
          i = m.index + 1;
          state = 'start';
          if (m[0] === '\t') {
            endField(false);
            continue;
          }
          endField(true);
          line++;
          const row = takeRow();
          if (row) yield row;
        } else if (state === 'quoted') {
          const j = chunk.indexOf('"', i);
          const text = chunk.slice(i, j < 0 ? chunk.length : j);
          parts.push(text);
          line += newlines(text);
          i = j < 0 ? chunk.length : j + 1;
          if (j >= 0) state = 'quote-in-quoted';
        } else {
          // After a quote inside a quoted field: a second quote is a literal one; anything else
          // closes the field, and what follows up to the tab is kept (as Python's csv does).
          if (chunk[i] === '"') {
            parts.push('"');
            state = 'quoted';
            i++;
          } else state = 'plain';
        }
      }
    }
  } catch (err) {
    throw new ConvertError(`cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (state === 'quoted') throw new ConvertError(`${file}:${rowLine}: a quoted field is never closed (expected a closing ")`);
  if (state !== 'start' || parts.length > 0 || fields.length > 0) {
    endField(true);
    const row = takeRow();
    if (row) yield row;
  }
}
