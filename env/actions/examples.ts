/**
 * The expected forms shown to a model in error messages, one per format. Every error message
 * ends with one of these so the model can copy a valid shape on its next turn.
 */

export const HERMES_EXAMPLE = '<tool_call>{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country"]}}</tool_call>';

export const OPENTHINKIMG_EXAMPLE =
  '{"thought": "I need the Country column.", "actions": [{"name": "focus_on_columns_with_mask", "arguments": {"columns": ["Country"]}}]}';

export const PYTHON_EXAMPLE =
  'image_with_focused_columns = focus_on_columns_with_mask(image_1, ["Country", "Wins"], columns_bbox)';

export const ANSWER_EXAMPLE = '<answer>7</answer>';

/** Said after every refusal of a Python block, so the model knows why nothing happened. */
export const CODE_IS_NEVER_RUN =
  `Code is never run: only calls of the image tools with literal arguments are read, e.g. ${PYTHON_EXAMPLE}`;
