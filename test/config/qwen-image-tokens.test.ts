// Qwen2.5-VL's image token counts and the opening prompt's budget. Every expected number below
// was worked by hand from smart_resize's rules (the arithmetic is in the comments), not by the
// code under test.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createConfigValidateCommand } from '../../env/cli/config-validate.js';
import { withDefaults } from '../../env/config/run-config-schema.js';
import { episodeBudget, MEASURED_PROMPT_TEXT_TOKENS, promptBudget, QUESTION_HEADROOM_TOKENS } from '../../env/config/prompt-token-budget.js';
import { imageTokens, maxImageTokens, pixelBoundsProblem, roundHalfToEven, smartResize } from '../../env/config/qwen-image-tokens.js';
import type { RunConfig } from '../../protocol/run-config.js';

const root = join(__dirname, '..', '..');
const DEFAULTS = { minPixels: 3136, maxPixels: 12_845_056 };
const RECIPE = { minPixels: 3136, maxPixels: 1_003_520 };

test("Python's round sends halves to the even neighbour", () => {
  assert.deepEqual([0.5, 1.5, 2.5, 3.5, 2.4, 2.6].map(roundHalfToEven), [0, 2, 2, 4, 2, 3]);
});

test('smart_resize on sizes worked by hand', () => {
  // 2000 wide, 1500 high at the defaults: 1500/28 = 53.57 → 54 → 1512; 2000/28 = 71.43 → 71 → 1988;
  // 1512 × 1988 = 3,005,856 is inside [3,136, 12,845,056]: 54 × 71 = 3,834 tokens.
  assert.deepEqual(smartResize(1500, 2000, DEFAULTS), [1512, 1988]);
  assert.equal(imageTokens(1500, 2000, DEFAULTS), 3834);
  // At max_pixels 1,003,520 it is over: β = √(3,000,000 / 1,003,520) = 1.72901;
  // 1500/β = 867.5 → ⌊30.98⌋ = 30 → 840; 2000/β = 1156.7 → ⌊41.31⌋ = 41 → 1148: 30 × 41 = 1,230.
  assert.deepEqual(smartResize(1500, 2000, RECIPE), [840, 1148]);
  assert.equal(imageTokens(1500, 2000, RECIPE), 1230);
  // 42 × 70: 42/28 = 1.5 and 70/28 = 2.5 both round to 2 (half to even) → 56 × 56 = 3,136, not under
  // min_pixels: 4 tokens (rounding halves up would give 56 × 84, 6 tokens).
  assert.deepEqual(smartResize(42, 70, DEFAULTS), [56, 56]);
  assert.equal(imageTokens(42, 70, DEFAULTS), 4);
  // 14 × 14 rounds to 0 × 0, under min_pixels: β = √(3136 / 196) = 4; ⌈56/28⌉ = 2 → 56 × 56, 4 tokens.
  assert.deepEqual(smartResize(14, 14, DEFAULTS), [56, 56]);
  // A thin 4 × 792 (ratio 198): rounds to 0 × 784, under min_pixels; β = √(3136 / 3168) = 0.99494;
  // ⌈3.98/28⌉ = 1 → 28; ⌈788.0/28⌉ = ⌈28.14⌉ = 29 → 812: 1 × 29 = 29 tokens, 22,736 pixels.
  assert.deepEqual(smartResize(4, 792, DEFAULTS), [28, 812]);
  assert.equal(imageTokens(4, 792, DEFAULTS), 29);
  // The generator's largest table image (919 × 567) at the defaults: 567/28 = 20.25 → 20 → 560;
  // 919/28 = 32.82 → 33 → 924: 20 × 33 = 660, the maximum docs/QWEN_FIXTURE.md measured for tables.
  assert.equal(imageTokens(567, 919, DEFAULTS), 660);
});

test('smart_resize refuses an aspect ratio over 200 and sizes that are not positive', () => {
  assert.throws(() => smartResize(10, 2010, DEFAULTS), /aspect ratio of 201\.0.*refuses more than 200/);
  assert.throws(() => smartResize(0, 10, DEFAULTS), /must be positive/);
});

test('the most tokens an image can take at the bounds', () => {
  // ⌊12,845,056 / 784⌋ = 16,384 (a 3584 × 3584 image reaches it); ⌊1,003,520 / 784⌋ = 1,280 (896 × 1120).
  assert.equal(maxImageTokens(DEFAULTS), 16384);
  assert.equal(imageTokens(3584, 3584, DEFAULTS), 16384);
  assert.equal(maxImageTokens(RECIPE), 1280);
  assert.equal(imageTokens(896, 1120, RECIPE), 1280);
  assert.equal(imageTokens(9000, 6000, RECIPE) <= 1280, true);
  // With max_pixels at min_pixels the upscale of a thin image passes max_pixels: the 4 × 792 image
  // above takes 29 tokens where ⌊3136 / 784⌋ is 4, so the bound takes the upscale into account:
  // the thinnest short side √(3136/200) = 3.960 gives (3.960/28 + 1)(3136/(28 × 3.960) + 1) = 1.1414 × 29.284 = 33.4 → 33.
  const tight = { minPixels: 3136, maxPixels: 3136 };
  assert.equal(imageTokens(4, 792, tight), 29);
  assert.equal(maxImageTokens(tight), 33);
});

test('bounds the processor cannot take are named', () => {
  assert.equal(pixelBoundsProblem(RECIPE), null);
  assert.match(pixelBoundsProblem({ minPixels: 3136, maxPixels: 500 }) ?? '', /max_pixels 500 is under one image token \(784 pixels/);
  assert.match(pixelBoundsProblem({ minPixels: 5000, maxPixels: 4000 }) ?? '', /min_pixels 5000 is more than max_pixels 4000/);
});

async function example(name: string): Promise<RunConfig> {
  return withDefaults(JSON.parse(await readFile(join(root, 'examples', name), 'utf8'))) as unknown as RunConfig;
}

test("the opening prompt's budget: measured text, headroom, the most image tokens at the bounds", async () => {
  // The DAPO recipe reads a tasks file (any kind): the widest measured text, the table's 1,626,
  // + 256 headroom, + 1,280 image tokens at its max_pixels 1,003,520 = 3,162.
  const dapo = promptBudget(await example('dapo-qwen2.5-vl-3b-4gpu.vistool.json'));
  assert.equal(MEASURED_PROMPT_TEXT_TOKENS.table, 1626);
  assert.equal(QUESTION_HEADROOM_TOKENS, 256);
  assert.deepEqual([dapo.textTokens, dapo.imageTokens, dapo.promptTokens], [1882, 1280, 3162]);
  // VTool-R1 v2 leaves max_pixels null: Qwen2.5-VL's 12,845,056, 16,384 tokens: 1,882 + 16,384 = 18,266.
  const vtool = promptBudget(await example('vtool-r1-v2-qwen2.5-vl-3b-chart.vistool.json'));
  assert.deepEqual([vtool.bounds.minPixels, vtool.bounds.maxPixels, vtool.promptTokens], [3136, 12_845_056, 18266]);
  // Generated geometry tasks only: 999 + 256 + 1,280 = 2,535; a custom system prompt adds its UTF-8 bytes
  // ('Hé!!' is 5: é takes 2), an upper bound on its tokens.
  const base = await example('dapo-qwen2.5-vl-3b-4gpu.vistool.json');
  const geometry = { ...base, data: { ...base.data, train: null, eval: null, generate: { ...base.data.generate, kind: 'geometry' } } } as RunConfig;
  assert.equal(promptBudget(geometry).promptTokens, 2535);
  const custom = { ...geometry, policy: { ...geometry.policy, system_prompt: 'Hé!!' } } as RunConfig;
  assert.equal(promptBudget(custom).promptTokens, 2540);
  // The response of the DAPO recipe: 5 turns × 1,024 + 4 observations × 128 + 4 edited images × 1,280 = 10,752.
  assert.equal(episodeBudget(await example('dapo-qwen2.5-vl-3b-4gpu.vistool.json'), dapo).responseTokens, 10752);
});

test('config validate warns, with the numbers, when the bundled vLLM engine cannot hold an episode at the bounds', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-budget-'));
  const config = (maxPixels: number | null) => ({
    policy: { model: 'Qwen/Qwen2.5-VL-3B-Instruct', max_pixels: maxPixels },
    data: { train: null, eval: null, generate: { kind: 'geometry' } },
    env: { max_turns: 3, max_tool_calls: 1 },
    rl: { rollout_engine: 'vllm', max_new_tokens: 512 },
  });
  const run = async (maxPixels: number | null) => {
    const file = join(dir, `c${maxPixels}.vistool.json`);
    await writeFile(file, JSON.stringify(config(maxPixels)));
    const chunks: string[] = [];
    await createConfigValidateCommand({ write: (t: string) => chunks.push(t) }, { write: () => true }).run([file, '--base-dir', dir]);
    return chunks.join('');
  };
  // Geometry's 999 measured + 256 = 1,255 text; max_pixels null: 16,384 image tokens, prompt 17,639,
  // with its 512-token reply 18,151 > 16,384.
  const tooBig = await run(null);
  assert.match(tooBig, /warning: rl\.rollout_engine 'vllm' holds at most 16384 tokens a conversation, but the opening prompt takes up to 17639 tokens \(1255 of text.*16384 for an image at max_pixels 12845056.*even the first turn \(18151 tokens with its reply\).*\[rl\/token-budget\]/);
  // At 1,003,520: 2,535 + 3 × 512 + 2 × 128 + 1 × 1,280 = 5,607 tokens: it fits, nothing said.
  assert.doesNotMatch(await run(1_003_520), /token-budget/);
});
