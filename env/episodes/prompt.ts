/**
 * The words an episode says to the policy: the system prompt with the tool list, the question
 * turn, and the observation texts. Kept in one place so prompts can be read and changed together.
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

export function toolObservationText(summaries: string[]): string {
  return `OBSERVATION: ${summaries.join(' ')} The edited image follows.`;
}

export function errorObservationText(errorClass: string, message: string): string {
  return `ERROR [${errorClass}]: ${message}`;
}

export function noActionMessage(callExample: string = CALL_FORMAT_EXAMPLE): string {
  return `No tool call or final answer found. Call a tool, e.g. ${callExample}, or answer with <answer>...</answer>.`;
}

export const TOOLS_OFF_MESSAGE = 'Tools are not available in this episode: answer from the image with <answer>...</answer>.';
