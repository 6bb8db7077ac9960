/**
 * ignored_tool_error: an assistant turn got an error (E1–E6: a parse error or a failed call), and
 * the next assistant turn answers without any call: the policy read the error and did not retry.
 */
import { assistantTurnsOf, type Scanner } from './types.js';

export const ignoredToolError: Scanner = {
  name: 'ignored_tool_error',
  description: 'after an E1–E6 error the next turn answered without calling again',
  fires(record) {
    const turns = assistantTurnsOf(record);
    return turns.some((turn, i) => {
      const next = turns[i + 1];
      return turn.errors.length > 0 && next !== undefined && next.answer !== null && next.calls.length === 0;
    });
  },
};
