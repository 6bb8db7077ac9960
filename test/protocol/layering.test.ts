/**
 * The layering rules of docs/ARCHITECTURE.md, read from the import statements of every source
 * file: the engine never reaches into the editor or the panels, the run readers never into the
 * panel backend, the panels never into Node or the engine, protocol/ into nothing, and inside
 * webview/ the shared pieces depend on no panel.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

const REPO = resolve(__dirname, '..', '..');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Edge { file: string; specifier: string; target: string | null }

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every import of the files under `dir`; `target` is the repo-relative path of a relative import. */
function importsUnder(dir: string): Edge[] {
  return sourceFiles(dir).flatMap((file) => {
    const text = readFileSync(join(REPO, file), 'utf8');
    return [...text.matchAll(IMPORT)].map((m) => {
      const specifier = m[1] ?? m[2] ?? m[3] ?? '';
      const target = specifier.startsWith('.') ? relative(REPO, resolve(REPO, dirname(file), specifier)) : null;
      return { file, specifier, target };
    });
  });
}

const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
const within = (target: string | null, dir: string): boolean => target !== null && (target === dir || target.startsWith(`${dir}/`));
const show = (edges: Edge[]): string => edges.map((e) => `${e.file} imports ${e.specifier}`).join('\n');

test('the import reader sees every form of import the tree uses', () => {
  const forms = importsUnder('webview').map((e) => e.specifier);
  assert.ok(forms.includes('chart.js'), 'a package import');
  assert.ok(forms.some((s) => s.startsWith('@vscode-elements/')), 'a side-effect import');
  assert.ok(forms.some((s) => s.startsWith('../../protocol/')), 'a relative import');
});

test('env/ never imports vscode, the extension or the panels', () => {
  const wrong = importsUnder('env').filter((e) => e.specifier === 'vscode' || within(e.target, 'webview') || within(e.target, 'extension'));
  assert.equal(show(wrong), '');
});

test('env/runs/ reads runs without the panel backend (env/view/)', () => {
  assert.equal(show(importsUnder('env/runs').filter((e) => within(e.target, 'env/view'))), '');
});

test('webview/ holds no Node code and imports nothing from env/ or extension/', () => {
  const wrong = importsUnder('webview').filter((e) => NODE_BUILTINS.has(e.specifier) || within(e.target, 'env') || within(e.target, 'extension') || within(e.target, 'trainer'));
  assert.equal(show(wrong), '');
});

test('protocol/ is neutral: it imports only itself', () => {
  assert.equal(show(importsUnder('protocol').filter((e) => e.target === null || !within(e.target, 'protocol'))), '');
});

test("inside webview/, shared/ depends on no panel and no panel on another's files", () => {
  const panels = ['dashboard', 'viewer', 'playground'];
  const wrong = importsUnder('webview').filter((e) => {
    if (e.target === null || !within(e.target, 'webview')) return false;
    const from = e.file.split('/')[1]!;
    const to = e.target.split('/')[1]!;
    if (from === 'shared') return to !== 'shared';
    return panels.includes(from) && panels.includes(to) && from !== to;
  });
  assert.equal(show(wrong), '');
});
