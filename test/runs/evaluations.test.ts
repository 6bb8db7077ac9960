import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evalResultsFromDocument, evaluationsFromRunJson, mergeEvaluations, readEvalFiles } from '../../env/runs/evaluations.js';

test('results.json may be a label map, an {evaluations} object or a list; only numbers are kept', () => {
  assert.deepEqual(evalResultsFromDocument({ before: { 'eval/acc_tools': 0.2, note: 'x' } }, 'results.json', null), [{ label: 'before', step: null, source: 'results.json', metrics: { 'eval/acc_tools': 0.2 } }]);
  assert.deepEqual(evalResultsFromDocument({ evaluations: { after: { step: 9, 'eval/acc_no_tools': 0.5 } } }, 'results.json', null), [{ label: 'after', step: 9, source: 'results.json', metrics: { 'eval/acc_no_tools': 0.5 } }]);
  assert.deepEqual(evalResultsFromDocument([{ label: 'a', step: 3, metrics: { 'eval/n': 8 } }], 'results.json', null), [{ label: 'a', step: 3, source: 'results.json', metrics: { 'eval/n': 8 } }]);
});

test('an eval/<name>.json file is labelled by its name unless it says otherwise', () => {
  assert.deepEqual(evalResultsFromDocument({ 'eval/acc_tools': 0.7 }, 'eval/final.json', 'final'), [{ label: 'final', step: null, source: 'eval/final.json', metrics: { 'eval/acc_tools': 0.7 } }]);
  assert.equal(evalResultsFromDocument({ label: 'ckpt-40', step: 40, metrics: { 'eval/n': 4 } }, 'eval/x.json', 'x')[0]?.label, 'ckpt-40');
});

test('run.json evaluations are read, and a label seen earlier (metrics.jsonl has the step) wins', () => {
  const fromRun = evaluationsFromRunJson({ status: 'finished', evaluations: { before: { 'eval/acc_tools': 0.1 }, after_rl: { 'eval/acc_tools': 0.6 } } });
  const merged = mergeEvaluations([{ label: 'before', step: 0, source: 'metrics.jsonl', metrics: { 'eval/acc_tools': 0.1 } }], fromRun);
  assert.deepEqual(merged.map((e) => [e.label, e.source]), [['before', 'metrics.jsonl'], ['after_rl', 'run.json']]);
});

test('results.json and eval/*.json are read from a run directory; broken JSON is reported, not thrown', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-evals-'));
  await mkdir(join(dir, 'eval'));
  await writeFile(join(dir, 'results.json'), JSON.stringify({ before: { 'eval/acc_tools': 0.2 } }));
  await writeFile(join(dir, 'eval', 'final.json'), JSON.stringify({ step: 50, 'eval/acc_tools': 0.6 }));
  await writeFile(join(dir, 'eval', 'broken.json'), '{"eval/acc');
  const { results, problems } = await readEvalFiles(dir);
  assert.deepEqual(results.map((r) => [r.label, r.step, r.source]), [['before', null, 'results.json'], ['final', 50, 'eval/final.json']]);
  assert.match(problems[0] ?? '', /eval\/broken.json is not valid JSON/);
});

test('an eval folder\'s results.json (vistool eval: format, arms, and evaluations with step and metrics) is read', () => {
  const document = {
    format: 'vistool-eval-results', version: 1, label: 'ckpt-40', policy: 'checkpoint:runs/a/checkpoints/step-000040', tasks: 64, complete: true, step: 40,
    evaluations: { 'ckpt-40': { step: 40, metrics: { 'eval/n': 64, 'eval/acc_tools': 0.55, 'eval/acc_no_tools': 0.41 } } },
    arms: { tools: { n: 64 } },
  };
  assert.deepEqual(evalResultsFromDocument(document, 'results.json', null), [
    { label: 'ckpt-40', step: 40, source: 'results.json', metrics: { 'eval/n': 64, 'eval/acc_tools': 0.55, 'eval/acc_no_tools': 0.41 } },
  ]);
});
