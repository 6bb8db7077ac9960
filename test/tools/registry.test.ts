import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { contentHash, encodePng, type RgbImage } from '../../env/core/image.js';
import { resolveMetadata, type PixelMetadata } from '../../env/tools/metadata.js';
import { availableToolNames, getTool, listTools, runToolCall, toolsAsOpenAIFunctions, toolsPromptBlock } from '../../env/tools/registry.js';
import type { ToolCall } from '../../env/tools/types.js';
import { tableFixture, verticalBarsFixture } from '../fixtures/render.js';
import { assertPixels, inRect, insetBox, onOutline, RED, WHITE } from './pixels.js';

const FOCUS = ['columns', 'rows', 'x_values', 'y_values'].flatMap((f) => ['mask', 'draw', 'highlight'].map((m) => `focus_on_${f}_with_${m}`));
const GEOMETRY = ['zoom_in', 'draw_horizontal_line', 'draw_vertical_line', 'mark_point', 'ocr'];
const CONSTRUCTIONS = ['draw_line', 'draw_segment', 'draw_circle'];
const SEARCH = ['crop'];

async function table(): Promise<{ image: RgbImage; meta: PixelMetadata }> {
  const f = await tableFixture();
  return { image: f.image, meta: resolveMetadata(f.meta, f.image.width, f.image.height) };
}

test('the registry lists the twelve ReFocus tools, then zoom_in, the two lines, mark_point and ocr, then the constructions, then crop', () => {
  assert.deepEqual(listTools().map((t) => t.name), [...FOCUS, ...GEOMETRY, ...CONSTRUCTIONS, ...SEARCH]);
  assert.equal(getTool('focus_on_rows_with_draw')?.name, 'focus_on_rows_with_draw');
  assert.equal(getTool('rotate'), undefined);
  // DeepEyes' name is found, though no list offers it.
  assert.equal(getTool('image_zoom_in_tool')?.name, 'image_zoom_in_tool');
});

test('every tool schema is valid draft-07, closed to extra arguments, and described for a model', () => {
  const ajv = new Ajv({ strict: true });
  for (const tool of listTools()) {
    assert.equal(ajv.validateSchema(tool.parameters), true, `${tool.name}: ${ajv.errorsText()}`);
    assert.equal(tool.parameters.additionalProperties, false, tool.name);
    assert.ok(tool.description.length > 80 && !tool.description.includes('\n'), `${tool.name} needs a one-paragraph description`);
    for (const [name, schema] of Object.entries(tool.parameters.properties)) assert.ok((schema as { description?: string }).description, `${tool.name}.${name} needs a description`);
    // The example each tool shows a model is itself a valid call.
    const outcome = ajv.validate(tool.parameters, tool.exampleArguments?.() ?? {});
    assert.equal(outcome, true, `${tool.name} example: ${ajv.errorsText()}`);
  }
});

test('tools are exported in OpenAI function format, all or by name', async () => {
  const all = toolsAsOpenAIFunctions();
  assert.equal(all.length, 21);
  const [first] = toolsAsOpenAIFunctions(['focus_on_columns_with_mask']);
  assert.deepEqual(first, {
    type: 'function',
    function: {
      name: 'focus_on_columns_with_mask',
      description: getTool('focus_on_columns_with_mask')?.description,
      parameters: {
        type: 'object',
        properties: { columns: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'a list of column names, as written in the header row' } },
        required: ['columns'],
        additionalProperties: false,
      },
    },
  });
  // Callers get copies: decorating an exported schema does not change validation.
  (first?.function.parameters.properties as Record<string, unknown>).columns = {};
  assert.ok(!(await runToolCall({ width: 1, height: 1, data: Buffer.alloc(3) }, { name: 'focus_on_columns_with_mask', arguments: { columns: 'x' } }, resolveMetadata({}, 1, 1))).ok);
  assert.throws(() => toolsAsOpenAIFunctions(['nope']), /unknown tool 'nope'; valid tools are: focus_on_columns_with_mask/);
});

test('the prompt block names each requested tool with its description, arguments and an example call', async () => {
  const { meta } = await table();
  const block = toolsPromptBlock(['focus_on_columns_with_mask', 'zoom_in'], meta);
  assert.match(block, /### focus_on_columns_with_mask\n/);
  assert.ok(block.includes(getTool('zoom_in')?.description ?? '?'));
  assert.match(block, /- bbox \(required\): four numbers/);
  assert.match(block, /- factor \(optional\): a number from 1 to 4/);
  assert.ok(block.includes('Example: {"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Rider", "Country"]}}'), block);
  assert.ok(!block.includes('mark_point'));
  assert.equal(toolsPromptBlock().split("### ").length - 1, 21);
});

test('availableToolNames offers focus tools only for the band families the metadata has', async () => {
  const { meta } = await table();
  assert.deepEqual(availableToolNames(meta), [...FOCUS.filter((n) => n.includes('columns') || n.includes('rows')), ...GEOMETRY]);
  const chart = await verticalBarsFixture();
  assert.deepEqual(availableToolNames(resolveMetadata(chart.meta, 400, 260)), [...FOCUS.filter((n) => n.includes('x_values')), ...GEOMETRY]);
  assert.deepEqual(availableToolNames(resolveMetadata({}, 10, 10)), GEOMETRY);
});

test('E1: an unknown tool lists the valid tools for this image, suggests the near one, and names the tool as written', async () => {
  const { image, meta } = await table();
  const outcome = await runToolCall(image, { name: 'focus_on_column_with_mask', arguments: { columns: ['Wins'] } }, meta);
  assert.deepEqual(outcome, {
    ok: false,
    error: {
      class: 'E1',
      message: `unknown tool 'focus_on_column_with_mask'. Did you mean 'focus_on_columns_with_mask'? Valid tools for this image are: ${availableToolNames(meta).join(', ')}`,
      // The name as written, as E2 and E3 errors carry the tool's.
      tool: 'focus_on_column_with_mask',
    },
  });
});

test('E1: a call that is not a {name, arguments} object, or whose arguments are not an object', async () => {
  const { image, meta } = await table();
  for (const call of [null, { arguments: {} }, { name: '' }] as unknown as ToolCall[]) {
    const outcome = await runToolCall(image, call, meta);
    assert.ok(!outcome.ok);
    assert.equal(outcome.error.class, 'E1');
  }
  const listArgs = await runToolCall(image, { name: 'mark_point', arguments: [1, 2] as unknown as Record<string, unknown> }, meta);
  assert.ok(!listArgs.ok);
  assert.equal(listArgs.error.class, 'E1');
  assert.match(listArgs.error.message, /mark_point: arguments must be a JSON object such as \{"x": \.\.\.\}/);
});

test('arguments sent as a JSON string (OpenAI style) are read as JSON', async () => {
  const { image, meta } = await table();
  const outcome = await runToolCall(image, { name: 'mark_point', arguments: '{"x": 10, "y": 12}' as unknown as Record<string, unknown> }, meta);
  assert.ok(outcome.ok);
  const broken = await runToolCall(image, { name: 'mark_point', arguments: '{"x": 10,' as unknown as Record<string, unknown> }, meta);
  assert.ok(!broken.ok && broken.error.class === 'E1');
});

test('E2: a missing argument says what it is with an example from this image', async () => {
  const { image, meta } = await table();
  const outcome = await runToolCall(image, { name: 'focus_on_columns_with_mask', arguments: {} }, meta);
  assert.deepEqual(outcome, {
    ok: false,
    error: { class: 'E2', tool: 'focus_on_columns_with_mask', message: 'focus_on_columns_with_mask needs \'columns\': a list of column names, as written in the header row, e.g. ["Rider", "Country"]' },
  });
});

test('E2: an extra argument is named, with the arguments the tool does take', async () => {
  const { image, meta } = await table();
  const extra = await runToolCall(image, { name: 'draw_horizontal_line', arguments: { y: 10, colour: 'blue' } }, meta);
  assert.ok(!extra.ok);
  assert.equal(extra.error.class, 'E2');
  assert.equal(extra.error.message, "draw_horizontal_line does not take 'colour'; its arguments are: 'y' (a number: where the line goes, in pixels from the top of the current image)");
  const renamed = await runToolCall(image, { name: 'focus_on_rows_with_draw', arguments: { row: ['Merckx'] } }, meta);
  assert.ok(!renamed.ok);
  assert.equal(renamed.error.class, 'E2');
  assert.match(renamed.error.message, /^focus_on_rows_with_draw does not take 'row' — it needs 'rows': a list of row names/);
});

test('E3: an argument of the wrong type or shape', async () => {
  const { image, meta } = await table();
  for (const [call, pattern] of [
    [{ name: 'focus_on_columns_with_mask', arguments: { columns: 'Wins' } }, /^focus_on_columns_with_mask: 'columns' must be a list of column names, as written in the header row, e\.g\. \["Rider", "Country"\]; got "Wins"$/],
    [{ name: 'focus_on_columns_with_mask', arguments: { columns: ['Wins', 3] } }, /'columns' must be a list of column names.*got \["Wins", 3\]/],
    [{ name: 'zoom_in', arguments: { bbox: [1, 2, 3] } }, /'bbox' must be four numbers \[x1, y1, x2, y2\]/],
    [{ name: 'mark_point', arguments: { x: '10', y: 5 } }, /'x' must be a number: pixels from the left edge/],
  ] as const) {
    const outcome = await runToolCall(image, call as ToolCall, meta);
    assert.ok(!outcome.ok);
    assert.equal(outcome.error.class, 'E3', outcome.error.message);
    assert.match(outcome.error.message, pattern);
  }
});

test('E4: an unknown label lists the labels of that family', async () => {
  const { image, meta } = await table();
  const outcome = await runToolCall(image, { name: 'focus_on_columns_with_mask', arguments: { columns: ['Country', 'Points'] } }, meta);
  assert.deepEqual(outcome, { ok: false, error: { class: 'E4', tool: 'focus_on_columns_with_mask', message: "unknown column 'Points' — columns are: Rider, Country, Wins, Team, Year" } });
});

test('E4: a family the image does not have says which families it has and which tool to use', async () => {
  const { image, meta } = await table();
  const outcome = await runToolCall(image, { name: 'focus_on_x_values_with_highlight', arguments: { x_values: ['2020'] } }, meta);
  assert.ok(!outcome.ok);
  assert.equal(outcome.error.class, 'E4');
  assert.equal(outcome.error.message, 'this image has no labelled x values; it has columns and rows — use focus_on_columns_with_highlight or focus_on_rows_with_highlight instead');
});

test('E4: a value out of range', async () => {
  const { image, meta } = await table();
  const outcome = await runToolCall(image, { name: 'zoom_in', arguments: { bbox: [0, 0, 50, 50], factor: 8 } }, meta);
  assert.deepEqual(outcome, { ok: false, error: { class: 'E4', tool: 'zoom_in', message: "zoom_in: 'factor' must be between 1 and 4; got 8" } });
});

test('E5: an exception inside a tool becomes an error outcome, never a throw', async () => {
  // Metadata that skipped resolveMetadata (a box is null): the tool throws while reading it.
  const meta = { unit: 'pixels', columns_bbox: { A: { x1: 0, y1: 0, x2: 5, y2: 10 }, B: null } } as unknown as PixelMetadata;
  const image: RgbImage = { width: 10, height: 10, data: Buffer.alloc(300) };
  const outcome = await runToolCall(image, { name: 'focus_on_columns_with_mask', arguments: { columns: ['A'] } }, meta);
  assert.ok(!outcome.ok);
  assert.equal(outcome.error.class, 'E5');
  assert.equal(outcome.error.tool, 'focus_on_columns_with_mask');
  assert.match(outcome.error.message, /failed inside the tool \(.+\)\. This is not a problem with your call/);
});

test('E5: an image whose buffer does not match its size is refused before any tool paints on it', async () => {
  const broken: RgbImage = { width: 100, height: 100, data: Buffer.alloc(30) };
  const outcome = await runToolCall(broken, { name: 'mark_point', arguments: { x: 5, y: 5 } }, resolveMetadata({}, 100, 100));
  assert.deepEqual(outcome, {
    ok: false,
    error: { class: 'E5', tool: 'mark_point', message: 'mark_point cannot run: the current image is malformed (30 bytes for 100×100 RGB, expected 30000). This is not a problem with your call.' },
  });
});

test('every tool is deterministic: the same call twice gives byte-identical PNGs, and the input is untouched', async () => {
  const { image, meta } = await table();
  const before = contentHash(image.data);
  for (const name of availableToolNames(meta)) {
    const tool = getTool(name);
    const call = { name, arguments: tool?.exampleArguments?.(meta) ?? {} };
    const a = await runToolCall(image, call, meta);
    const b = await runToolCall(image, call, meta);
    assert.ok(a.ok && b.ok, `${name}: ${JSON.stringify(a.ok ? '' : a.error)}`);
    assert.equal(contentHash(await encodePng(a.image)), contentHash(await encodePng(b.image)), name);
    // ocr reads the image and returns it as it was; every other tool edits it.
    assert.ok(name === 'ocr' || !a.image.data.equals(image.data) || /unchanged/.test(a.summary), `${name} should change the image`);
  }
  assert.equal(contentHash(image.data), before);
});

test('tools compose: mask columns, then draw around one kept column, equals both specifications applied in order', async () => {
  const { image, meta } = await table();
  const columns = meta.columns_bbox ?? {};
  const masked = await runToolCall(image, { name: 'focus_on_columns_with_mask', arguments: { columns: ['Country', 'Wins'] } }, meta);
  assert.ok(masked.ok);
  const drawn = await runToolCall(masked.image, { name: 'focus_on_columns_with_draw', arguments: { columns: ['Wins'] } }, meta);
  assert.ok(drawn.ok);
  const maskRects = ['Rider', 'Team', 'Year'].map((l) => insetBox(columns[l]!, image.width, image.height));
  const wins = insetBox(columns.Wins!, image.width, image.height);
  assertPixels(image, drawn.image, (x, y) => (onOutline(wins, x, y) ? RED : maskRects.some((r) => inRect(r, x, y)) ? WHITE : null));
  assert.ok(!masked.image.data.equals(drawn.image.data), 'the first result was not painted over in place');
});

test('ocr runs through runToolCall like every tool and lists the table text with boxes', async () => {
  const { image, meta } = await table();
  const read = await runToolCall(image, { name: 'ocr', arguments: { bbox: [0, 0, image.width, 60] } }, meta);
  assert.ok(read.ok, JSON.stringify(read.ok ? '' : read.error));
  assert.match(read.summary, /"Rider" \[/);
  assert.match(read.summary, /"Country" \[/);
  assert.ok(read.image.data.equals(image.data), 'ocr returns the image unchanged');
});
