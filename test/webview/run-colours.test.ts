import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runColourIndices } from '../../webview/shared/run-colours.js';

const REPO = join(__dirname, '..', '..');

test('the demo arms keep their colours wherever they are listed: tools the first series colour, text the second; other runs the next free ones', () => {
  // `vistool view runs/demo` lists the folder's runs by name: text before tools.
  assert.deepEqual(runColourIndices(['text', 'tools']), [1, 0]);
  assert.deepEqual(runColourIndices(['tools', 'text']), [0, 1]);
  assert.deepEqual(runColourIndices(['text', 'seed-2', 'tools']), [1, 2, 0]);
  // Without arms, the order the runs are listed in.
  assert.deepEqual(runColourIndices(['run-a', 'run-b', 'run-c']), [0, 1, 2]);
  // One arm alone keeps its colour; the other runs skip it.
  assert.deepEqual(runColourIndices(['alpha', 'text', 'beta']), [0, 1, 2]);
  assert.deepEqual(runColourIndices(['alpha', 'tools', 'beta']), [1, 0, 2]);
});

test('the demo report draws each arm in the colour the panels give it (the light theme\'s series colours)', () => {
  const report = readFileSync(join(REPO, 'trainer', 'vistool_trainer', 'run', 'demo_report.py'), 'utf8');
  const theme = readFileSync(join(REPO, 'webview', 'shared', 'theme.ts'), 'utf8');
  const arms = /ARM_COLOURS = \{"tools": "(#[0-9a-f]{6})", "text": "(#[0-9a-f]{6})"\}/i.exec(report);
  const blue = /--vscode-charts-blue', '(#[0-9a-f]{6})'/i.exec(theme);
  const orange = /--vscode-charts-orange', '(#[0-9a-f]{6})'/i.exec(theme);
  assert.ok(arms && blue && orange);
  assert.deepEqual([arms[1], arms[2]], [blue[1], orange[1]]);
});
