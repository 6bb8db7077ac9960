import { test } from 'node:test';
import { checkCase, mask, type ParseCase } from './cases.js';

const EXPECTED_FORM = '<tool_call>{"name": "focus_on_columns_with_mask"';

const cases: ParseCase[] = [
  {
    name: 'a hermes call is read with its name and arguments',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country", "Wins"]}}</tool_call>',
    calls: [mask(['Country', 'Wins'])],
    formats: ['hermes'],
  },
  {
    name: 'newlines and indentation around the JSON are accepted (Qwen chat template layout)',
    text: 'I will mask.\n<tool_call>\n  {"name": "zoom_in",\n   "arguments": {"bbox": [10, 20, 110, 90], "factor": 2}}\n</tool_call>',
    calls: [{ name: 'zoom_in', arguments: { bbox: [10, 20, 110, 90], factor: 2 } }],
  },
  {
    name: 'several calls in one message are read in the order written',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}</tool_call>\n<tool_call>{"name": "focus_on_rows_with_draw", "arguments": {"rows": ["Belgium"]}}</tool_call>',
    calls: [mask(['Wins']), { name: 'focus_on_rows_with_draw', arguments: { rows: ['Belgium'] } }],
  },
  {
    name: '"parameters" is accepted as an alias of "arguments"',
    text: '<tool_call>{"name": "draw_horizontal_line", "parameters": {"y": 120}}</tool_call>',
    calls: [{ name: 'draw_horizontal_line', arguments: { y: 120 } }],
  },
  {
    name: 'arguments given as a JSON string are decoded',
    text: '<tool_call>{"name": "mark_point", "arguments": "{\\"x\\": 3, \\"y\\": 4}"}</tool_call>',
    calls: [{ name: 'mark_point', arguments: { x: 3, y: 4 } }],
  },
  {
    name: 'the OpenAI function shape {"type": "function", "function": {...}} is accepted',
    text: '<tool_call>{"type": "function", "function": {"name": "draw_vertical_line", "arguments": {"x": 5}}}</tool_call>',
    calls: [{ name: 'draw_vertical_line', arguments: { x: 5 } }],
  },
  {
    name: 'braces and brackets inside strings do not end the JSON early',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["a}b", "{[x]", "]]"]}}</tool_call>',
    calls: [mask(['a}b', '{[x]', ']]'])],
  },
  {
    name: 'escaped quotes inside strings are kept',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["The \\"Best\\" Team", "back\\\\slash"]}}</tool_call>',
    calls: [mask(['The "Best" Team', 'back\\slash'])],
  },
  {
    name: 'a closing tag inside an argument string does not end the call',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["</tool_call>"]}}</tool_call>',
    calls: [mask(['</tool_call>'])],
  },
  {
    name: 'a ```json fence inside the tag is tolerated',
    text: '<tool_call>\n```json\n{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}\n```\n</tool_call>',
    calls: [mask(['Wins'])],
    formats: ['hermes'],
  },
  {
    name: 'unknown tool names are passed through for the registry to judge',
    text: '<tool_call>{"name": "crop_everything", "arguments": {"how": "all"}}</tool_call>',
    calls: [{ name: 'crop_everything', arguments: { how: 'all' } }],
  },
  {
    name: 'an unclosed <tool_call> is an E1 error that shows the expected form, and is not run',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}',
    errors: [{ class: 'E1', says: ['not closed', '</tool_call>', EXPECTED_FORM] }],
    formats: ['hermes'],
  },
  {
    name: 'an unclosed call followed by a good one: the first is E1, the second is read',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["A"]}}\n<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["B"]}}</tool_call>',
    calls: [mask(['B'])],
    errors: [{ class: 'E1', says: ['not closed'], line: 1 }],
  },
  {
    name: 'invalid JSON inside the tag is E1 and says it is not valid JSON',
    text: "<tool_call>{'name': 'focus_on_columns_with_mask', 'arguments': {}}</tool_call>",
    errors: [{ class: 'E1', says: ['not valid JSON', EXPECTED_FORM] }],
  },
  {
    name: 'JSON missing a closing brace is E1',
    text: '<tool_call>{"name": "zoom_in", "arguments": {"bbox": [1, 2, 3, 4]}</tool_call>',
    errors: [{ class: 'E1' }],
  },
  {
    name: 'text after the JSON object inside the tag is E1',
    text: '<tool_call>{"name": "zoom_in", "arguments": {"bbox": [1, 2, 3, 4]}} and then more</tool_call>',
    errors: [{ class: 'E1', says: ['unexpected text after the JSON object'] }],
  },
  {
    name: 'an empty tag is E1',
    text: '<tool_call></tool_call>',
    errors: [{ class: 'E1', says: ['empty'] }],
  },
  {
    name: 'a JSON list instead of an object is E1',
    text: '<tool_call>[{"name": "zoom_in", "arguments": {}}]</tool_call>',
    errors: [{ class: 'E1', says: ['one JSON object', 'a list'] }],
  },
  {
    name: 'a call without "name" is E2',
    text: '<tool_call>{"arguments": {"columns": ["Wins"]}}</tool_call>',
    errors: [{ class: 'E2', says: ['no "name"', EXPECTED_FORM] }],
  },
  {
    name: 'a call with an empty name is E2',
    text: '<tool_call>{"name": "  ", "arguments": {}}</tool_call>',
    errors: [{ class: 'E2', says: ['empty'] }],
  },
  {
    name: 'a call without "arguments" is E2 and names the tool',
    text: '<tool_call>{"name": "focus_on_columns_with_mask"}</tool_call>',
    errors: [{ class: 'E2', says: ['focus_on_columns_with_mask has no "arguments"'] }],
  },
  {
    name: 'arguments that are a list are E3',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": ["Wins"]}</tool_call>',
    errors: [{ class: 'E3', says: ['must be a JSON object', 'not a list'] }],
  },
  {
    name: 'arguments that are null are E3',
    text: '<tool_call>{"name": "zoom_in", "arguments": null}</tool_call>',
    errors: [{ class: 'E3', says: ['not null'] }],
  },
  {
    name: 'arguments given as a string that is not JSON are E1',
    text: '<tool_call>{"name": "zoom_in", "arguments": "bbox=[1,2,3,4]"}</tool_call>',
    errors: [{ class: 'E1', says: ['not valid JSON'] }],
  },
  {
    name: 'arguments given as a JSON string holding a list are E3',
    text: '<tool_call>{"name": "zoom_in", "arguments": "[1, 2]"}</tool_call>',
    errors: [{ class: 'E3' }],
  },
  {
    name: 'a name that is not a string is E3',
    text: '<tool_call>{"name": 7, "arguments": {}}</tool_call>',
    errors: [{ class: 'E3', says: ['"name" must be a string'] }],
  },
  {
    name: 'a bad call does not stop a good one in the same message',
    text: '<tool_call>{"name": "zoom_in"}</tool_call> <tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}</tool_call>',
    calls: [mask(['Wins'])],
    errors: [{ class: 'E2' }],
  },
  {
    name: 'a hermes Terminate call is the final answer, not a tool call',
    text: '<tool_call>{"name": "Terminate", "arguments": {"ans": "Belgium"}}</tool_call>',
    answer: 'Belgium',
    answerStyle: 'terminate',
  },
  {
    name: 'errors in a message of several lines name the line',
    text: 'Let me look.\n\n<tool_call>{"name": "zoom_in"}</tool_call>',
    errors: [{ class: 'E2', says: ['line 3:'], line: 3 }],
  },
  {
    name: 'a hermes call and a ReFocus block in one message are read in written order',
    text: '```python\nfocus_on_rows_with_highlight(image_1, ["3"], rows_bbox)\n```\n<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}</tool_call>',
    calls: [{ name: 'focus_on_rows_with_highlight', arguments: { rows: ['3'] } }, mask(['Wins'])],
    formats: ['hermes', 'refocus'],
  },
];

for (const c of cases) test(c.name, () => void checkCase(c));
