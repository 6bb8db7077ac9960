import { test } from 'node:test';
import { checkCase, mask, type ParseCase } from './cases.js';

const cases: ParseCase[] = [
  { name: '<answer> tags give the final answer, trimmed', text: 'The total is seven.\n<answer> 7 </answer>', answer: '7', answerStyle: 'answer_tag', answerCount: 1 },
  { name: 'an answer list is split on || and each item trimmed', text: '<answer>Alice Smith || Bob Johnson</answer>', answer: ['Alice Smith', 'Bob Johnson'] },
  { name: 'ReFocus ground-truth separators ||| split lists too', text: '<answer>A|||B|||C</answer>', answer: ['A', 'B', 'C'] },
  { name: 'a single | is not a list separator', text: '<answer>a|b</answer>', answer: 'a|b' },
  { name: '<answer>\\boxed{7}</answer> is the answer 7 and counts once', text: '<answer>\\boxed{7}</answer>', answer: '7', answerCount: 1, answerStyle: 'answer_tag' },
  { name: 'FINAL ANSWER: runs to the end of its line and drops ". TERMINATE"', text: 'ANSWER: Josh won 3 games. FINAL ANSWER: 3. TERMINATE\nthanks', answer: '3', answerStyle: 'final_answer' },
  { name: 'FINAL ANSWER keeps the full stop of an abbreviation', text: 'FINAL ANSWER: U.S.', answer: 'U.S.' },
  { name: 'FINAL ANSWER keeps decimals', text: 'FINAL ANSWER: 3.75', answer: '3.75' },
  { name: 'Final answer: in other letter cases and with markdown bold is read', text: '**Final Answer:** 42', answer: '42' },
  { name: 'an empty FINAL ANSWER: is not an answer', text: 'FINAL ANSWER:\n', answer: null, answerCount: 0 },
  { name: 'two FINAL ANSWER markers on one line: the last holds the answer', text: 'FINAL ANSWER: maybe 4 FINAL ANSWER: 5', answer: '5', answerCount: 1 },
  { name: '\\boxed{} with nested braces is read whole', text: 'So $x = \\boxed{\\frac{1}{2}}$.', answer: '\\frac{1}{2}', answerStyle: 'boxed' },
  { name: 'an unbalanced \\boxed{ is not an answer', text: 'So \\boxed{1 + {2}', answer: null },
  { name: 'Terminate(ans="...") in prose is the answer', text: 'Terminate(ans="Belgium")', answer: 'Belgium', answerStyle: 'terminate' },
  { name: 'Terminate with a positional number is the answer', text: 'Done. Terminate(12.5)', answer: '12.5' },
  { name: 'Terminate with free text (an apostrophe) is read raw', text: "Terminate(ans=Bob's team)", answer: "Bob's team" },
  { name: 'a name ending in Terminate( is not Terminate', text: 'selfTerminate(3)', answer: null },
  {
    name: 'several answers: the last one written wins and the count is recorded',
    text: '<answer>6</answer>\nOn reflection: FINAL ANSWER: 7',
    answer: '7',
    answerCount: 2,
    answerStyle: 'final_answer',
  },
  { name: 'an unclosed <answer> is an E1 error that shows the form', text: 'Hmm <answer>7', errors: [{ class: 'E1', says: ['<answer> is not closed', '<answer>7</answer>'] }] },
  { name: 'an <answer> opened twice before its close uses the inner pair', text: '<answer>x <answer>7</answer>', answer: '7', answerCount: 1 },
  {
    name: 'a call and an answer in the same message are both reported',
    text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}</tool_call>\n<answer>7</answer>',
    calls: [mask(['Wins'])],
    answer: '7',
  },
  { name: 'an answer written inside a tool call argument is not an answer', text: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["FINAL ANSWER: 3"]}}</tool_call>', calls: [mask(['FINAL ANSWER: 3'])], answer: null },
  { name: 'an answer written inside python code is not an answer', text: '```python\nprint("FINAL ANSWER: 3")\n```', answer: null },
];

const thinkCases: ParseCase[] = [
  {
    name: 'tool calls inside <think> are counted but not returned',
    text: '<think>I could call <tool_call>{"name": "zoom_in", "arguments": {"bbox": [0, 0, 9, 9]}}</tool_call> but no.</think>\n<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}</tool_call>',
    calls: [mask(['Wins'])],
    ignoredInThink: 1,
  },
  {
    name: 'answers inside <think> are not final answers',
    text: '<think>Maybe <answer>6</answer>? Let me check.</think> <answer>7</answer>',
    answer: '7',
    answerCount: 1,
  },
  {
    name: 'a python block inside <think> is not run',
    text: '<think>\n```python\nfocus_on_columns_with_mask(image_1, ["A"], columns_bbox)\n```\n</think>\nI will answer directly. <answer>A</answer>',
    answer: 'A',
    ignoredInThink: 1,
  },
  {
    name: 'a </think> with no opening tag closes reasoning that began at the start (Qwen3 template)',
    text: 'reasoning... <answer>6</answer></think>\n<answer>7</answer>',
    answer: '7',
    answerCount: 1,
  },
  {
    name: 'an unclosed <think> that hides a call is an E1 error explaining why nothing ran',
    text: '<think>Let me mask. <tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Wins"]}}</tool_call>',
    ignoredInThink: 1,
    errors: [{ class: 'E1', says: ['<think> was never closed', '</think>'] }],
  },
  {
    name: 'an unclosed <think> with nothing actionable inside is not an error',
    text: '<think>I am still thinking about this',
    errors: [],
  },
  {
    name: 'errors inside <think> are not reported',
    text: '<think><tool_call>{"name": broken</tool_call></think><answer>1</answer>',
    answer: '1',
    errors: [],
  },
];

for (const c of [...cases, ...thinkCases]) test(c.name, () => void checkCase(c));
