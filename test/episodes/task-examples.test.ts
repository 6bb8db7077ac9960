import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Episode } from '../../env/episodes/episode.js';
import { ImageStore } from '../../env/episodes/image-store.js';
import { answerShape, examplesFor } from '../../env/episodes/task-examples.js';
import { parseAction } from '../../env/actions/parse.js';
import { availableToolNames } from '../../env/tools/registry.js';
import { resolveMetadata } from '../../env/tools/metadata.js';
import type { TaskRecord } from '../../env/tasks/record.js';
import { tableFixture, verticalBarsFixture } from '../fixtures/render.js';

async function barEpisode(question: string, answer: string | string[]) {
  const fixture = await verticalBarsFixture();
  const store = new ImageStore(await mkdtemp(join(tmpdir(), 'vistool-examples-')));
  const task: TaskRecord = { id: 'bars', image: 'bars.png', question, answer, kind: 'vbar', difficulty: 1, meta: fixture.meta, source: 'test' };
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  return { ...(await Episode.start(task, fixture.image, meta, store)), meta, labels: Object.keys(fixture.meta.x_values_bbox!) };
}

const text = (message: { content: { type: string; text?: string }[] } | undefined): string =>
  (message?.content ?? []).map((part) => (part.type === 'text' ? part.text ?? '' : '')).join('\n');

test('a bar chart is shown calls on its own bars, in the system prompt and in every error', async () => {
  const { episode, observation, labels } = await barEpisode('Which year is highest?', '2020');
  const own = `<tool_call>{"name": "focus_on_x_values_with_mask", "arguments": {"x_values": ["${labels[0]}"]}}</tool_call>`;
  const system = text(observation.messages[0]);
  assert.ok(system.includes(own), system);
  assert.doesNotMatch(system, /Country/);

  const broken = await episode.step({ text: '<tool_call>{"name": "focus_on_x_values_with_mask", "arguments": </tool_call>' });
  const error = text(broken.observation.messages[0]);
  assert.match(error, /^ERROR \[E1\]/);
  assert.ok(error.includes(own), error);
  assert.doesNotMatch(error, /Country|columns/);

  const nothing = await episode.step({ text: 'I am not sure.' });
  assert.ok(text(nothing.observation.messages[0]).includes(own));
});

test('the examples depend on the answer\'s shape, never on its value', async () => {
  const fixture = await verticalBarsFixture();
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  const labels = Object.keys(fixture.meta.x_values_bbox!);
  const tools = availableToolNames(meta);
  // Two tasks on one chart with different label answers: the same examples.
  assert.deepEqual(examplesFor(meta, labels[1]!, tools), examplesFor(meta, labels[2]!, tools));
  assert.deepEqual(examplesFor(meta, '12', tools), examplesFor(meta, '730', tools));
  assert.deepEqual(examplesFor(meta, 'low', tools), examplesFor(meta, 'high', tools));
  // A label answer is shown a label of this chart, a number a number, several answers the separator.
  assert.equal(examplesFor(meta, labels[2]!, tools).answer, `<answer>${labels[0]}</answer>`);
  assert.equal(examplesFor(meta, '730', tools).answer, '<answer>7</answer>');
  assert.equal(examplesFor(meta, [labels[1]!, labels[2]!], tools).answer, `<answer>${labels[0]}||${labels[1]}</answer>`);
  assert.deepEqual([answerShape('1,250', labels), answerShape('12.5%', labels), answerShape('medium', labels)], ['number', 'number', 'text']);
});

test('a table keeps the column example, and a parse error shows the examples it was given', async () => {
  const fixture = await tableFixture();
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  const examples = examplesFor(meta, '34', availableToolNames(meta));
  const firstColumn = Object.keys(fixture.meta.columns_bbox!)[0]!;
  assert.equal(examples.hermes, `<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["${firstColumn}"]}}</tool_call>`);
  // Every reader's messages use the examples passed in: hermes, OpenThinkIMG, Python, answers.
  const cases: [string, keyof typeof examples][] = [
    ['<tool_call>{"name": </tool_call>', 'hermes'],
    ['{"thought": "x", "actions": 3}', 'openthinkimg'],
    ['```python\nimport os\n```', 'python'],
    ['<answer>34', 'answer'],
  ];
  for (const [message, form] of cases) {
    const errors = parseAction(message, { examples }).errors.map((e) => e.message).join(' | ');
    assert.ok(errors.includes(examples[form]), `${form}: ${errors}`);
  }
});

test('tools off: no call example is offered as usable, the answer example still fits', async () => {
  const fixture = await verticalBarsFixture();
  const meta = resolveMetadata(fixture.meta, fixture.image.width, fixture.image.height);
  const examples = examplesFor(meta, '730', []);
  assert.equal(examples.answer, '<answer>7</answer>');
});
