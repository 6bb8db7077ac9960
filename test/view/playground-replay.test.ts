/**
 * A logged call replayed in the playground (the viewer's "Replay in playground"): opening the task
 * image with the calls applies each as Apply would, so the result is what opening and applying
 * gives, pixel for pixel; the first call that fails stops the replay with its error and stays the
 * call the form holds. A task record's `meta` is metadata with or without its question, and
 * `vistool view` lets the playground open images under the folders it was given.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlaygroundSessions } from '../../env/view/playground-sessions.js';
import { PanelBackend } from '../../env/view/panel-backend.js';
import { tableFixture } from '../fixtures/render.js';
import { writeDemoFolder } from '../runs/demo-folder.js';

const mask = { name: 'focus_on_columns_with_mask', arguments: { columns: ['Rider', 'Wins'] } };
const highlight = { name: 'focus_on_rows_with_highlight', arguments: { rows: ['Merckx'] } };

test('replaying calls gives the images that opening and applying them one by one gives', async () => {
  const fixture = await tableFixture();
  const sessions = new PlaygroundSessions([]);
  const image = { name: 'table.png', base64: fixture.png.toString('base64') };
  // The metadata as the viewer sends it: the task record's line (here without a question).
  const metadata = { name: 'fixture-table.json', text: JSON.stringify({ id: 'fixture-table', image: 'table.png', meta: fixture.meta }), source: 'task fixture-table' };
  const replayed = await sessions.open({ session: 'replay', image, metadata, calls: [mask, highlight] });
  await sessions.open({ session: 'by-hand', image, metadata });
  await sessions.apply('by-hand', mask);
  const byHand = await sessions.apply('by-hand', highlight);
  assert.equal(replayed.error, null);
  assert.deepEqual(replayed.calls.map((c) => c.call), [mask, highlight]);
  assert.deepEqual(replayed.images.map((i) => i.src), byHand.images.map((i) => i.src));
  assert.deepEqual(replayed.replayed, highlight);
  assert.equal(replayed.metadataSource, 'task fixture-table');
  // Once anything else is applied (or undone), the session is no longer a replay: a reloaded page does not say it is.
  assert.equal((await sessions.apply('replay', mask)).replayed, null);
  assert.equal(byHand.replayed, null);
});

test('a replayed call that fails stops the replay: its error is shown, the calls before it applied, the call kept', async () => {
  const fixture = await tableFixture();
  const sessions = new PlaygroundSessions([]);
  const bad = { name: 'focus_on_columns_with_mask', arguments: { columns: ['Points'] } };
  const snapshot = await sessions.open({ session: 's', image: { name: 'table.png', base64: fixture.png.toString('base64') }, metadata: { name: 'm.json', text: JSON.stringify(fixture.meta) }, calls: [mask, bad, highlight] });
  assert.equal(snapshot.error?.class, 'E4');
  assert.deepEqual(snapshot.calls.map((c) => c.call), [mask]);
  assert.deepEqual(snapshot.replayed, bad);
});

test('the playground of vistool view may open the task images a folder of runs holds beside its runs', async () => {
  const root = await mkdtemp(join(tmpdir(), 'vistool-replay-'));
  const { tools, text } = await writeDemoFolder(join(root, 'demo'));
  const image = join(root, 'demo', 'data', 'eval', 'table.png');
  // As the CLI builds it for `vistool view runs/demo`: the expanded runs, and the folder given as a root.
  const viewing = new PanelBackend({ runs: [tools, text], roots: [join(root, 'demo')] });
  const snapshot = await viewing.openInPlayground(image, 's', undefined, [mask]);
  assert.equal(snapshot.calls.length, 1);
  // Only the run directories: the folder's data is outside them, and refused.
  const runsOnly = new PanelBackend({ runs: [tools, text] });
  await assert.rejects(runsOnly.openInPlayground(image), /outside the allowed root/);
  // VS Code: the host allows the run that sent an image.
  await mkdir(join(root, 'elsewhere'));
  await writeFile(join(root, 'elsewhere', 'x.png'), (await tableFixture()).png);
  const editor = new PanelBackend({ runs: [] });
  await assert.rejects(editor.openInPlayground(join(root, 'elsewhere', 'x.png')), /opening files by path is off|outside the allowed root/);
  editor.allowPlaygroundRoot(join(root, 'elsewhere'));
  assert.equal((await editor.openInPlayground(join(root, 'elsewhere', 'x.png'))).name, 'x.png');
});
