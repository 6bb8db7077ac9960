import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createDataGenCommand } from '../../env/cli/data-gen.js';
import { diskFirstLines, diskPathKind, type EnvironmentFacts } from '../../env/config/environment-facts.js';
import { JsonText } from '../../env/config/json-text.js';
import type { ConfigProblem } from '../../env/config/problem.js';
import { withDefaults } from '../../env/config/run-config-schema.js';
import { validateRunConfigText } from '../../env/config/validate-run-config.js';

const root = join(__dirname, '..', '..');

function facts(overrides: Partial<EnvironmentFacts> = {}): EnvironmentFacts {
  return { cudaDevices: null, bf16: null, envVars: new Set(), pathKind: diskPathKind, huggingFaceCache: null, ...overrides };
}

function check(text: string, options: { baseDir?: string; facts?: EnvironmentFacts } = {}): ConfigProblem[] {
  return validateRunConfigText(text, { baseDir: options.baseDir ?? root, facts: options.facts ?? facts() }).problems;
}

function codes(problems: ConfigProblem[]): string[] {
  return problems.map((p) => p.code);
}

/** Applies a problem's first fix to the text, as the editor's quick fix does. */
function applyFirstFix(text: string, found: ConfigProblem): string {
  const fix = found.fixes[0];
  assert.ok(fix, `${found.code} has no fix`);
  const edits = new JsonText(text).editsFor(fix).sort((a, b) => b.offset - a.offset);
  let result = text;
  for (const edit of edits) result = result.slice(0, edit.offset) + edit.content + result.slice(edit.offset + edit.length);
  return result;
}

const config = (value: unknown) => JSON.stringify(value, null, 2);

test('the examples can be copied anywhere: none points at a schema by a path into this repository', async () => {
  // A relative "$schema" breaks once the file is copied into a workspace ("Unable to load schema"), and it
  // overrides the extension's own *.vistool.json mapping, so the editor stops showing schema errors.
  const names = (await readdir(join(root, 'examples'))).filter((name) => name.endsWith('.vistool.json'));
  assert.ok(names.length >= 5, names.join(', '));
  for (const name of names) {
    const example = JSON.parse(await readFile(join(root, 'examples', name), 'utf8')) as Record<string, unknown>;
    assert.equal(example.$schema, undefined, name);
  }
});

test('the shipped micro CPU examples (bars and geometry) have no errors or warnings', async () => {
  for (const name of ['micro-cpu.vistool.json', 'micro-geometry.vistool.json']) {
    const text = await readFile(join(root, 'examples', name), 'utf8');
    assert.deepEqual(check(text).filter((p) => p.severity !== 'info'), [], name);
  }
});

test('question families must fit the kind: chart families on geometry, or geometry families on a chart, are errors that offer null', () => {
  const onGeometry = config({ name: 'x', data: { generate: { kind: 'geometry', families: ['above_below', 'argmax'] } } });
  const [found] = check(onGeometry).filter((p) => p.code === 'data/families-kind');
  assert.ok(found);
  assert.equal(found.severity, 'error');
  assert.match(found.message, /data\.generate\.families argmax is not asked of kind 'geometry': geometry asks above_below, same_side/);
  assert.deepEqual(codes(check(applyFirstFix(onGeometry, found))), []);
  const onChart = check(config({ name: 'x', data: { generate: { kind: 'vbar', families: ['locate'] } } })).filter((p) => p.code === 'data/families-kind');
  assert.match(onChart[0]?.message ?? '', /locate is not asked of kind 'vbar'/);
  assert.deepEqual(codes(check(config({ name: 'x', data: { generate: { kind: 'geometry', families: ['locate', 'same_side'] } } }))), []);
});

test('ε_high below ε_low is an error on rl.clip_ratio_high, and its fix makes the config clean', () => {
  const text = config({ name: 'x', rl: { clip_ratio_low: 0.3, clip_ratio_high: 0.2 } });
  const [found] = check(text).filter((p) => p.code === 'rl/clip-high-below-low');
  assert.ok(found);
  assert.equal(found.severity, 'error');
  assert.equal(text.slice(found.start?.offset, found.end?.offset), '0.2');
  assert.deepEqual({ line: found.start?.line, column: found.start?.column }, { line: 5, column: 24 });
  assert.match(found.message, /ε_high = 0\.2.*ε_low = 0\.3/);
  assert.deepEqual(codes(check(applyFirstFix(text, found))), []);
});

test("rl.train_turns 'final' is the veRL bridge's: an error unless engine is 'verl', and its fix makes the config clean", () => {
  const text = config({ name: 'x', rl: { train_turns: 'final' } });
  const [found] = check(text).filter((p) => p.code === 'rl/train-turns-verl-only');
  assert.ok(found);
  assert.equal(found.severity, 'error');
  assert.equal(text.slice(found.start?.offset, found.end?.offset), '"final"');
  assert.match(found.message, /carried out by the veRL bridge.*Set engine to 'verl'.*or rl\.train_turns to 'all'/);
  assert.deepEqual(codes(check(applyFirstFix(text, found))), []);
  assert.deepEqual(codes(check(config({ name: 'x', engine: 'verl', rl: { train_turns: 'final' } }))), []);
});

test('a problem about a defaulted key lands on the key the text has', () => {
  // clip_ratio_high is absent (default 0.28), clip_ratio_low is written as 0.5.
  const text = config({ rl: { clip_ratio_low: 0.5 } });
  const [found] = check(text);
  assert.equal(found?.code, 'rl/clip-high-below-low');
  assert.equal(text.slice(found?.start?.offset, found?.end?.offset), '0.5');
  assert.deepEqual(codes(check(applyFirstFix(text, found!))), [], 'the fix inserts rl.clip_ratio_high');
});

test('a GRPO group of one is an error that offers 8, and RL turned off silences it', () => {
  const [found] = check(config({ rl: { group_size: 1 } }));
  assert.equal(found?.code, 'rl/group-too-small');
  assert.deepEqual(found?.fixes[0], { kind: 'set', title: 'Set rl.group_size to 8', pointer: '/rl/group_size', value: 8 });
  assert.deepEqual(check(config({ rl: { enabled: false, group_size: 1 } })), []);
});

test('importance weights without the vLLM engine are an error offering both ways out; with vLLM or RL off there is none', () => {
  const [found, ...rest] = check(config({ rl: { rollout_is: 'token' } }));
  assert.equal(found?.code, 'rl/rollout-is-needs-vllm');
  assert.match(found?.message ?? '', /rl\.rollout_engine is 'hf'/);
  assert.deepEqual(found?.fixes.map((fix) => [fix.pointer, fix.kind === 'set' ? fix.value : undefined]), [['/rl/rollout_is', 'off'], ['/rl/rollout_engine', 'vllm']]);
  assert.deepEqual(rest.filter((p) => p.code === 'rl/rollout-is-needs-vllm'), []);
  assert.deepEqual(check(config({ rl: { rollout_is: 'sequence', rollout_engine: 'vllm' } })).filter((p) => p.code === 'rl/rollout-is-needs-vllm'), []);
  assert.deepEqual(check(config({ rl: { enabled: false, rollout_is: 'token' } })).filter((p) => p.code === 'rl/rollout-is-needs-vllm'), []);
});

test('folding the adapters with the vLLM engine is an error offering both ways out; with the transformers sampler there is none', () => {
  const found = check(config({ rl: { fold_lora_for_sampling: true, rollout_engine: 'vllm' } })).filter((p) => p.code === 'rl/fold-needs-hf');
  assert.equal(found.length, 1);
  assert.match(found[0]?.message ?? '', /rl\.rollout_engine is 'vllm'/);
  assert.deepEqual(found[0]?.fixes.map((fix) => [fix.pointer, fix.kind === 'set' ? fix.value : undefined]), [['/rl/fold_lora_for_sampling', false], ['/rl/rollout_engine', 'hf']]);
  assert.deepEqual(check(config({ rl: { fold_lora_for_sampling: true } })).filter((p) => p.code === 'rl/fold-needs-hf'), []);
  assert.deepEqual(check(config({ rl: { enabled: false, fold_lora_for_sampling: true, rollout_engine: 'vllm' } })).filter((p) => p.code === 'rl/fold-needs-hf'), []);
});

test('a batch that micro-batches do not divide evenly is a warning that names a divisor', () => {
  const [found] = check(config({ rl: { prompts_per_step: 3, group_size: 6, micro_batch_size: 8 } }));
  assert.equal(found?.code, 'rl/micro-batch-uneven');
  assert.equal(found?.severity, 'warning');
  assert.match(found?.message ?? '', /3 × 6 = 18 rollouts.*last micro-batch holds 2.*6 divides it evenly/);
  assert.deepEqual(check(config({ rl: { prompts_per_step: 4, group_size: 8, micro_batch_size: 8 } })), []);
  // Micro-batches by token budget: rl.micro_batch_size is not read, so its divisibility does not matter.
  assert.deepEqual(check(config({ rl: { prompts_per_step: 3, group_size: 6, micro_batch_size: 8, use_dynamic_bsz: true } })), []);
});

test('an unknown key is a schema error with a rename fix when it is a typo, and a remove fix otherwise', () => {
  const text = config({ env: { imagez: 'path' }, flavour: 'x' });
  const problems = check(text);
  assert.deepEqual(codes(problems), ['schema/unknown-key', 'schema/unknown-key']);
  const [typo, unknown] = problems;
  assert.equal(text.slice(typo?.start?.offset, typo?.end?.offset), '"imagez"');
  assert.match(typo?.message ?? '', /did you mean 'images'/);
  assert.deepEqual(typo?.fixes[0], { kind: 'rename', title: "Rename 'imagez' to 'images'", pointer: '/env/imagez', newKey: 'images' });
  assert.equal(unknown?.fixes[0]?.kind, 'remove');
  const fixed = applyFirstFix(applyFirstFix(text, typo!), check(applyFirstFix(text, typo!))[0]!);
  assert.deepEqual(check(fixed), []);
});

test('schema errors name the key, what is allowed and, for near misses, offer the value meant', () => {
  const problems = check(config({ rl: { advantage: 'gpro', prompts_per_step: '4' }, data: { generate: { image_size: '224*112' } } }));
  const byCode = new Map(problems.map((p) => [p.code, p]));
  assert.match(byCode.get('schema/enum')?.message ?? '', /rl\.advantage is "gpro"; it must be one of "grpo", "dr_grpo"/);
  assert.deepEqual(byCode.get('schema/enum')?.fixes[0], { kind: 'set', title: 'Change to "grpo"', pointer: '/rl/advantage', value: 'grpo' });
  assert.deepEqual(byCode.get('schema/type')?.fixes[0], { kind: 'set', title: 'Change to the number 4', pointer: '/rl/prompts_per_step', value: 4 });
  assert.match(byCode.get('schema/pattern')?.message ?? '', /for example "224x112"/);
});

test('rl.failed_groups takes drop or keep: another word is refused naming the key and both values, a near miss offers the word meant', () => {
  assert.deepEqual(check(config({ rl: { failed_groups: 'keep' } })), []);
  const [refused, ...rest] = check(config({ rl: { failed_groups: 'dorp' } }));
  assert.deepEqual(rest, []);
  assert.equal(refused?.code, 'schema/enum');
  assert.match(refused?.message ?? '', /^rl\.failed_groups is "dorp"; it must be one of "drop", "keep" \(What a GRPO group does when one of its episodes failed at the env server/);
  assert.deepEqual(refused?.fixes[0], { kind: 'set', title: 'Change to "drop"', pointer: '/rl/failed_groups', value: 'drop' });
  assert.equal(check(config({ rl: { failed_groups: true } }))[0]?.code, 'schema/type');
});

test('comments and trailing commas are syntax errors at their line and column, as the trainer reads strict JSON', () => {
  const [comment] = check('{\n  // my run\n  "name": "x"\n}');
  assert.equal(comment?.code, 'syntax/InvalidCommentToken');
  assert.deepEqual([comment?.start?.line, comment?.start?.column], [2, 3]);
  const [trailing] = check('{"name": "x",\n}');
  assert.equal(trailing?.source, 'syntax');
  assert.equal(trailing?.start?.line, 2);
  assert.deepEqual(codes(check('[1, 2]')), ['schema/type']);
});

test('a duplicate key is reported on its second occurrence', () => {
  const text = '{"name": "a", "seed": 1, "name": "b"}';
  const [found] = check(text);
  assert.equal(found?.code, 'syntax/duplicate-key');
  assert.equal(found?.start?.offset, text.lastIndexOf('"name"'));
});

test('task files resolve against the base folder: a missing one offers null (generate), a folder offers its tasks.jsonl', async () => {
  const base = await mkdtemp(join(tmpdir(), 'vistool-config-'));
  await mkdir(join(base, 'data', 'train'), { recursive: true });
  await writeFile(join(base, 'data', 'train', 'tasks.jsonl'), '');
  assert.deepEqual(check(config({ data: { train: 'data/train/tasks.jsonl' } }), { baseDir: base }), []);
  const [missing] = check(config({ data: { eval: 'data/test/tasks.jsonl' } }), { baseDir: base });
  assert.equal(missing?.code, 'data/missing');
  assert.match(missing?.message ?? '', new RegExp(`${join(base, 'data', 'test', 'tasks.jsonl').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, which does not exist`));
  assert.deepEqual(missing?.fixes[0], { kind: 'set', title: 'Set data.eval to null (generate tasks for the run)', pointer: '/data/eval', value: null });
  const [folder] = check(config({ data: { train: 'data/train' } }), { baseDir: base });
  assert.equal(folder?.code, 'data/not-a-file');
  assert.equal(folder?.fixes[0]?.kind === 'set' && folder.fixes[0].value, join('data/train', 'tasks.jsonl'));
});

test('data files are read from their first records: a file that is not a task file is an error naming the line; data outside the workspace a warning', async () => {
  const base = await mkdtemp(join(tmpdir(), 'vistool-config-data-'));
  await createDataGenCommand({ stdout: { write: () => true }, stderr: { write: () => true } }).run(['--kind', 'hbar', '--n', '3', '--seed', '2', '--out', join(base, 'set')]);
  const good = join(base, 'set', 'tasks.jsonl');
  const reading = facts({ firstLines: diskFirstLines, workspaceRoots: [base] });
  assert.deepEqual(check(config({ data: { train: good } }), { facts: reading }), []);

  const [passwd] = check(config({ data: { train: '/etc/passwd' } }), { facts: reading });
  assert.equal(passwd?.code, 'data/not-task-file');
  assert.equal(passwd?.severity, 'error');
  assert.match(passwd?.message ?? '', /data\.train \(\/etc\/passwd\) is not a tasks\.jsonl: line 1 is not JSON \("root:/);
  assert.deepEqual(
    check(config({ data: { train: '/etc/passwd' } }), { facts: facts({ firstLines: diskFirstLines, workspaceRoots: [base] }) }).map((p) => p.code).sort(),
    ['data/not-task-file', 'data/outside-workspace'],
  );

  const lines = (await readFile(good, 'utf8')).trim().split('\n');
  const broken = JSON.parse(lines[2]!) as Record<string, unknown>;
  delete broken.question;
  await writeFile(join(base, 'broken.jsonl'), [lines[0], lines[1], JSON.stringify(broken)].join('\n') + '\n');
  const [third] = check(config({ data: { eval: join(base, 'broken.jsonl') } }), { facts: reading });
  assert.equal(third?.code, 'data/not-task-file');
  assert.match(third?.message ?? '', /line 3: missing field 'question'/);

  const outside = check(config({ data: { train: good } }), { facts: facts({ firstLines: diskFirstLines, workspaceRoots: [join(base, 'elsewhere')] }) });
  assert.deepEqual(outside.map((p) => [p.code, p.severity]), [['data/outside-workspace', 'warning']]);
  assert.match(outside[0]?.message ?? '', /outside the workspace/);
});

test('a model folder must hold config.json; a hub id not in the cache is a note, a path that does not exist an error', async () => {
  const base = await mkdtemp(join(tmpdir(), 'vistool-model-'));
  await mkdir(join(base, 'models', 'empty'), { recursive: true });
  await mkdir(join(base, 'hub', 'models--Qwen--Qwen2.5-VL-3B-Instruct'), { recursive: true });
  const withCache = facts({ huggingFaceCache: join(base, 'hub') });
  assert.deepEqual(codes(check(config({ policy: { model: './models/empty' } }), { baseDir: base })), ['policy/model-folder-without-config']);
  assert.deepEqual(codes(check(config({ policy: { model: './models/nope' } }), { baseDir: base })), ['policy/model-missing']);
  assert.deepEqual(check(config({ policy: { model: 'Qwen/Qwen2.5-VL-3B-Instruct' } }), { baseDir: base, facts: withCache }), []);
  const [note] = check(config({ policy: { model: 'Qwen/Qwen2.5-VL-7B-Instruct' } }), { baseDir: base, facts: withCache });
  assert.equal(note?.code, 'policy/model-not-cached');
  assert.equal(note?.severity, 'info');
  assert.deepEqual(codes(check(config({ policy: { model: 'Qwen/Qwen2.5-VL-3B-Instruct', micro: { text_layers: 2 } } }), { baseDir: base, facts: withCache })), ['policy/micro-unused']);
});

test('CUDA and bfloat16 are checked against what check-env found, and not guessed without a report', () => {
  const cudaConfig = config({ device: 'cuda', policy: { dtype: 'bfloat16' } });
  assert.deepEqual(check(cudaConfig), [], 'no report: no CUDA problem');
  assert.deepEqual(codes(check(cudaConfig, { facts: facts({ cudaDevices: 0 }) })), ['device/no-cuda']);
  assert.deepEqual(check(cudaConfig, { facts: facts({ cudaDevices: 2, bf16: true }) }), []);
  assert.deepEqual(codes(check(cudaConfig, { facts: facts({ cudaDevices: 1, bf16: false }) })), ['dtype/no-bf16']);
  assert.deepEqual(codes(check(config({ device: 'cpu', policy: { dtype: 'bfloat16' } }))), ['dtype/half-on-cpu']);
  assert.deepEqual(codes(check(config({ device: 'auto', policy: { dtype: 'float16' } }), { facts: facts({ cudaDevices: 0 }) })), ['dtype/half-on-cpu']);
});

test('distributed: CPU offload is refused on a CPU run, and options of another strategy are pointed out', () => {
  const offloaded = config({ device: 'cpu', distributed: { strategy: 'fsdp', cpu_offload: true } });
  const [found] = check(offloaded);
  assert.equal(found?.code, 'distributed/offload-on-cpu');
  assert.equal(found?.severity, 'error');
  assert.deepEqual(check(applyFirstFix(offloaded, found!)), [], 'the fix sets cpu_offload to false');
  assert.deepEqual(codes(check(config({ device: 'auto', distributed: { strategy: 'zero3', cpu_offload: true } }), { facts: facts({ cudaDevices: 0 }) })), ['distributed/offload-on-cpu']);
  assert.deepEqual(check(config({ device: 'cuda', distributed: { strategy: 'fsdp', cpu_offload: true } }), { facts: facts({ cudaDevices: 4, bf16: true }) }), []);
  assert.deepEqual(codes(check(config({ distributed: { strategy: 'zero3', reshard_after_forward: false } }))), ['distributed/option-unused']);
  assert.deepEqual(codes(check(config({ distributed: { cpu_offload: false } }))), ['distributed/option-unused'], "the default strategy is 'ddp'");
  assert.deepEqual(check(config({ distributed: { strategy: 'fsdp', reshard_after_forward: false } })), []);
  assert.ok(check(config({ distributed: { strategy: 'tp' } })).some((problem) => problem.source === 'schema'), 'an unknown strategy is a schema error');
});

test('a remote env server needs its token, and a judge needs its key variable unless it is local', () => {
  assert.deepEqual(codes(check(config({ env: { url: 'http://10.0.0.5:8000' } }))), ['env/token-missing']);
  assert.deepEqual(check(config({ env: { url: 'http://10.0.0.5:8000' } }), { facts: facts({ envVars: new Set(['VISTOOL_TOKEN']) }) }), []);
  assert.deepEqual(codes(check(config({ env: { url: 'not a url' } }), { facts: facts({ envVars: new Set(['VISTOOL_TOKEN']) }) })), ['env/url-invalid']);
  const remoteJudge = config({ rewards: { judge: { enabled: true, base_url: 'https://api.example.com/v1', api_key_env: 'JUDGE_KEY' } } });
  const [warning] = check(remoteJudge);
  assert.equal(warning?.code, 'rewards/judge-key-missing');
  assert.equal(warning?.severity, 'warning');
  assert.match(warning?.message ?? '', /\$JUDGE_KEY is not set/);
  assert.deepEqual(check(remoteJudge, { facts: facts({ envVars: new Set(['JUDGE_KEY']) }) }), []);
  assert.equal(check(config({ rewards: { judge: { enabled: true } } }))[0]?.severity, 'info', 'the default judge URL is loopback');
});

test('micro-model shapes the architecture rejects are errors', () => {
  assert.deepEqual(codes(check(config({ policy: { micro: { text_hidden: 120, text_heads: 7, text_kv_heads: 7 } } }))), ['micro/heads-do-not-divide']);
  assert.deepEqual(codes(check(config({ policy: { micro: { text_hidden: 36, text_heads: 4, text_kv_heads: 2 } } }))), ['micro/head-dim']);
  assert.deepEqual(codes(check(config({ policy: { micro: { text_heads: 4, text_kv_heads: 3 } } }))), ['micro/kv-heads']);
  assert.deepEqual(codes(check(config({ policy: { micro: { min_pixels: 60000 } } }))), ['policy/pixels-range']);
});

test('episode limits, stages and evaluation size are checked against each other', () => {
  assert.deepEqual(codes(check(config({ env: { max_turns: 2, max_tool_calls: 2 } }))), ['env/tool-calls-fill-turns']);
  assert.deepEqual(check(config({ env: { tools: false, max_turns: 2, max_tool_calls: 2 } })), []);
  assert.deepEqual(codes(check(config({ sft: { enabled: false }, rl: { enabled: false } }))), ['stages/none']);
  assert.deepEqual(codes(check(config({ eval: { n: 500 } }))), ['eval/more-than-generated']);
});

test('defaults are filled through the rewards $ref, as the trainer fills them', () => {
  const filled = withDefaults({ rewards: { weights: { accuracy: 1 } } });
  const rewards = filled.rewards as { weights: Record<string, number>; judge: Record<string, unknown> };
  assert.equal(rewards.weights.accuracy, 1);
  assert.equal(rewards.weights.format, 0.2);
  assert.equal(rewards.judge.enabled, false);
  assert.equal((filled.rl as Record<string, unknown>).clip_ratio_high, 0.28);
});

test('the held-out split must be held out: data.eval the same file as data.train, or sharing task ids with it, is a warning on data.eval', async () => {
  const { symlink } = await import('node:fs/promises');
  const base = await mkdtemp(join(tmpdir(), 'vistool-config-heldout-'));
  const gen = createDataGenCommand({ stdout: { write: () => true }, stderr: { write: () => true } });
  await gen.run(['--kind', 'vbar', '--n', '4', '--seed', '5', '--out', join(base, 'train')]);
  await gen.run(['--kind', 'vbar', '--n', '4', '--seed', '5', '--split', 'test', '--out', join(base, 'test')]);
  const train = join(base, 'train', 'tasks.jsonl');
  const heldOut = join(base, 'test', 'tasks.jsonl');
  const reading = facts({ firstLines: diskFirstLines, realPath: (p) => realpathSync(p), workspaceRoots: [base] });
  const warned = (evalPath: string) => check(config({ data: { train, eval: evalPath } }), { facts: reading }).filter((p) => p.code.startsWith('data/eval-'));
  // A split written apart: nothing to say (its ids are its own: independent of the checker, read from the files here).
  const idsOf = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { id: string }).id);
  const trainIds = await idsOf(train);
  assert.equal((await idsOf(heldOut)).filter((id) => trainIds.includes(id)).length, 0);
  assert.deepEqual(warned(heldOut), []);
  // The same file, by its path and through a link.
  const [same] = warned(train);
  assert.equal(same?.code, 'data/eval-is-train');
  assert.equal(same?.severity, 'warning');
  assert.deepEqual(same?.pointer, '/data/eval');
  await symlink(train, join(base, 'linked.jsonl'));
  assert.equal(warned(join(base, 'linked.jsonl'))[0]?.code, 'data/eval-is-train');
  // Another file that repeats two training tasks.
  const lines = (await readFile(train, 'utf8')).split('\n').filter(Boolean);
  const mixed = join(base, 'mixed.jsonl');
  await writeFile(mixed, [...(await readFile(heldOut, 'utf8')).split('\n').filter(Boolean), lines[0], lines[2]].join('\n') + '\n');
  const [overlap] = warned(mixed);
  assert.equal(overlap?.code, 'data/eval-overlaps-train');
  assert.match(overlap?.message ?? '', new RegExp(`shares 2 task ids with data.train .*'${trainIds[0]}'`));
});

test("rewards.tool.tool_bonus_requires 'on_target' is flagged where no tool bonus is paid", () => {
  assert.deepEqual(check(config({ rewards: { tool: { tool_bonus_requires: 'on_target' } } })), [], 'the default weight 0.2 pays it');
  const unpaid = config({ rewards: { weights: { tool_bonus: 0 }, tool: { tool_bonus_requires: 'on_target' } } });
  const [found] = check(unpaid);
  assert.equal(found?.code, 'rewards/tool-bonus-requires-unused');
  assert.equal(found?.pointer, '/rewards/tool/tool_bonus_requires');
  assert.deepEqual(check(applyFirstFix(unpaid, found!)), [], 'the fix gives the bonus its default weight');
  assert.deepEqual(codes(check(config({ rewards: { tool: { tool_bonus_requires: 'on_target', group_ranking: true } } }))), ['rewards/tool-bonus-requires-unused']);
  assert.deepEqual(check(config({ rewards: { weights: { tool_bonus: 0 }, tool: { tool_bonus_requires: 'success' } } })), []);
});

test('rl.fresh_tasks that leaves SFT no task besides its probe is an error offering more tasks or none kept; a split with room has none', () => {
  const tooMany = config({ data: { generate: { n_train: 100 } }, sft: { probe_tasks: 10 }, rl: { fresh_tasks: 95 } });
  const found = check(tooMany).filter((p) => p.code === 'rl/fresh-tasks-too-many');
  assert.equal(found.length, 1);
  // 100 tasks: 95 kept for RL leave 5, and SFT needs 1 to train on beside the probe's 10.
  assert.match(found[0]?.message ?? '', /needs at least 11/);
  assert.deepEqual(found[0]?.fixes.map((fix) => [fix.pointer, fix.kind === 'set' ? fix.value : undefined]), [['/data/generate/n_train', 106], ['/rl/fresh_tasks', 0]]);
  assert.deepEqual(check(applyFirstFix(tooMany, found[0]!)).filter((p) => p.code === 'rl/fresh-tasks-too-many'), []);
  assert.deepEqual(check(config({ data: { generate: { n_train: 100 } }, sft: { probe_tasks: 10 }, rl: { fresh_tasks: 89 } })).filter((p) => p.code === 'rl/fresh-tasks-too-many'), []);
  // SFT off: no probe to leave room for; RL off: nothing is kept from SFT.
  assert.deepEqual(check(config({ data: { generate: { n_train: 100 } }, sft: { enabled: false }, rl: { fresh_tasks: 99 } })).filter((p) => p.code === 'rl/fresh-tasks-too-many'), []);
  assert.deepEqual(check(config({ data: { generate: { n_train: 100 } }, rl: { enabled: false, fresh_tasks: 100 } })).filter((p) => p.code === 'rl/fresh-tasks-too-many'), []);
});
