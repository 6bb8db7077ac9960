/** off_target_call: a call that ran acted on none of the task's target (its `target` is "off", env/episodes/call-target.ts). */
import { assistantTurnsOf, type Scanner } from './types.js';

export const offTargetCall: Scanner = {
  name: 'off_target_call',
  description: 'a call that ran acted on none of the task’s target (target "off")',
  fires: (record) => assistantTurnsOf(record).some((turn) => turn.calls.some((call) => call.ok && call.target === 'off')),
};
