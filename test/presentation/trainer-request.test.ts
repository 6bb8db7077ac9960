/**
 * The trainer and `vistool eval` open a run's episodes alike: for the same run config, the
 * trainer's episode-start options (trainer/vistool_trainer/rollouts/presentation.py, read through
 * its own config loader) and env/presentation/run-config.ts's give the env the same presentation,
 * tools switch, limits and policy pixel bounds, in both arms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePresentation } from '../../env/presentation/presentation.js';
import { episodeOptionsOf, episodeSettingsOf } from '../../env/presentation/run-config.js';

const root = join(__dirname, '..', '..');
const python = join(root, '.venv', 'bin', 'python');

function trainerOptions(configPath: string): Record<string, Record<string, unknown>> {
  const script = [
    'import json, sys',
    'from pathlib import Path',
    'from vistool_trainer.run.run_config import load_config',
    'from vistool_trainer.rollouts.presentation import episode_options',
    'options = episode_options(load_config(Path(sys.argv[1])))',
    'print(json.dumps({"tools": options.request(tools=True), "no_tools": options.request(tools=False)}))',
  ].join('\n');
  const result = spawnSync(python, ['-c', script, configPath], { encoding: 'utf8', cwd: join(root, 'trainer') });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout) as Record<string, Record<string, unknown>>;
}

test('for the same run config the trainer and the eval ask the env for the same episodes', { skip: existsSync(python) ? false : 'no .venv (make venv): the trainer side of the comparison runs in it' }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'vistool-presentation-configs-'));
  const inline = [
    { policy: { system_prompt: { tools: 'only the tools arm' } }, env: { max_tool_calls: 0, max_turns: 5 } },
    { policy: { system_prompt: 'S', view: { images_first: true } }, env: { tools: false } },
    // The pixel bounds: policy.micro's for micro (policy.min/max_pixels do not apply), else policy's.
    { policy: { model: 'micro', min_pixels: 1000, max_pixels: 2000, micro: { min_pixels: 6272, max_pixels: 200_704 } } },
    { policy: { model: 'Qwen/Qwen2.5-VL-3B-Instruct', min_pixels: 12_544 } },
  ].map((config, i) => {
    const path = join(scratch, `inline-${i}.json`);
    writeFileSync(path, JSON.stringify(config));
    return path;
  });
  const configs = ['examples/micro-cpu.vistool.json', 'examples/dapo-qwen2.5-vl-3b-4gpu.vistool.json', 'test/extension/in-editor/workspace/micro-tiny.vistool.json']
    .map((path) => join(root, path))
    .concat(inline);
  for (const path of configs) {
    const settings = episodeSettingsOf(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>);
    const trainer = trainerOptions(path);
    for (const arm of ['tools', 'no_tools'] as const) {
      const mine = episodeOptionsOf(settings, arm === 'tools');
      const theirs = trainer[arm] ?? {};
      assert.ok(theirs.pixel_bounds, `${path} (${arm}): the trainer sends the policy's pixel bounds`);
      // What the env applies: the block as its parser reads it (absent arms and keys filled).
      assert.deepEqual({ ...theirs, presentation: parsePresentation(theirs.presentation) }, { ...mine, images: theirs.images }, `${path} (${arm})`);
    }
  }
});
