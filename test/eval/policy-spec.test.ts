import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describePolicy, parsePolicySpec, policyLabel, PolicySpecError } from '../../env/eval/policy-spec.js';

test('openai:<base_url>#<model> splits at the last #, keeps slashes in the model name, drops a trailing slash', () => {
  const spec = parsePolicySpec('openai:http://127.0.0.1:8000/v1/#Qwen/Qwen2.5-VL-3B-Instruct');
  assert.deepEqual(spec, { kind: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen2.5-VL-3B-Instruct' });
  assert.equal(policyLabel(spec), 'Qwen/Qwen2.5-VL-3B-Instruct');
  assert.equal(describePolicy(spec), 'openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-VL-3B-Instruct');
});

test('checkpoint:<path> is labelled <run>/<step> when it sits in a run\'s checkpoints folder', () => {
  const spec = parsePolicySpec('checkpoint:runs/micro/checkpoints/step-000120/');
  assert.deepEqual(spec, { kind: 'checkpoint', path: 'runs/micro/checkpoints/step-000120/' });
  assert.equal(policyLabel(spec), 'micro/step-000120');
  assert.equal(policyLabel(parsePolicySpec('checkpoint:/models/best')), 'best');
});

test('malformed policies are refused with the accepted forms', () => {
  for (const [text, pattern] of [
    ['gpt-4.1', /not understood: give 'openai:<base_url>#<model>'/],
    ['openai:http://host/v1', /names no model/],
    ['openai:http://host/v1#', /empty model name/],
    ['openai:not a url#m', /is not a URL/],
    ['openai:ftp://host/v1#m', /must be http or https/],
    ['openai:https://me:sk-secret@host/v1#m', /carries credentials in the URL; put the API key in an environment variable/],
    ['checkpoint:', /names no checkpoint folder/],
  ] as const) {
    assert.throws(() => parsePolicySpec(text), (err: unknown) => err instanceof PolicySpecError && pattern.test(err.message), text);
  }
});
