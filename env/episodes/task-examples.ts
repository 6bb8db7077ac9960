/**
 * The call and answer forms an episode shows its policy (the system prompt's example, every
 * parse error's "write it like ..."), made from the episode's own image: a bar chart is shown a
 * call on its own bar labels, a table a call on its own header.
 *
 * The examples are a function of the image's metadata and of the answer's *shape* (a number, one
 * of the image's labels, several answers) only, never of its value: two tasks on one image whose
 * answers differ but have the same shape get the same examples, so an error message cannot tell
 * the policy the answer.
 */
import { DEFAULT_EXAMPLES, type ActionExamples } from '../actions/examples.js';
import { bandKey, type BandFamily, type PixelMetadata } from '../tools/metadata.js';
import { focusToolName } from '../tools/focus.js';

/** Bar families first: a chart's bands are what its questions are about; a table's columns before its rows. */
const FAMILY_ORDER: readonly BandFamily[] = ['x_values', 'y_values', 'columns', 'rows'];
/** Labels longer than this are not copied into an example (an OCR'd cell can be a sentence). */
const MAX_LABEL_CHARS = 40;

function firstBands(meta: PixelMetadata): { family: BandFamily; labels: string[] } | null {
  for (const family of FAMILY_ORDER) {
    const labels = Object.keys(meta[bandKey(family)] ?? {}).filter((label) => label.trim() !== '' && label.length <= MAX_LABEL_CHARS);
    if (labels.length > 0) return { family, labels };
  }
  return null;
}

/** The shape of an answer, the only thing about it an example may depend on. */
export function answerShape(answer: string | string[], labels: readonly string[]): 'list' | 'number' | 'label' | 'text' {
  if (Array.isArray(answer)) return 'list';
  // A label first: years on an axis are labels that look like numbers.
  if (labels.includes(answer.trim())) return 'label';
  return /^-?\d+(\.\d+)?%?$/.test(answer.trim().replaceAll(',', '')) ? 'number' : 'text';
}

function answerExample(shape: ReturnType<typeof answerShape>, labels: readonly string[]): string {
  const [first = 'A', second = 'B'] = labels;
  const body = { list: `${first}||${second}`, number: '7', label: first, text: 'your answer' }[shape];
  return `<answer>${body}</answer>`;
}

/** The examples for an episode on an image with `meta` whose task's answer is `answer`. */
export function examplesFor(meta: PixelMetadata, answer: string | string[], toolNames: readonly string[]): Readonly<ActionExamples> {
  const points = Object.keys(meta.points ?? {}).filter((label) => label.length <= MAX_LABEL_CHARS);
  if (points.length >= 2 && toolNames.includes('draw_line')) return diagramExamples(points, answer);
  const bands = firstBands(meta);
  const allLabels = bands?.labels ?? [];
  const answerLine = answerExample(answerShape(answer, allLabels), allLabels);
  if (bands === null || !toolNames.includes(focusToolName(bands.family, 'mask'))) {
    return { ...DEFAULT_EXAMPLES, answer: answerLine };
  }
  const tool = focusToolName(bands.family, 'mask');
  const one = JSON.stringify([bands.labels[0]]);
  const call = `{"name": "${tool}", "arguments": {"${bands.family}": ${one}}}`;
  return {
    hermes: `<tool_call>${call}</tool_call>`,
    openthinkimg: `{"thought": "I need ${JSON.stringify(bands.labels[0]).slice(1, -1)}.", "actions": [${call}]}`,
    python: `image_with_focused_${bands.family} = ${tool}(image_1, ${one}, ${bandKey(bands.family)})`,
    answer: answerLine,
  };
}

/** A diagram of labelled points: a line through its first two points; answers shaped like its own. */
function diagramExamples(points: readonly string[], answer: string | string[]): Readonly<ActionExamples> {
  const pair = JSON.stringify(points.slice(0, 2)).replace(',', ', ');
  const call = `{"name": "draw_line", "arguments": {"through": ${pair}}}`;
  return {
    hermes: `<tool_call>${call}</tool_call>`,
    openthinkimg: `{"thought": "I need the line through ${points[0]} and ${points[1]}.", "actions": [${call}]}`,
    python: `image_with_line = draw_line(image_1, ${pair})`,
    answer: answerExample(answerShape(answer, points), points),
  };
}
