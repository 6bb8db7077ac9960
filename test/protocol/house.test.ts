/**
 * The house rules of docs/ARCHITECTURE.md that hold across the whole tree: no circle of files
 * among the TypeScript sources (a type-only import counts: a circle of files is a circle whatever
 * crosses it), and no function or method over 150 lines outside tests, in TypeScript (read with
 * the TypeScript compiler) or Python (read with Python's ast). No allow-list: a failure names the
 * files, and the fix is to move the shared piece to where both sides can import it, or to split
 * the function.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';
import ts from 'typescript';

const REPO = resolve(__dirname, '..', '..');
const MAX_FUNCTION_LINES = 150;

/** Tests, fixtures and test helpers, in either language. */
function isTest(path: string): boolean {
  return /^test\//.test(path) || /\/tests?\//.test(path) || /\/e2e_tests\//.test(path) || /\.test\.ts$/.test(path) || /(^|\/)test_[^/]*\.py$/.test(path) || /_test\.py$/.test(path);
}

/** The repository's files as git sees them: committed ones and new ones not ignored (never node_modules, dist or a venv). */
function repoFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return [...new Set(out.split('\n').filter(Boolean))].filter((path) => !path.startsWith('node_modules/'));
}

const sourceFiles = (ext: RegExp) => repoFiles().filter((path) => ext.test(path) && !path.endsWith('.d.ts') && !isTest(path));

/** What the TypeScript compiler reads in one file: its relative imports and re-exports (type-only ones too), and its functions over the limit. */
function readTypeScript(path: string, text: string, known: ReadonlySet<string>): { imports: string[]; longFunctions: string[] } {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const imports = new Set<string>();
  const longFunctions: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      if (specifier.startsWith('.')) {
        const base = normalize(join(dirname(path), specifier)).replace(/\.js$/, '');
        const target = [`${base}.ts`, `${base}/index.ts`].find((candidate) => known.has(candidate));
        if (target) imports.add(target);
      }
    }
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      if (last - first + 1 > MAX_FUNCTION_LINES) {
        const name = node.name?.getText(source) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : '(anonymous)');
        longFunctions.push(`${path}:${first + 1} ${name} is ${last - first + 1} lines`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports: [...imports], longFunctions };
}

/** The strongly connected components of more than one file (Tarjan): each is a circle of imports. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return found;
}

function readTree(files: ReadonlyMap<string, string>): { graph: Map<string, string[]>; longFunctions: string[] } {
  const known = new Set(files.keys());
  const graph = new Map<string, string[]>();
  const longFunctions: string[] = [];
  for (const [path, text] of files) {
    const read = readTypeScript(path, text, known);
    graph.set(path, read.imports);
    longFunctions.push(...read.longFunctions);
  }
  return { graph, longFunctions };
}

let tree: ReturnType<typeof readTree> | undefined;
/** The project's TypeScript outside tests, read once. */
function projectTree(): ReturnType<typeof readTree> {
  tree ??= readTree(new Map(sourceFiles(/\.ts$/).map((path) => [path, readFileSync(join(REPO, path), 'utf8')])));
  return tree;
}

const PYTHON_LONG_FUNCTIONS = `
import ast, sys
for path in sys.argv[1:]:
    with open(path, encoding="utf8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > ${MAX_FUNCTION_LINES}:
            print(f"{path}:{node.lineno} {node.name} is {node.end_lineno - node.lineno + 1} lines")
`;

test('the checks see a circle closed by a type-only import, and a function over 150 lines', () => {
  const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const v${i} = ${i};`).join('\n');
  const files = new Map([
    ['env/a.ts', "import { b } from './b.js';\nexport const a = b;\n"],
    ['env/b.ts', "import type { C } from './sub/c.js';\nexport const b = 1;\nexport type B = C;\n"],
    ['env/sub/c.ts', "export type { A } from '../a.js';\nexport type C = number;\n"],
    ['env/d.ts', `import { a } from './a.js';\nexport function long(): void {\n${body}\n}\nexport const short = () => a;\n`],
  ]);
  const { graph, longFunctions } = readTree(files);
  assert.deepEqual(circles(graph), [['env/a.ts', 'env/b.ts', 'env/sub/c.ts']]);
  assert.deepEqual(longFunctions, [`env/d.ts:2 long is ${MAX_FUNCTION_LINES + 2} lines`]);
});

test('no circle of files among the TypeScript sources (type-only imports count)', () => {
  const { graph } = projectTree();
  assert.ok(graph.size > 100, `read only ${graph.size} TypeScript files`);
  const found = circles(graph).map((component) => component.join(' <-> '));
  assert.equal(found.join('\n'), '', 'move what both sides of a circle need into a module of its own, below both');
});

test(`no TypeScript function outside tests is over ${MAX_FUNCTION_LINES} lines`, () => {
  assert.equal(projectTree().longFunctions.join('\n'), '', 'split it into named steps');
});

test(`no Python function outside tests is over ${MAX_FUNCTION_LINES} lines`, () => {
  const files = sourceFiles(/\.py$/);
  assert.ok(files.length > 20, `read only ${files.length} Python files`);
  const long = execFileSync('python3', ['-c', PYTHON_LONG_FUNCTIONS, ...files], { cwd: REPO, encoding: 'utf8' }).trim();
  assert.equal(long, '', 'split it into named steps');
});
