import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAction } from '../../env/actions/parse.js';
import { checkCase, mask, type ParseCase } from './cases.js';

const py = (code: string): string => `THOUGHT 0: I need the relevant part.\nACTION 0:\n\`\`\`python\n${code}\n\`\`\``;

const NEVER_RUN = 'Code is never run';

/** Blocks as they appear in the ReFocus repository's prompts (zeyofu/ReFocus_Code src/prompt_need.py). */
const refocusPromptCases: ParseCase[] = [
  {
    name: 'ReFocus table prompt: focus on two columns with draw, then display',
    text: py('image_with_focused_columns = focus_on_columns_with_draw(image_1, ["Game Version", "Manager Name"], columns_bbox)\ndisplay(image_with_focused_columns)'),
    calls: [{ name: 'focus_on_columns_with_draw', arguments: { columns: ['Game Version', 'Manager Name'] } }],
    formats: ['refocus'],
    imageVariables: ['image_with_focused_columns'],
  },
  {
    name: 'ReFocus table prompt: highlight rows by their row starters',
    text: py('image_with_focused_rows = focus_on_rows_with_highlight(image_1, ["3", "4", "5"], rows_bbox)\ndisplay(image_with_focused_rows)'),
    calls: [{ name: 'focus_on_rows_with_highlight', arguments: { rows: ['3', '4', '5'] } }],
  },
  {
    name: 'ReFocus table prompt: mask columns, then draw rows on the masked image (chained variables)',
    text: py(
      'image_with_focused_columns = focus_on_columns_with_mask(image_1, ["Year", "Earning"], columns_bbox)\nimage_with_focused_rows = focus_on_rows_with_draw(image_with_focused_columns, ["4", "5"], rows_bbox)\ndisplay(image_with_focused_rows)',
    ),
    calls: [mask(['Year', 'Earning']), { name: 'focus_on_rows_with_draw', arguments: { rows: ['4', '5'] } }],
    imageVariables: ['image_with_focused_columns', 'image_with_focused_rows'],
  },
  {
    name: 'ReFocus chart prompt: highlight one x value on a vertical bar chart',
    text: py('image_with_focused_x_values = focus_on_x_values_with_highlight(image_1, ["China"], x_values_bbox)\ndisplay(image_with_focused_x_values)'),
    calls: [{ name: 'focus_on_x_values_with_highlight', arguments: { x_values: ['China'] } }],
  },
  {
    name: 'ReFocus chart prompt: draw one y value on a horizontal bar chart',
    text: py('image_with_focused_y_values = focus_on_y_values_with_draw(image_1, ["Josh"], y_values_bbox)\ndisplay(image_with_focused_y_values)'),
    calls: [{ name: 'focus_on_y_values_with_draw', arguments: { y_values: ['Josh'] } }],
  },
  {
    name: 'ReFocus answer line: FINAL ANSWER with a list joined by || and TERMINATE',
    text: "THOUGHT 1: I can see both.\nACTION 1: No action needed.\nANSWER: 'Alice Smith' and 'Bob Johnson'. FINAL ANSWER: Alice Smith||Bob Johnson. TERMINATE",
    answer: ['Alice Smith', 'Bob Johnson'],
    answerStyle: 'final_answer',
  },
];

const mappingCases: ParseCase[] = [
  {
    name: 'keyword columns_to_focus_on= maps to the columns argument',
    text: py('focus_on_columns_with_mask(image=image_1, columns_to_focus_on=["Country"], all_columns_bounding_boxes=columns_bbox)'),
    calls: [mask(['Country'])],
  },
  {
    name: 'keyword labels_to_focus_on= maps to the family of the tool',
    text: py('focus_on_x_values_with_mask(image_1, labels_to_focus_on=["2005", "2006"], all_bboxes=x_values_bbox)'),
    calls: [{ name: 'focus_on_x_values_with_mask', arguments: { x_values: ['2005', '2006'] } }],
  },
  {
    name: 'keyword columns= maps to columns',
    text: py('focus_on_columns_with_highlight(image_1, columns=["Wins"])'),
    calls: [{ name: 'focus_on_columns_with_highlight', arguments: { columns: ['Wins'] } }],
  },
  {
    name: "ReFocus's docstring name columns_to_mask= means the columns to focus on",
    text: py('focus_on_columns_with_mask(image_1, columns_to_mask=["Wins"], all_columns_bounding_boxes=columns_bbox)'),
    calls: [mask(['Wins'])],
  },
  {
    name: 'a dict literal of boxes, as in the ReFocus docstring example, is accepted and dropped',
    text: py(`focus_on_columns_with_mask(image_1, ["Year"], {"Year": {'x1': 0.1, 'y1': 0.1, 'x2': 0.3, 'y2': 0.9}, "Team": {'x1': 0.4, 'y1': 0.1, 'x2': 0.6, 'y2': 0.9}})`),
    calls: [mask(['Year'])],
  },
  {
    name: 'single-quoted strings, tuples and a trailing comma are literals',
    text: py("focus_on_rows_with_mask(image_1, ('Belgium', 'France',), rows_bbox,)"),
    calls: [{ name: 'focus_on_rows_with_mask', arguments: { rows: ['Belgium', 'France'] } }],
  },
  {
    name: 'a list assigned to a variable earlier can be passed as the labels',
    text: py('wanted = ["Country", "Wins"]\nfocus_on_columns_with_mask(image_1, wanted, columns_bbox)'),
    calls: [mask(['Country', 'Wins'])],
  },
  {
    name: 'a call nested as the image argument runs first, as Python would',
    text: py('display(focus_on_rows_with_draw(focus_on_columns_with_mask(image_1, ["Wins"], columns_bbox), ["Belgium"], rows_bbox))'),
    calls: [mask(['Wins']), { name: 'focus_on_rows_with_draw', arguments: { rows: ['Belgium'] } }],
  },
  {
    name: 'zoom_in takes the box positionally and the factor by keyword',
    text: py('zoomed = zoom_in(image_1, [10, 20, 200, 120], factor=2)\ndisplay(zoomed)'),
    calls: [{ name: 'zoom_in', arguments: { bbox: [10, 20, 200, 120], factor: 2 } }],
  },
  {
    name: 'draw_horizontal_line, draw_vertical_line and mark_point map their coordinates',
    text: py('a = draw_horizontal_line(image_1, 120.5)\nb = draw_vertical_line(a, -3)\nmark_point(b, 7, 8)'),
    calls: [
      { name: 'draw_horizontal_line', arguments: { y: 120.5 } },
      { name: 'draw_vertical_line', arguments: { x: -3 } },
      { name: 'mark_point', arguments: { x: 7, y: 8 } },
    ],
  },
  {
    name: 'True, False, None, comments, escapes and implicit string concatenation are read',
    text: py('# focus on the key column\nfocus_on_columns_with_mask(image_1, ["Win" "s", "Tab\\there", None, True, False], columns_bbox)  # done'),
    calls: [mask(['Wins', 'Tab\there', null, true, false] as unknown as string[])],
  },
  {
    name: 'a block indented as a whole is read',
    text: '```python\n    x = focus_on_columns_with_mask(image_1, ["A"], columns_bbox)\n    display(x)\n```',
    calls: [mask(['A'])],
  },
  {
    name: 'print(...) and display(...) are allowed no-ops',
    text: py('print("masking now")\nx = focus_on_columns_with_mask(image_1, ["A"], columns_bbox)\nprint(x)\ndisplay(x)'),
    calls: [mask(['A'])],
  },
  {
    name: 'a Terminate call in a python block is the final answer',
    text: py('Terminate(ans="Belgium||France")'),
    answer: ['Belgium', 'France'],
    answerStyle: 'terminate',
  },
  {
    name: 'variables from an earlier turn can be named when the caller passes them',
    text: py('focus_on_rows_with_draw(image_with_focused_columns, ["4"], rows_bbox)'),
    options: { imageVariables: ['image_with_focused_columns'] },
    calls: [{ name: 'focus_on_rows_with_draw', arguments: { rows: ['4'] } }],
  },
  {
    name: 'an unlabelled fence that calls a known tool is read as python',
    text: '```\nfocus_on_columns_with_mask(image_1, ["A"], columns_bbox)\n```',
    calls: [mask(['A'])],
  },
  {
    name: 'a ```text fence that mentions a tool is prose, not code',
    text: '```text\nfocus_on_columns_with_mask(image_1, ["A"], columns_bbox)\n```',
    formats: [],
  },
  {
    name: 'the missing labels argument is left for the registry to report',
    text: py('focus_on_columns_with_mask(image_1)'),
    calls: [{ name: 'focus_on_columns_with_mask', arguments: {} }],
  },
];

/** Everything here is refused without being evaluated; the error says what and that code never runs. */
const refusalCases: ParseCase[] = [
  { name: 'import os is refused', text: py('import os\nfocus_on_columns_with_mask(image_1, ["A"], columns_bbox)'), errors: [{ class: 'E1', says: ['import statements are not allowed', NEVER_RUN] }] },
  { name: 'from tools import * is refused', text: py('from tools import *'), errors: [{ class: 'E1', says: ['import'] }] },
  { name: "__import__('os') is refused as an unknown function", text: py("__import__('os').system('ls')"), errors: [{ class: 'E1', says: ['attribute access (__import__(...).system)'] }] },
  { name: "a bare __import__('os') call is refused", text: py("m = __import__('os')"), errors: [{ class: 'E1', says: ['__import__(...) is not allowed', 'focus_on_columns_with_mask', NEVER_RUN] }] },
  { name: 'open(...) is refused', text: py("data = open('/etc/passwd')"), errors: [{ class: 'E1', says: ['open(...) is not allowed'] }] },
  { name: 'exec("...") is refused', text: py('exec("import os")'), errors: [{ class: 'E1', says: ['exec(...) is not allowed'] }] },
  { name: 'eval("...") is refused', text: py('eval("1+1")'), errors: [{ class: 'E1', says: ['eval(...) is not allowed'] }] },
  { name: 'attribute calls like os.system are refused and named', text: py('os.system("rm -rf /")'), errors: [{ class: 'E1', says: ['attribute access (os.system) is not allowed'] }] },
  { name: 'attribute access on the image is refused', text: py('w = image_1.size'), errors: [{ class: 'E1', says: ['image_1.size'] }] },
  { name: 'Image.open, as a ReFocus notebook would load images, is refused', text: py('image_1 = Image.open("a.png")'), errors: [{ class: 'E1', says: ['Image.open'] }] },
  { name: 'subscripts are refused', text: py('x = columns_bbox["Wins"]'), errors: [{ class: 'E1', says: ['subscripts (columns_bbox[...])'] }] },
  { name: 'list comprehensions are refused', text: py('labels = [c for c in columns_bbox]'), errors: [{ class: 'E1', says: ['comprehensions'] }] },
  { name: 'generator expressions in a call are refused', text: py('print(c for c in "ab")'), errors: [{ class: 'E1', says: ['comprehensions'] }] },
  { name: 'lambdas are refused', text: py('f = lambda: 0'), errors: [{ class: 'E1', says: ['lambda'] }] },
  { name: 'f-strings are refused because they run code', text: py('print(f"{__import__(\'os\').system(\'ls\')}")'), errors: [{ class: 'E1', says: ['f-strings are not allowed'] }] },
  { name: 'bytes literals are refused', text: py('x = b"abc"'), errors: [{ class: 'E1', says: ['bytes'] }] },
  { name: 'def is refused', text: py('def f():\n    return 1'), errors: [{ class: 'E1', says: ['def'] }] },
  { name: 'for loops are refused', text: py('for c in ["A"]:\n    focus_on_columns_with_mask(image_1, [c], columns_bbox)'), errors: [{ class: 'E1', says: ['loops'] }] },
  { name: 'if statements are refused', text: py('if True:\n    x = 1'), errors: [{ class: 'E1', says: ['conditionals'] }] },
  { name: 'with statements are refused', text: py('with open("x") as f:\n    pass'), errors: [{ class: 'E1', says: ['with statements'] }] },
  { name: 'binary operators are refused', text: py('x = 1 + 2'), errors: [{ class: 'E1', says: ['operators (+)'] }] },
  { name: 'augmented assignment is refused', text: py('x = 1\nx += 2'), errors: [{ class: 'E1', says: ['augmented assignment (+=)'] }] },
  { name: 'walrus is refused', text: py('print(x := 3)'), errors: [{ class: 'E1', says: [':='] }] },
  { name: '*args unpacking is refused', text: py('focus_on_columns_with_mask(*args)'), errors: [{ class: 'E1', says: ['unpacking'] }] },
  { name: 'sets are refused', text: py('x = {"a", "b"}'), errors: [{ class: 'E1', says: ['sets'] }] },
  { name: 'tuple assignment is refused', text: py('a, b = 1, 2'), errors: [{ class: 'E1', says: ['tuple assignment'] }] },
  { name: 'an unknown name is refused and the allowed names are listed', text: py('focus_on_columns_with_mask(image_1, wanted, columns_bbox)'), errors: [{ class: 'E1', says: ['name wanted is not defined', 'image_1'] }] },
  { name: 'an unknown function is refused in python (its arguments cannot be mapped)', text: py('rotate(image_1, 90)'), errors: [{ class: 'E1', says: ['rotate(...) is not allowed'] }] },
  { name: 'a non-image first argument is E3', text: py('focus_on_columns_with_mask(["Wins"], columns_bbox)'), errors: [{ class: 'E3', says: ['image argument'] }] },
  { name: 'an image inside the labels list is E3', text: py('focus_on_columns_with_mask(image_1, [image_1], columns_bbox)'), errors: [{ class: 'E3', says: ['literal value'] }] },
  { name: 'too many positional arguments is E2', text: py('focus_on_columns_with_mask(image_1, ["A"], columns_bbox, 4)'), errors: [{ class: 'E2', says: ['at most 3 positional'] }] },
  { name: 'the same argument twice (positional and keyword) is E2', text: py('focus_on_columns_with_mask(image_1, ["A"], columns=["B"])'), errors: [{ class: 'E2', says: ['twice'] }] },
  { name: 'assigning to a tool name is refused', text: py('display = 3'), errors: [{ class: 'E1', says: ['function name'] }] },
  { name: 'unexpected indentation is refused', text: py('x = 1\n    y = 2'), errors: [{ class: 'E1', says: ['indentation'] }] },
  { name: 'an unclosed string is refused', text: py('x = "abc'), errors: [{ class: 'E1', says: ['not closed'] }] },
  { name: 'an unclosed bracket is refused', text: py('focus_on_columns_with_mask(image_1, ["A"'), errors: [{ class: 'E1', says: ['ends unexpectedly'] }] },
  { name: 'hex numbers are refused', text: py('zoom_in(image_1, [0x10, 0, 5, 5])'), errors: [{ class: 'E1', says: ['decimal'] }] },
  { name: 'a backtick or other stray character is refused', text: py('x = $y'), errors: [{ class: 'E1', says: ['unexpected character'] }] },
  { name: 'an unclosed ```python fence is E1', text: 'ACTION 0:\n```python\nfocus_on_columns_with_mask(image_1, ["A"], columns_bbox)\n', errors: [{ class: 'E1', says: ['not closed'] }], formats: ['refocus'] },
];

for (const c of [...refocusPromptCases, ...mappingCases, ...refusalCases]) test(c.name, () => void checkCase(c));

test('a refused statement refuses the whole block: no call from it is returned', () => {
  const result = parseAction(py('x = focus_on_columns_with_mask(image_1, ["A"], columns_bbox)\nimport os\ny = focus_on_rows_with_draw(x, ["B"], rows_bbox)'));
  assert.deepEqual(result.calls, []);
  assert.equal(result.errors.length, 1);
});

test('a refusal names the line of the message where the bad code is', () => {
  const result = parseAction(py('x = 1\nos.system("ls")'));
  // Lines: THOUGHT, ACTION, ```python, x = 1, os.system(...)
  assert.equal(result.errors[0]?.line, 5);
  assert.ok(result.errors[0]?.message.startsWith('line 5: '));
});

test('the location of a refusal points at the offending token', () => {
  const text = py('print(1)\nfoo = os.path');
  const result = parseAction(text);
  assert.equal(text.slice(result.errors[0]?.offset ?? -1).startsWith('.path'), true);
});

test('an error in one python block does not refuse another block in the same message', () => {
  const result = parseAction(`${py('import os')}\n${py('focus_on_columns_with_mask(image_1, ["A"], columns_bbox)')}`);
  assert.deepEqual(result.calls, [mask(['A'])]);
  assert.equal(result.errors.length, 1);
});

test('a variable bound in one python block can be used in the next block of the same message', () => {
  const result = parseAction(`${py('x = focus_on_columns_with_mask(image_1, ["A"], columns_bbox)')}\n${py('focus_on_rows_with_draw(x, ["B"], rows_bbox)')}`);
  assert.equal(result.errors.length, 0, JSON.stringify(result.errors));
  assert.equal(result.calls.length, 2);
});

test('Markdown-escaped underscores (focus\\_on\\_rows) read as ReFocus and VTool-R1 read them: as underscores', () => {
  const escaped = '```python\nimage\\_with\\_draw = focus\\_on\\_rows\\_with\\_draw(image\\_1, ["Men\\_total", "Women"], rows\\_bbox)\ndisplay(image\\_with\\_draw)\n```';
  const plain = '```python\nimage_with_draw = focus_on_rows_with_draw(image_1, ["Men_total", "Women"], rows_bbox)\ndisplay(image_with_draw)\n```';
  const read = parseAction(escaped);
  assert.deepEqual(read.errors, []);
  assert.deepEqual(read.calls, parseAction(plain).calls);
  assert.deepEqual(read.calls[0], { name: 'focus_on_rows_with_draw', arguments: { rows: ['Men_total', 'Women'] } });
  // An unlabelled fence is still recognised as code by its escaped tool name.
  assert.equal(parseAction(escaped.replace('```python', '```')).calls.length, 1);
  // Any other backslash in code stays an error, as before.
  assert.match(parseAction('```python\nx = focus_on_rows_with_draw(image_1, ["a"], rows\\bbox)\n```').errors[0]?.message ?? '', /./);
});
