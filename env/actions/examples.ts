/**
 * The expected forms shown to a model in error messages, one per format. Every error message
 * ends with one of these so the model can copy a valid shape on its next turn.
 *
 * The defaults speak of a table; an episode passes examples made from its own image (see
 * episodes/task-examples.ts) so a bar chart is shown a call on its own bars.
 */

export interface ActionExamples {
  /** A hermes call: `<tool_call>{...}</tool_call>`. */
  hermes: string;
  /** An OpenThinkIMG `{"thought", "actions"}` object. */
  openthinkimg: string;
  /** A ReFocus Python line. */
  python: string;
  /** A final answer: `<answer>...</answer>`. */
  answer: string;
}

export const DEFAULT_EXAMPLES: Readonly<ActionExamples> = {
  hermes: '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country"]}}</tool_call>',
  openthinkimg: '{"thought": "I need the Country column.", "actions": [{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country"]}}]}',
  python: 'image_with_focused_columns = focus_on_columns_with_mask(image_1, ["Country", "Wins"], columns_bbox)',
  answer: '<answer>7</answer>',
};

/** Said after every refusal of a Python block, so the model knows why nothing happened. */
export function codeIsNeverRun(examples: Readonly<ActionExamples> = DEFAULT_EXAMPLES): string {
  return `Code is never run: only calls of the image tools with literal arguments are read, e.g. ${examples.python}`;
}
