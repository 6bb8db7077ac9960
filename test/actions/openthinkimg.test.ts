import { test } from 'node:test';
import { checkCase, mask, type ParseCase } from './cases.js';

const cases: ParseCase[] = [
  {
    name: 'an OpenThinkIMG message that is one JSON object is read',
    text: '{"thought": "The Wins column matters.", "actions": [{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}]}',
    calls: [mask(['Wins'])],
    formats: ['openthinkimg'],
  },
  {
    name: 'several actions in one object are read in order',
    text: '{"thought": "", "actions": [{"name": "draw_horizontal_line", "arguments": {"y": 40}}, {"name": "draw_vertical_line", "arguments": {"x": 90}}]}',
    calls: [
      { name: 'draw_horizontal_line', arguments: { y: 40 } },
      { name: 'draw_vertical_line', arguments: { x: 90 } },
    ],
  },
  {
    name: 'actions inside a ```json fence are read',
    text: 'Let me focus.\n```json\n{"thought": "t", "actions": [{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}]}\n```',
    calls: [mask(['Wins'])],
    formats: ['openthinkimg'],
  },
  {
    name: 'a lone call object in a ```json fence is read',
    text: '```json\n{"name": "zoom_in", "arguments": {"bbox": [0, 0, 50, 50]}}\n```',
    calls: [{ name: 'zoom_in', arguments: { bbox: [0, 0, 50, 50] } }],
  },
  {
    name: 'an unlabelled fence that holds actions JSON is read',
    text: '```\n{"thought": "", "actions": [{"name": "mark_point", "arguments": {"x": 1, "y": 2}}]}\n```',
    calls: [{ name: 'mark_point', arguments: { x: 1, y: 2 } }],
  },
  {
    name: 'JSON with trailing text after it is read, and the trailing text can hold the answer',
    text: '{"thought": "done", "actions": [{"name": "draw_vertical_line", "arguments": {"x": 3}}]}\nThen I will check the bar.',
    calls: [{ name: 'draw_vertical_line', arguments: { x: 3 } }],
  },
  {
    name: 'JSON after a line of prose is read',
    text: 'Here is my plan:\n{"thought": "mask", "actions": [{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}]}',
    calls: [mask(['Wins'])],
  },
  {
    name: 'a string with braces and an escaped quote inside the thought does not break the JSON',
    text: '{"thought": "use {Wins} and \\"Country\\" }}", "actions": [{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}]}',
    calls: [mask(['Wins'])],
  },
  {
    name: 'a Terminate action is the final answer',
    text: '{"thought": "The answer is 7.", "actions": [{"name": "Terminate", "arguments": {"ans": "7"}}]}',
    answer: '7',
    answerStyle: 'terminate',
    formats: ['openthinkimg'],
  },
  {
    name: 'a Terminate action without ans is E2',
    text: '{"thought": "", "actions": [{"name": "Terminate", "arguments": {}}]}',
    errors: [{ class: 'E2', says: ['"ans"'] }],
  },
  {
    name: 'an empty actions list is neither a call nor an error',
    text: '{"thought": "I am not sure yet.", "actions": []}',
    formats: ['openthinkimg'],
  },
  {
    name: '"actions" that is not a list is E3',
    text: '{"thought": "", "actions": {"name": "zoom_in", "arguments": {}}}',
    errors: [{ class: 'E3', says: ['"actions" must be a list'] }],
  },
  {
    name: 'an action with arguments that are a string of words is E1; the good action beside it is read',
    text: '{"thought": "", "actions": [{"name": "zoom_in", "arguments": "the top left"}, {"name": "mark_point", "arguments": {"x": 1, "y": 1}}]}',
    calls: [{ name: 'mark_point', arguments: { x: 1, y: 1 } }],
    errors: [{ class: 'E1' }],
  },
  {
    name: 'an action without a name is E2 and shows the OpenThinkIMG form',
    text: '{"thought": "", "actions": [{"arguments": {"columns": ["Wins"]}}]}',
    errors: [{ class: 'E2', says: ['{"thought"', '"actions"'] }],
  },
  {
    name: 'broken actions JSON is E1',
    text: '{"thought": "x", "actions": [{"name": "zoom_in", "arguments": {"bbox": [1, 2, 3, 4]}}',
    errors: [{ class: 'E1', says: ['not valid', 'missing'] }],
    formats: ['openthinkimg'],
  },
  {
    name: 'broken JSON in a ```json fence that mentions actions is E1',
    text: '```json\n{"thought": "x", "actions": [{"name": "zoom_in", "arguments": {"bbox": [1, 2, 3, 4]}]}\n```',
    errors: [{ class: 'E1', says: ['JSON block is not valid'] }],
  },
  {
    name: 'a ```json fence of plain data is not a call and not an error',
    text: 'The table as data:\n```json\n{"Country": "Belgium", "Wins": 7}\n```\nFINAL ANSWER: 7',
    answer: '7',
    formats: [],
  },
  {
    name: 'prose with braces but no actions is not read as JSON',
    text: 'The set {1, 2} has two items.\n<answer>2</answer>',
    answer: '2',
  },
];

for (const c of cases) test(c.name, () => void checkCase(c));
