/**
 * repeated_call: the same tool with identical arguments twice in one episode (arguments compared
 * with their keys sorted; failed calls count too, as the repetition penalty counts them: a policy
 * that sends a refused call again learned nothing from the error).
 */
import { canonicalJson } from '../../rewards/repetition.js';
import { assistantTurnsOf, type Scanner } from './types.js';

export const repeatedCall: Scanner = {
  name: 'repeated_call',
  description: 'the same tool was called with identical arguments twice',
  fires(record) {
    const seen = new Set<string>();
    for (const turn of assistantTurnsOf(record)) {
      for (const call of turn.calls) {
        const key = `${call.name}(${canonicalJson(call.arguments)})`;
        if (seen.has(key)) return true;
        seen.add(key);
      }
    }
    return false;
  },
};
