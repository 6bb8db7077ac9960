/**
 * The presentation (env/presentation/): one definition of what a policy reads, applied by the
 * episode. The block's parsing and errors, the system turn per arm, the image view, the fixed texts
 * a policy's tokenizer learns, and an episode's prompts turn by turn on a real table image.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import type { ChatMessage } from '../../env/episodes/messages.js';
import { FIXED_TEXTS } from '../../env/episodes/prompt.js';
import { parsePresentation, PresentationError, promptsOnlyGrow, type Presentation } from '../../env/presentation/presentation.js';
import { episodeOptionsOf, episodeSettingsOf } from '../../env/presentation/run-config.js';
import { systemTurnText } from '../../env/presentation/system-turn.js';
import { presentationTexts } from '../../env/presentation/texts.js';
import { presentConversation } from '../../env/presentation/view.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { tableFixture } from '../fixtures/render.js';

const ROOT = join(__dirname, '..', '..');
const maskCall = '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider", "Wins"]}}</tool_call>';
const ARMS = { tools: 'You may call a tool.', no_tools: 'Tools are off.' };

async function episode(presentation: Presentation | undefined, tools = true) {
  const fixture = await tableFixture();
  const task: TaskRecord = { id: 'fixture-table', image: 'table.png', question: 'How many wins does Merckx have?', answer: '34', kind: 'table', difficulty: 1, meta: fixture.meta, source: 'test' };
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-presentation-')));
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  return Episode.start(task, fixture.image, meta, store, { tools, ...(presentation ? { presentation } : {}) });
}

const texts = (message: ChatMessage | undefined) => (message?.content ?? []).map((part) => (part.type === 'text' ? part.text : `[image ${part.ref.slice(0, 8)}]`));

test('the block takes the run config keys as they are, fills the defaults and names the key of every mistake', () => {
  assert.deepEqual(parsePresentation(undefined), { system_prompt: null, view: { latest_images: null, images_first: false } });
  assert.deepEqual(parsePresentation({ system_prompt: { tools: 'T' }, view: { latest_images: 2 } }), {
    system_prompt: { tools: 'T', no_tools: null },
    view: { latest_images: 2, images_first: false },
  });
  const refused: [unknown, RegExp][] = [
    [{ view: { latest_images: 0 } }, /presentation\.view\.latest_images must be a whole number from 1 to 1000/],
    [{ view: { latest_images: 1.5 } }, /presentation\.view\.latest_images/],
    [{ view: { images_first: 'yes' } }, /presentation\.view\.images_first must be true or false/],
    [{ view: { latest: 1 } }, /presentation\.view has unknown key\(s\) latest/],
    [{ system_prompt: 3 }, /presentation\.system_prompt must be null .* got 3/],
    [{ system_prompt: { tools: 1 } }, /presentation\.system_prompt\.tools must be a string or null/],
    [{ system_prompt: { text: 'x' } }, /presentation\.system_prompt has unknown key\(s\) text/],
    [{ prompt: 'x' }, /presentation has unknown key\(s\) prompt/],
    ['x', /presentation must be an object/],
  ];
  for (const [value, message] of refused) assert.throws(() => parsePresentation(value), (err: Error) => err instanceof PresentationError && message.test(err.message), JSON.stringify(value));
});

test("the system turn: the env's own for null, none for '', the text, or the arm's text of a {tools, no_tools} pair", () => {
  const env = () => 'ENV';
  assert.equal(systemTurnText(null, true, env), 'ENV');
  assert.equal(systemTurnText('', true, env), null);
  assert.equal(systemTurnText('S', false, env), 'S');
  assert.equal(systemTurnText({ tools: 'T', no_tools: 'N' }, true, env), 'T');
  assert.equal(systemTurnText({ tools: 'T', no_tools: 'N' }, false, env), 'N');
  assert.equal(systemTurnText({ tools: 'T', no_tools: null }, false, env), 'ENV');
  assert.equal(systemTurnText({ tools: '', no_tools: 'N' }, true, env), null);
});

test('the view hides all but the newest images behind "(earlier image)" and can put images first, leaving its input alone', () => {
  const chart = { type: 'image' as const, ref: 'chart', width: 1, height: 1 };
  const edited = { type: 'image' as const, ref: 'edited', width: 1, height: 1 };
  const messages: ChatMessage[] = [
    { role: 'user', content: [chart, { type: 'text', text: 'Question: Q' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'call' }] },
    { role: 'tool', name: 'mask', content: [{ type: 'text', text: 'OBSERVATION: x' }, edited] },
  ];
  const copy = structuredClone(messages);
  assert.deepEqual(presentConversation(messages, { latest_images: null, images_first: false }), copy);
  assert.deepEqual(presentConversation(messages, { latest_images: 1, images_first: true }), [
    { role: 'user', content: [{ type: 'text', text: '(earlier image)' }, { type: 'text', text: 'Question: Q' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'call' }] },
    { role: 'tool', name: 'mask', content: [edited, { type: 'text', text: 'OBSERVATION: x' }] },
  ]);
  assert.deepEqual(presentConversation(messages, { latest_images: 2, images_first: false }), copy);
  assert.deepEqual(messages, copy);
  assert.equal(promptsOnlyGrow(parsePresentation({ view: { images_first: true } })), true);
  assert.equal(promptsOnlyGrow(parsePresentation({ view: { latest_images: 3 } })), false);
});

test("the fixed texts are the words the demo's tokenizer learned, in the order it learned them, then the block's own system turns", () => {
  // Written out here, not computed: the demo's micro tokenizer was trained on exactly these.
  assert.deepEqual(FIXED_TEXTS, [
    'OBSERVATION: The edited image follows.',
    '(earlier image)',
    'ERROR [E1]: No tool call or final answer found.',
    'Tools are not available in this episode: answer from the image with <answer>...</answer>.',
  ]);
  assert.deepEqual(presentationTexts(parsePresentation({ system_prompt: ARMS })), [...FIXED_TEXTS, ARMS.tools, ARMS.no_tools]);
  assert.deepEqual(presentationTexts(parsePresentation({ system_prompt: '' })), FIXED_TEXTS);
  assert.deepEqual(presentationTexts(parsePresentation({ system_prompt: 'S' })), [...FIXED_TEXTS, 'S']);
});

test("an episode opens with the arm's system turn, or the env's own with the tool list, or none", async () => {
  const tools = await episode({ system_prompt: ARMS, view: { latest_images: null, images_first: false } });
  assert.deepEqual(texts(tools.observation.prompt?.[0]), [ARMS.tools]);
  assert.equal(tools.observation.prompt?.[1]?.role, 'user');
  const off = await episode({ system_prompt: ARMS, view: { latest_images: null, images_first: false } }, false);
  assert.deepEqual(texts(off.observation.prompt?.[0]), [ARMS.no_tools]);
  const own = await episode(undefined);
  assert.match(texts(own.observation.prompt?.[0])[0] ?? '', /## Image tools[\s\S]*focus_on_columns_with_mask/);
  const none = await episode({ system_prompt: '', view: { latest_images: null, images_first: false } });
  assert.deepEqual(none.observation.prompt?.map((m) => m.role), ['user']);
  assert.deepEqual(none.observation.messages, none.observation.prompt);
});

test('each step answers the whole prompt as the policy reads it: its own turn as written, the observation, earlier images hidden by the view', async () => {
  const { episode: ep, observation } = await episode({ system_prompt: ARMS, view: { latest_images: 1, images_first: true } });
  const opening = observation.prompt ?? [];
  const chartRef = (opening[1]?.content[0] as { ref: string }).ref;
  assert.deepEqual(ep.trajectory().opening, [
    { role: 'system', content: [{ type: 'text', text: ARMS.tools }] },
    { role: 'user', content: [{ type: 'image', ref: chartRef }, { type: 'text', text: 'Question: How many wins does Merckx have?' }] },
  ]);
  assert.equal(ep.presentationInUse().prompts_only_grow, false);
  const step = await ep.step({ text: `Two columns. ${maskCall}` });
  const prompt = step.observation.prompt ?? [];
  assert.deepEqual(prompt.map((m) => m.role), ['system', 'user', 'assistant', 'tool']);
  assert.deepEqual(texts(prompt[1]), ['(earlier image)', 'Question: How many wins does Merckx have?']);
  assert.deepEqual(prompt[2], { role: 'assistant', content: [{ type: 'text', text: `Two columns. ${maskCall}` }] });
  const tool = prompt[3];
  assert.equal(tool?.content[0]?.type, 'image', 'images_first: the edited image, then the words');
  assert.match(texts(tool)[1] ?? '', /^OBSERVATION: .* The edited image follows\.$/);
  assert.deepEqual(step.observation.messages, [tool], 'the new messages are the tail of the prompt');
  const editedRef = (tool?.content[0] as { ref: string }).ref;
  assert.notEqual(editedRef, chartRef);
  // The record keeps every image: the view is only what the policy reads.
  assert.deepEqual(ep.trajectory().turns[1], { role: 'tool', text: texts(tool)[1], images: [editedRef] });
  const answered = await ep.step({ text: '<answer>34</answer>' });
  assert.equal(answered.done, true);
  assert.equal(answered.observation.prompt, undefined, 'no prompt once the episode is over');
});

test('without a view that hides images each prompt is the one before, the reply and the new messages', async () => {
  const { episode: ep, observation } = await episode({ system_prompt: '', view: { latest_images: null, images_first: false } });
  assert.equal(ep.presentationInUse().prompts_only_grow, true);
  const first = observation.prompt ?? [];
  const step = await ep.step({ text: 'no call here' });
  const second = step.observation.prompt ?? [];
  assert.deepEqual(second, [...first, { role: 'assistant', content: [{ type: 'text', text: 'no call here' }] }, ...step.observation.messages]);
  assert.match(texts(second[2])[0] ?? '', /^ERROR \[E1\]: No tool call or final answer found\. Call a tool, e\.g\. <tool_call>/);
});

test("a run config's presentation: the demo's micro config, and the env's defaults for an empty config", async () => {
  const micro = JSON.parse(await readFile(join(ROOT, 'examples', 'micro-cpu.vistool.json'), 'utf8')) as Record<string, unknown>;
  const settings = episodeSettingsOf(micro);
  assert.deepEqual(settings, {
    presentation: {
      system_prompt: {
        tools: 'Answer the question about the chart. You may call an image tool first.',
        no_tools: 'Answer the question about the chart. Tools are off: answer directly.',
      },
      view: { latest_images: 1, images_first: false },
    },
    tools: true,
    maxTurns: 3,
    maxToolCalls: 2,
    maxNewTokens: 48,
    // The micro config leaves policy.micro's bounds at the schema's defaults (3,136 and 50,176).
    pixelBounds: { minPixels: 3136, maxPixels: 50_176 },
  });
  assert.deepEqual(episodeOptionsOf(settings, false), {
    tools: false, max_turns: 3, max_tool_calls: 2, presentation: settings.presentation, pixel_bounds: { min_pixels: 3136, max_pixels: 50_176 },
  });
  assert.deepEqual(episodeSettingsOf({}).presentation, parsePresentation(undefined));
  // A hub model: policy.min_pixels/max_pixels, Qwen2.5-VL's processor default for a null one.
  assert.deepEqual(episodeSettingsOf({ policy: { model: 'Qwen/Qwen2.5-VL-3B-Instruct', max_pixels: 1_003_520 } }).pixelBounds, { minPixels: 3136, maxPixels: 1_003_520 });
  assert.deepEqual(episodeSettingsOf({ policy: { model: 'Qwen/Qwen2.5-VL-3B-Instruct' } }).pixelBounds, { minPixels: 3136, maxPixels: 12_845_056 });
  assert.throws(() => episodeSettingsOf({ policy: { view: { latest_images: 0 } } }), /policy\.view\.latest_images/);
});

test("vistool eval's pixel bounds: Qwen2.5-VL's defaults, else the run config's, each overridden by --min-pixels/--max-pixels", async () => {
  const { evalEpisodeSettings } = await import('../../env/eval/eval-settings.js');
  assert.deepEqual(evalEpisodeSettings(null, {}).pixelBounds, { minPixels: 3136, maxPixels: 12_845_056 });
  assert.deepEqual(evalEpisodeSettings(null, { maxPixels: 1_003_520 }).pixelBounds, { minPixels: 3136, maxPixels: 1_003_520 });
  const micro = { path: 'micro.json', config: { policy: { model: 'micro', micro: { min_pixels: 6272, max_pixels: 200_704 } } } };
  assert.deepEqual(evalEpisodeSettings(micro, {}).pixelBounds, { minPixels: 6272, maxPixels: 200_704 });
  assert.deepEqual(evalEpisodeSettings(micro, { minPixels: 3136 }).pixelBounds, { minPixels: 3136, maxPixels: 200_704 });
  assert.throws(() => evalEpisodeSettings(null, { maxPixels: 100 }), /--max-pixels.*max_pixels 100 is under one image token/);
});
