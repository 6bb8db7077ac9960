import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replyText, toOpenAIMessages } from '../../env/eval/openai-messages.js';
import type { ChatMessage } from '../../env/episodes/messages.js';

test('episode messages become OpenAI messages: images as data URLs, tool observations as user turns, system and assistant as strings', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vistool-eval-msg-'));
  const png = Buffer.from('89504e470d0a1a0a', 'hex');
  await writeFile(join(dir, 'a.png'), png);
  const messages: ChatMessage[] = [
    { role: 'system', content: [{ type: 'text', text: 'You answer questions.' }] },
    { role: 'user', content: [{ type: 'image', ref: 'r1', width: 1, height: 1, data: 'AAAA' }, { type: 'text', text: 'Question: q?' }] },
    { role: 'assistant', content: [{ type: 'text', text: '<tool_call>{}</tool_call>' }] },
    { role: 'tool', name: 'zoom_in', content: [{ type: 'text', text: 'OBSERVATION: zoomed.' }, { type: 'image', ref: 'r2', width: 1, height: 1, path: join(dir, 'a.png') }] },
  ];
  assert.deepEqual(toOpenAIMessages(messages), [
    { role: 'system', content: 'You answer questions.' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'text', text: 'Question: q?' }] },
    { role: 'assistant', content: '<tool_call>{}</tool_call>' },
    { role: 'user', content: [{ type: 'text', text: 'OBSERVATION: zoomed.' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }] },
  ]);
});

test('reply text: plain content, content parts, null content, and structured tool_calls written back as hermes blocks', () => {
  const choice = (message: unknown) => ({ choices: [{ message }] });
  assert.equal(replyText(choice({ content: '<answer>7</answer>' })), '<answer>7</answer>');
  assert.equal(replyText(choice({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })), 'ab');
  assert.equal(replyText(choice({ content: null })), '');
  assert.equal(
    replyText(choice({ content: 'Let me look.', tool_calls: [{ type: 'function', function: { name: 'zoom_in', arguments: '{"bbox": [0, 0, 10, 10]}' } }] })),
    'Let me look.\n<tool_call>{"name": "zoom_in", "arguments": {"bbox": [0, 0, 10, 10]}}</tool_call>',
  );
  assert.equal(replyText(choice({ content: null, tool_calls: [{ function: { name: 'mark_point', arguments: { x: 1, y: 2 } } }] })), '<tool_call>{"name": "mark_point", "arguments": {"x":1,"y":2}}</tool_call>');
});

test('bodies that are not chat completions are recognised as such (null), never read as empty replies', () => {
  for (const body of [null, 'text', {}, { choices: [] }, { choices: [{}] }, { choices: [{ message: { content: 42 } }] }]) assert.equal(replyText(body), null, JSON.stringify(body));
});

test("observationRole 'tool' sends tool observations as tool turns with their content parts (for trainer checkpoints), and leaves the user turns user", () => {
  const messages: ChatMessage[] = [
    { role: 'user', content: [{ type: 'text', text: 'Question: q?' }] },
    { role: 'assistant', content: [{ type: 'text', text: '<tool_call>{}</tool_call>' }] },
    { role: 'tool', name: 'zoom_in', content: [{ type: 'text', text: 'OBSERVATION: zoomed.' }, { type: 'image', ref: 'r2', width: 1, height: 1, data: 'BBBB' }] },
  ];
  assert.deepEqual(toOpenAIMessages(messages, { observationRole: 'tool' }).map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.deepEqual(toOpenAIMessages(messages, { observationRole: 'tool' })[2], {
    role: 'tool',
    content: [{ type: 'text', text: 'OBSERVATION: zoomed.' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,BBBB' } }],
  });
  assert.equal(toOpenAIMessages(messages)[2]?.role, 'user');
});
