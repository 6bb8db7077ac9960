import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { formatPositional, readPythonStringTable } from '../../env/tasks/loaders/python-literals.js';

/** Every string form the reader takes, in one table. */
const SOURCE = String.raw`
OTHER = {1: "not this one"}
TABLE = {
    1: \
    """{}what is its title?
    * It's "quoted" and has a tab\there.
    """,
    2: '''single-quoted
triple''', # a comment after the comma
    3: "adjacent " 'literals ' r"raw \n stays",
    4: u'escapes: \\ \' \" \n end',
    10: "continued \
line",
}
`;

/** Python's own reading of the same source: the oracle. */
function pythonReads(source: string, name: string): Record<string, string> | null {
  const result = spawnSync('python3', ['-c', `import json, sys\nns = {}\nexec(sys.stdin.read(), ns)\nprint(json.dumps({str(k): v for k, v in ns[${JSON.stringify(name)}].items()}))`], { input: source, encoding: 'utf8' });
  return result.status === 0 ? (JSON.parse(result.stdout) as Record<string, string>) : null;
}

test('a table of integer keys to strings reads exactly as Python reads it', { skip: spawnSync('python3', ['--version']).status === 0 ? false : 'python3 is not on PATH: it is the oracle here' }, () => {
  const table = readPythonStringTable(SOURCE, 'TABLE', 'constants.py');
  assert.deepEqual(Object.fromEntries([...table].map(([k, v]) => [String(k), v])), pythonReads(SOURCE, 'TABLE'));
  assert.equal(table.size, 5);
});

test('anything but such a table is an error naming the line', () => {
  assert.throws(() => readPythonStringTable('X = 1', 'TABLE', 'c.py'), /c\.py: no top-level assignment TABLE = \{\.\.\.\}/);
  assert.throws(() => readPythonStringTable('TABLE = {\n  1: f"{x}",\n}', 'TABLE', 'c.py'), /c\.py:2: expected a string value/);
  assert.throws(() => readPythonStringTable('TABLE = {\n  "a": "b"}', 'TABLE', 'c.py'), /c\.py:2: expected an integer key/);
  assert.throws(() => readPythonStringTable('TABLE = {\n 1: """open', 'TABLE', 'c.py'), /unterminated string/);
  assert.throws(() => readPythonStringTable('TABLE = {1: "a" 2: "b"}', 'TABLE', 'c.py'), /expected ',' or '\}' after the value of key 1/);
});

test('positional format fields are filled in order; braces doubled stay single; named fields are refused', () => {
  assert.equal(formatPositional('{}what {{is}} {}?', ['A: ', 'B']), 'A: what {is} B?');
  assert.throws(() => formatPositional('{name}', ['x']), /template field \{name\} is not a positional \{\}/);
  assert.throws(() => formatPositional('{} {}', ['x']), /more \{\} fields than the 1 value/);
});
