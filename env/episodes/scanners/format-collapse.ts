/**
 * format_collapse: the episode's last assistant turn has neither a final answer nor a call the
 * parser could read (an attempted call that failed for its arguments still counts as read): the
 * policy stopped writing the action format, whatever it wrote before.
 */
import { assistantTurnsOf, type Scanner } from './types.js';

export const formatCollapse: Scanner = {
  name: 'format_collapse',
  description: 'the last assistant turn held no readable answer and no readable call',
  fires(record) {
    const last = assistantTurnsOf(record).at(-1);
    return last !== undefined && last.answer === null && last.calls.length === 0;
  },
};
