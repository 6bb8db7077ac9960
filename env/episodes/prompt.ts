/**
 * The words an episode says to the policy: the system prompt with the tool list, the question
 * turn, the observation texts, the limit messages and what stands for an image the view hides.
 * Kept in one place so prompts can be read and changed together; no other module (and no client
 * of the env server: docs/CONTRACTS.md, "Presentation") writes text a policy reads.
 */

export const CALL_FORMAT_EXAMPLE =
  '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country", "Wins"]}}</tool_call>';

/**
 * `callExample`: the episode's own call (episodes/task-examples.ts); the table example otherwise.
 * `kind`: the task's kind; a geometry diagram is introduced as one (its tools draw, they do not mask).
 */
export function systemPrompt(toolsBlock: string | null, callExample: string = CALL_FORMAT_EXAMPLE, kind?: string): string {
  const diagram = kind === 'geometry';
  const subject = diagram ? 'a geometry diagram' : 'a chart or table image';
  if (toolsBlock === null) {
    return [
      `You answer questions about ${subject}.`,
      'Think briefly, then give the final answer as <answer>...</answer>. Separate several answers with ||.',
    ].join('\n');
  }
  return [
    diagram
      ? 'You answer questions about a geometry diagram. You can draw on the image with tools before answering:'
      : 'You answer questions about a chart or table image. You can edit the image with tools before answering:',
    diagram
      ? 'lines through its points, segments, circles, marks, zoom in. Each call returns the edited image.'
      : 'mask what does not matter, box or highlight what does, zoom in. Each call returns the edited image.',
    '',
    toolsBlock.trim(),
    '',
    'To call a tool, write exactly one JSON object inside tags, for example:',
    callExample,
    `Use ${diagram ? 'point labels' : 'labels'} exactly as they appear in the image. When you know the answer, write <answer>...</answer>`,
    '(separate several answers with ||). A message with an answer ends the episode.',
  ].join('\n');
}

export function questionText(question: string): string {
  return `Question: ${question}`;
}

const OBSERVATION_OPENS = 'OBSERVATION:';
const OBSERVATION_CLOSES = 'The edited image follows.';

/** After a call that edited the image: what each call did, then the edited image. */
export function toolObservationText(summaries: string[]): string {
  return [OBSERVATION_OPENS, ...summaries, OBSERVATION_CLOSES].join(' ');
}

export function errorObservationText(errorClass: string, message: string): string {
  return `ERROR [${errorClass}]: ${message}`;
}

const NO_ACTION_FOUND = 'No tool call or final answer found.';

export function noActionMessage(callExample: string = CALL_FORMAT_EXAMPLE): string {
  return `${NO_ACTION_FOUND} Call a tool, e.g. ${callExample}, or answer with <answer>...</answer>.`;
}

export const TOOLS_OFF_MESSAGE = 'Tools are not available in this episode: answer from the image with <answer>...</answer>.';

/** E5: the episode's tool calls are spent. */
export function toolCallLimitMessage(maxToolCalls: number): string {
  return `tool call limit reached (${maxToolCalls} per episode): answer now with <answer>...</answer>`;
}

/** E5: the episode has shown as many images as it may. */
export function imageLimitMessage(maxImages: number): string {
  return `image limit reached (${maxImages} per episode): answer now with <answer>...</answer>`;
}

/** E5: a call (a zoom) would make an image larger than the episode accepts. */
export function pixelLimitMessage(width: number, height: number, maxPixels: number): string {
  return `the result would be ${width}×${height} pixels, over the limit of ${maxPixels}; use a smaller zoom factor`;
}

/** What a policy reads where the presentation's view hides an earlier image (presentation/view.ts). */
export const EARLIER_IMAGE = '(earlier image)';

/**
 * The fixed texts a policy may read in any episode, whatever the task: the observation's frame,
 * what stands for a hidden image, the start of the no-action error and the tools-off refusal. A
 * tokenizer learned for a policy (the trainer's micro model) learns these besides the tasks' own
 * text; the order is part of what it learns from, so it never changes.
 */
export const FIXED_TEXTS: readonly string[] = [
  toolObservationText([]),
  EARLIER_IMAGE,
  errorObservationText('E1', NO_ACTION_FOUND),
  TOOLS_OFF_MESSAGE,
];
