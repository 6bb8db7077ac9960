/**
 * answered_without_looking: replayed with its tool results withheld (the record's
 * `counterfactual`, written by the evaluation that replays it), the policy gave the same answer:
 * what the tools showed did not change it. Never fires on a record without a replay.
 */
import type { Scanner } from './types.js';

export const answeredWithoutLooking: Scanner = {
  name: 'answered_without_looking',
  description: 'with the tool results withheld the answer stayed the same',
  fires: (record) => record.counterfactual !== undefined && !record.counterfactual.changed,
};
