import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { segmentModelText } from '../../webview/viewer/model-text.js';

test('think, tool_call and answer blocks become their own segments with the markers kept', () => {
  const text = 'Hi <think>look at Wins</think>\n<tool_call>{"name": "x"}</tool_call> then <answer>34</answer>';
  assert.deepEqual(segmentModelText(text).map((s) => [s.kind, s.body]), [
    ['text', 'Hi '],
    ['think', 'look at Wins'],
    ['text', '\n'],
    ['tool_call', '{"name": "x"}'],
    ['text', ' then '],
    ['answer', '34'],
  ]);
});

test('a ReFocus python fence is a code segment; an unclosed block runs to the end', () => {
  const segments = segmentModelText('```python\nx = f(image_1)\n```\n<answer>7');
  assert.deepEqual(segments.map((s) => [s.kind, s.open, s.body, s.close]), [
    ['code', '```python\n', 'x = f(image_1)\n', '```'],
    ['text', '', '\n', ''],
    ['answer', '<answer>', '7', ''],
  ]);
});

test('markup inside the text is kept as characters, never interpreted', () => {
  const segments = segmentModelText('<script>alert(1)</script><answer><img src=x onerror=alert(2)></answer>');
  assert.equal(segments[0]?.body, '<script>alert(1)</script>');
  assert.equal(segments[1]?.body, '<img src=x onerror=alert(2)>');
});

test('segments always spell out the original text exactly', () => {
  const piece = fc.constantFrom('<think>', '</think>', '<answer>', '</answer>', '<tool_call>', '</tool_call>', '```', '```python\n', 'a', ' ', '\n', '<', '>', 'x');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
      const text = pieces.join('');
      return segmentModelText(text).map((s) => s.open + s.body + s.close).join('') === text;
    }),
  );
});
