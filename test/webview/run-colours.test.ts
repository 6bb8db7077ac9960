import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIMMED_RUN_ALPHA, drawnRunColour, runColourIndices, withAlpha } from '../../webview/shared/run-colours.js';

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

test('while a run is selected, it keeps its colour at full opacity and the other runs are drawn dimmed; with none selected every run keeps its own', () => {
  assert.equal(drawnRunColour('#1a85ff', 'run-a', null), '#1a85ff');
  assert.equal(drawnRunColour('#1a85ff', 'run-a', 'run-a'), '#1a85ff');
  // #1a85ff is 26, 133, 255.
  assert.equal(drawnRunColour('#1a85ff', 'run-a', 'run-b'), `rgba(26, 133, 255, ${DIMMED_RUN_ALPHA})`);
  assert.ok(DIMMED_RUN_ALPHA > 0 && DIMMED_RUN_ALPHA <= 0.5);
});

test('a colour at a fraction of its opacity, in each form a theme hands over; a form it cannot read comes back as it was', () => {
  assert.equal(withAlpha('#d18616', 0.25), 'rgba(209, 134, 22, 0.25)');
  assert.equal(withAlpha('#D18616', 0.25), 'rgba(209, 134, 22, 0.25)');
  assert.equal(withAlpha('#fa0', 0.5), 'rgba(255, 170, 0, 0.5)');
  // #rrggbbaa: 0x80 is 128/255 opaque, then halved.
  assert.equal(withAlpha('#3794ff80', 0.5), `rgba(55, 148, 255, ${Math.round((128 / 255) * 0.5 * 1000) / 1000})`);
  assert.equal(withAlpha('rgb(55, 148, 255)', 0.3), 'rgba(55, 148, 255, 0.3)');
  assert.equal(withAlpha('rgba(55, 148, 255, 0.5)', 0.5), 'rgba(55, 148, 255, 0.25)');
  assert.equal(withAlpha('rgb(55 148 255 / 50%)', 0.5), 'rgba(55, 148, 255, 0.25)');
  // A dimmed colour dimmed again (the raw line behind a dimmed run's smoothed one) multiplies.
  assert.equal(withAlpha(withAlpha('#1a85ff', 0.3), 0.25), 'rgba(26, 133, 255, 0.075)');
  assert.equal(withAlpha('orange', 0.5), 'orange');
});
