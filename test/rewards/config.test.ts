import { test } from 'node:test';
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { DEFAULT_REWARD_CONFIG } from '../../env/rewards/config.js';
import { RewardConfigError, resolveRewardConfig, rewardConfigSchema } from '../../env/rewards/resolve-config.js';

interface SchemaNode {
  type?: string | string[];
  description?: string;
  default?: unknown;
  additionalProperties?: boolean;
  properties?: Record<string, SchemaNode>;
}

/** The default a schema node implies: its own for leaves, its children's for objects. */
function schemaDefaults(node: SchemaNode): unknown {
  if (node.properties === undefined) return node.default;
  return Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, schemaDefaults(v)]));
}

test('the schema is valid draft-07 and every key has a description and a default, with no extra keys allowed', () => {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true });
  assert.equal(ajv.validateSchema(rewardConfigSchema), true, JSON.stringify(ajv.errors));
  const visit = (node: SchemaNode, path: string): void => {
    assert.ok(typeof node.description === 'string' && node.description.length > 10, `${path} needs a description`);
    assert.ok('default' in node, `${path} needs a default`);
    if (node.properties) {
      assert.equal(node.additionalProperties, false, `${path} must set additionalProperties: false`);
      for (const [key, child] of Object.entries(node.properties)) visit(child, `${path}.${key}`);
    }
  };
  visit(rewardConfigSchema as SchemaNode, 'rewards');
});

test('the schema defaults and DEFAULT_REWARD_CONFIG are the same object', () => {
  assert.deepEqual(schemaDefaults(rewardConfigSchema as SchemaNode), DEFAULT_REWARD_CONFIG);
});

test('a partial config is completed from the defaults without sharing them', () => {
  const config = resolveRewardConfig({ weights: { tool_bonus: 0.5 }, judge: { enabled: true, model: 'qwen-judge' } });
  assert.equal(config.weights.tool_bonus, 0.5);
  assert.equal(config.weights.accuracy, 0.8);
  assert.equal(config.judge.model, 'qwen-judge');
  assert.equal(config.judge.timeout_ms, 30000);
  config.weights.accuracy = 0;
  assert.equal(DEFAULT_REWARD_CONFIG.weights.accuracy, 0.8);
  assert.deepEqual(resolveRewardConfig(), DEFAULT_REWARD_CONFIG);
});

test('an unknown key is an error that names its path and how to fix it', () => {
  assert.throws(() => resolveRewardConfig({ weights: { acuracy: 1 } }), (err: unknown) => {
    assert.ok(err instanceof RewardConfigError);
    assert.match(err.message, /rewards\.weights: unknown key 'acuracy'/u);
    assert.match(err.message, /config\.schema\.json/u);
    return true;
  });
});

test('wrong values are reported with their path and what is allowed', () => {
  assert.throws(() => resolveRewardConfig({ judge: { mode: 'vote' } }, 'run.rewards'), /run\.rewards\.judge\.mode: must be one of "replace", "average", "either"/u);
  assert.throws(() => resolveRewardConfig({ judge: { api_key_env: 'sk-live-123' } }), /rewards\.judge\.api_key_env: must match pattern/u);
  assert.throws(() => resolveRewardConfig({ efficiency: { free_turns: 4, max_turns: 3 } }), /max_turns \(3\) must be greater than free_turns \(4\)/u);
  assert.throws(() => resolveRewardConfig({ tool: { no_tool_factor: 1.5 } }), /rewards\.tool\.no_tool_factor: must be <= 1/u);
});
