import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { editorSchema } from '../../env/config/editor-schema.js';
import { selfContainedSchema } from '../../env/config/run-config-schema.js';
import { Commands } from '../../extension/command-ids.js';

const root = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  main: string;
  activationEvents: string[];
  extensionKind: string[];
  capabilities: { untrustedWorkspaces: { supported: unknown; restrictedConfigurations?: string[] } };
  contributes: {
    commands: { command: string; title: string; category: string; enablement?: string }[];
    views: Record<string, { id: string }[]>;
    viewsContainers: { activitybar: { id: string; icon: string }[] };
    menus: Record<string, { command: string; when?: string }[]>;
    viewsWelcome: { view: string; contents: string; when?: string }[];
    jsonValidation: { fileMatch: string; url: string }[];
    configuration: { properties: Record<string, { default: unknown }> };
  };
};

test('every command the code registers is contributed under the vistool category, and nothing else is', () => {
  const contributed = manifest.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(contributed, Object.values(Commands).sort());
  for (const command of manifest.contributes.commands) assert.equal(command.category, 'vistool', command.command);
});

test('menus name only contributed commands', () => {
  const known = new Set(manifest.contributes.commands.map((c) => c.command));
  for (const [menu, items] of Object.entries(manifest.contributes.menus)) {
    for (const item of items) assert.ok(known.has(item.command), `${menu} names unknown command ${item.command}`);
  }
});

test('the activity-bar container holds the Runs, Datasets and Configs views and its icon exists', () => {
  assert.deepEqual(manifest.contributes.views.vistool?.map((v) => v.id), ['vistool.runs', 'vistool.datasets', 'vistool.configs']);
  for (const container of manifest.contributes.viewsContainers.activitybar) assert.ok(existsSync(join(root, container.icon)), container.icon);
});

test('*.vistool.json files get the self-contained build of the one run-config schema, without its validating keywords (the extension reports those problems)', () => {
  assert.deepEqual(manifest.contributes.jsonValidation, [{ fileMatch: '*.vistool.json', url: './dist/run-config.schema.json' }]);
  const built = join(root, 'dist', 'run-config.schema.json');
  // The build writes it from `vistool config schema --for-editor`; when it exists it must not be stale.
  if (existsSync(built)) assert.deepEqual(JSON.parse(readFileSync(built, 'utf8')), editorSchema(selfContainedSchema()));
});

test('the extension runs beside the files (workspace kind), limits itself in untrusted workspaces and launches nothing there', () => {
  assert.deepEqual(manifest.extensionKind, ['workspace']);
  assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
  for (const setting of manifest.capabilities.untrustedWorkspaces.restrictedConfigurations ?? []) {
    assert.ok(setting in manifest.contributes.configuration.properties, `restricted setting ${setting} is not contributed`);
  }
  const launching = [Commands.startRun, Commands.resumeRun, Commands.generateTasks, Commands.evaluateCheckpoint, Commands.checkTrainerEnvironment, Commands.setUpTrainerEnvironment];
  for (const id of launching) assert.equal(manifest.contributes.commands.find((c) => c.command === id)?.enablement, 'isWorkspaceTrusted', id);
});

test('it activates on run configs, run folders and restored panels, and its entry point is the bundle', () => {
  assert.ok(manifest.activationEvents.includes('workspaceContains:**/*.vistool.json'));
  for (const panel of ['dashboard', 'viewer', 'playground']) assert.ok(manifest.activationEvents.includes(`onWebviewPanel:vistool.${panel}`), panel);
  assert.equal(manifest.main, './dist/extension.js');
});

test('a view says it is looking until its first scan is done, and only then that it found nothing', () => {
  const source = (file: string) => readFileSync(join(root, 'extension', file), 'utf8');
  const markers: Record<string, string> = { 'vistool.runs': 'runs/runs-tree.ts', 'vistool.datasets': 'datasets/datasets-tree.ts', 'vistool.configs': 'configs/configs-tree.ts' };
  for (const [view, file] of Object.entries(markers)) {
    const entries = manifest.contributes.viewsWelcome.filter((w) => w.view === view);
    const key = `vistool.${view.slice('vistool.'.length)}Scanned`;
    assert.deepEqual(entries.map((w) => w.when), [`!${key}`, key], view);
    assert.match(entries[0]!.contents, /^Looking for /);
    assert.match(entries[1]!.contents, /^No /);
    // The view's provider sets that key once its scan has returned.
    assert.match(source(file), new RegExp(`markScanned\\('${view.slice('vistool.'.length)}'\\)`), file);
  }
  // The key's spelling in the helper the providers call.
  assert.match(source('view-scan-state.ts'), /return `vistool\.\$\{view\}Scanned`;/);
});
