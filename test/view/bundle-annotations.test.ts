/**
 * `vistool view --bundle` and annotations: a run's annotations.jsonl, written through the real
 * writer (an annotation, its edit, another one and its removal), reaches the bundle as the
 * annotations that stand, and the page's static backend answers the panel protocol's
 * `annotations/list` with them, read-only. Hostile comment text stays data: never markup in a
 * page, never a raw `<` in a script. Expected values are what this test wrote.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { runInThisContext } from 'node:vm';
import { writeBundle } from '../../env/view/bundle.js';
import { ANNOTATIONS_FILE, deleteAnnotation, saveAnnotation } from '../../env/runs/annotations.js';
import { StaticBackend } from '../../webview/shared/static-backend.js';
import type { BundleData } from '../../protocol/bundle.js';
import type { HostToPanelMessage, PanelToHostMessage } from '../../protocol/panel-protocol.js';
import { HOSTILE_TEXT, TABLE_GROUP, writeRunDirectory } from '../runs/run-directory.js';
import { ensureBundles, ASSETS } from '../webview/browser-harness.js';

const IMG_ONERROR = '<img src=x onerror=alert(1)>';
const KEPT_COMMENT = `copies the header instead of the cell ${IMG_ONERROR}\n${HOSTILE_TEXT}`;
const KEPT_TAGS = ['copies label', 'bad:crop'];
const KEPT_TARGET = { kind: 'step' as const, step: 1, line: 0, prompt_id: 'fixture-table' };
// A prompt id is free text in the schema: hostile text there must stay data too.
const EVAL_TARGET = { kind: 'eval' as const, step: 2, key: 'eval-after_rl', line: 1, prompt_id: `held-out ${IMG_ONERROR}` };
const EVAL_COMMENT = 'a held-out one, kept';

let root: string;
let annotated: string;
let plain: string;
let out: string;
let keptId: string;
let evalId: string;
let annotationsFile: string;

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return (await Promise.all(entries.map((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])))).flat();
}

/** Runs data/bundle.js as the page does (a script setting window.__vistoolBundle), in this realm so deepEqual sees plain objects. */
function loadBundleData(script: string): BundleData {
  const page: { __vistoolBundle?: BundleData } = {};
  (runInThisContext(`(function (window) {\n${script}\n})`) as (w: typeof page) => void)(page);
  assert.ok(page.__vistoolBundle, 'data/bundle.js sets window.__vistoolBundle');
  return page.__vistoolBundle;
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'vistool-bundle-annotations-'));
  annotated = await writeRunDirectory(join(root, 'annotated'), { rolloutSteps: [1], groups: [TABLE_GROUP], metricRows: 2 });
  plain = await writeRunDirectory(join(root, 'plain'), { metricRows: 2 });
  // The history a person leaves: a first save, its edit, another annotation, and one saved then removed.
  const first = await saveAnnotation(annotated, { target: KEPT_TARGET, tags: ['first thought'], comment: 'before the edit' }, 100);
  keptId = first.id;
  await saveAnnotation(annotated, { id: keptId, target: KEPT_TARGET, tags: KEPT_TAGS, comment: KEPT_COMMENT }, 200);
  evalId = (await saveAnnotation(annotated, { target: EVAL_TARGET, tags: [], comment: EVAL_COMMENT }, 300)).id;
  const removed = await saveAnnotation(annotated, { target: { ...KEPT_TARGET, line: 1 }, tags: ['removed later'], comment: 'gone' }, 400);
  await deleteAnnotation(annotated, removed.id, 500);
  annotationsFile = await readFile(join(annotated, ANNOTATIONS_FILE), 'utf8');
  assert.equal(annotationsFile.trim().split('\n').length, 5, 'the writer appended five lines');
  await ensureBundles();
  out = join(root, 'bundle');
  await writeBundle([annotated, plain], out, ASSETS);
});

test("data/bundle.js holds each run's standing annotations: the edit, not the first save; not the removed one; tags and comment as written", async () => {
  const data = loadBundleData(await readFile(join(out, 'data', 'bundle.js'), 'utf8'));
  assert.deepEqual(data.annotations.annotated, {
    annotations: [
      { id: keptId, time: 200, target: KEPT_TARGET, tags: KEPT_TAGS, comment: KEPT_COMMENT },
      { id: evalId, time: 300, target: EVAL_TARGET, tags: [], comment: EVAL_COMMENT },
    ],
    problems: [],
  });
  assert.deepEqual(data.annotations.plain, { annotations: [], problems: [] }, 'a run without annotations.jsonl has none, and none of another run');
  assert.equal(await readFile(join(annotated, ANNOTATIONS_FILE), 'utf8'), annotationsFile, 'writing a bundle leaves the run unchanged');
});

test("the page's static backend answers annotations/list with them, and refuses to save or remove one", async () => {
  const data = loadBundleData(await readFile(join(out, 'data', 'bundle.js'), 'utf8'));
  // The backend hooks window.__vistoolBundleChunk on construction; in Node the page's window is this stand-in.
  (globalThis as unknown as { window: object }).window = {};
  const backend = new StaticBackend(data);
  const ask = async (id: string, method: string, params: unknown) => {
    const reply = (await backend.handle({ kind: 'request', id, method, params } as PanelToHostMessage)) as Extract<HostToPanelMessage, { kind: 'response' }> | null;
    assert.ok(reply && reply.kind === 'response' && reply.id === id && reply.method === method, `${method} is answered`);
    return reply;
  };
  const listed = await ask('1', 'annotations/list', { runId: 'annotated' });
  assert.ok(listed.ok, JSON.stringify(listed));
  const result = listed.result as { runId: string; annotations: { id: string; tags: string[]; comment: string; target: unknown }[]; problems: string[] };
  assert.equal(result.runId, 'annotated');
  assert.deepEqual(
    result.annotations.map((a) => [a.id, a.tags, a.comment, a.target]),
    [
      [keptId, KEPT_TAGS, KEPT_COMMENT, KEPT_TARGET],
      [evalId, [], EVAL_COMMENT, EVAL_TARGET],
    ],
  );
  assert.deepEqual(result.problems, []);
  const none = await ask('2', 'annotations/list', { runId: 'plain' });
  assert.ok(none.ok);
  assert.deepEqual((none.result as { annotations: unknown[] }).annotations, []);
  const missing = await ask('3', 'annotations/list', { runId: 'no-such-run' });
  assert.ok(!missing.ok);
  assert.match(missing.error.message, /no run 'no-such-run' in this bundle; it holds: annotated, plain/);
  const save = await ask('4', 'annotations/save', { runId: 'annotated', target: KEPT_TARGET, tags: ['new'], comment: 'x' });
  assert.ok(!save.ok);
  assert.match(save.error.message, /annotations cannot be changed here: this is a static bundle/);
  const remove = await ask('5', 'annotations/delete', { runId: 'annotated', id: keptId });
  assert.ok(!remove.ok);
  assert.match(remove.error.message, /annotations cannot be changed here/);
});

test('hostile annotation text is data: in no HTML page of the bundle, and escaped in its scripts (no raw <, no </script)', async () => {
  const files = (await walk(out)).filter((f) => !relative(out, f).startsWith('static/'));
  const pages = files.filter((f) => f.endsWith('.html'));
  assert.deepEqual(pages.map((f) => relative(out, f)).sort(), ['dashboard.html', 'index.html', 'viewer.html']);
  for (const page of pages) {
    const html = await readFile(page, 'utf8');
    for (const fragment of ['onerror', 'alert(1)', '__xss', 'copies the header', 'held-out']) assert.ok(!html.includes(fragment), `${relative(out, page)} holds ${fragment}`);
    assert.doesNotMatch(html, /<img/i, relative(out, page));
  }
  const script = await readFile(join(out, 'data', 'bundle.js'), 'utf8');
  assert.ok(!script.includes('<'), 'every < in data/bundle.js is a \\u003c escape');
  assert.ok(script.includes('\\u003cimg src=x onerror=alert(1)\\u003e'), 'the comment is there, escaped');
});
