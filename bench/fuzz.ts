/**
 * `npm run bench -- fuzz`: parseAction on a million generated model messages (VISTOOL_FUZZ_N to
 * change the count), counting the results that are not plain JSON data, that structuredClone
 * refuses, or that threw. The suite's property tests run hundreds of inputs; this runs the count
 * a hardening claim needs. Prints the counts and the parse rate.
 */
import fc from 'fast-check';
import { parseAction } from '../env/actions/parse.js';
import { isPlainJson } from '../test/actions/plain-json.js';

const NAMES = ['toString', 'valueOf', 'constructor', 'hasOwnProperty', '__proto__', 'isPrototypeOf', 'prototype', 'Object', 'eval', 'then', 'image_1', 'None', 'True'];
const TOOLS = ['zoom_in', 'focus_on_columns_with_mask', 'focus_on_rows_with_draw', 'focus_on_x_values_with_highlight', 'Terminate'];
const PIECES = ['<tool_call>', '</tool_call>', '<answer>', '</answer>', '```python\n', '\n```', '{', '}', '[', ']', '(', ')', '"', "'", ',', ':', '=', '\n', ' ', '\\', '#', '"actions"', '"name"', '"arguments"', 'FINAL ANSWER:', '\\boxed{', ...NAMES, ...TOOLS];

const pythonCall = fc
  .tuple(fc.constantFrom(...TOOLS), fc.array(fc.oneof(fc.constantFrom(...NAMES), fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v))), { maxLength: 4 }), fc.constantFrom(...NAMES))
  .map(([tool, args, target]) => '```python\n' + `${target} = ${tool}(${args.join(', ')})\ndisplay(${target})\n` + '```');
const message = fc.oneof(
  pythonCall,
  fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 120 }),
);


export async function benchFuzz(): Promise<void> {
  const total = Number(process.env.VISTOOL_FUZZ_N ?? 1_000_000);
  const counts = { inputs: 0, notJson: 0, unclonable: 0, threw: 0, calls: 0 };
  const examples: string[] = [];
  const started = performance.now();
  for (let seed = 1; counts.inputs < total; seed++) {
    for (const text of fc.sample(message, { numRuns: Math.min(10_000, total - counts.inputs), seed })) {
      counts.inputs++;
      try {
        const result = parseAction(text);
        counts.calls += result.calls.length;
        if (!result.calls.every((call) => isPlainJson(call.arguments))) {
          counts.notJson++;
          if (examples.length < 3) examples.push(text);
        }
        try {
          structuredClone(result);
        } catch {
          counts.unclonable++;
        }
      } catch {
        counts.threw++;
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(
    `fuzz: ${counts.inputs} inputs (${counts.calls} calls parsed): ${counts.notJson} with arguments that are not plain JSON, ` +
      `${counts.unclonable} unclonable, ${counts.threw} threw; ${(counts.inputs / seconds).toFixed(0)} inputs/s\n`,
  );
  for (const text of examples) process.stdout.write(`  e.g. ${JSON.stringify(text)}\n`);
}
