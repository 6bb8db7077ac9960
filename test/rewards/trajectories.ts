/**
 * Hand-built trajectories for the reward tests, in the rollout format of docs/CONTRACTS.md:
 * hermes tool calls, OBSERVATION turns, answers in <answer> tags.
 */
import type { ActionError } from '../../env/core/errors.js';
import type { AssistantTurn, CallRecord, ObservationTurn, Trajectory, Turn } from '../../env/episodes/trajectory.js';

export function call(name: string, args: Record<string, unknown>, ok = true, error?: ActionError): CallRecord {
  return ok ? { name, arguments: args, ok, image_in: 'a'.repeat(64), image_out: 'b'.repeat(64), summary: `${name} done` } : { name, arguments: args, ok, ...(error ? { error } : {}) };
}

export function toolCallText(c: CallRecord, thought = 'I should look at the relevant part of the image.'): string {
  return `<think>${thought}</think><tool_call>${JSON.stringify({ name: c.name, arguments: c.arguments })}</tool_call>`;
}

export function callTurn(calls: CallRecord[], text = calls.map((c) => toolCallText(c)).join('\n'), errors: ActionError[] = []): AssistantTurn {
  return { role: 'assistant', text, calls, errors: [...errors, ...calls.flatMap((c) => (c.error ? [c.error] : []))], answer: null };
}

export function answerTurn(answer: string | string[], text = `<think>I can read it now.</think><answer>${Array.isArray(answer) ? answer.join(' || ') : answer}</answer>`): AssistantTurn {
  return { role: 'assistant', text, calls: [], errors: [], answer };
}

export function observation(text = 'OBSERVATION: kept the selected columns.'): ObservationTurn {
  return { role: 'tool', text, images: ['b'.repeat(64)] };
}

export function trajectory(turns: Turn[], overrides: Partial<Trajectory> = {}): Trajectory {
  const assistants = turns.filter((t): t is AssistantTurn => t.role === 'assistant');
  const last = assistants[assistants.length - 1];
  const calls = assistants.flatMap((t) => t.calls);
  return {
    prompt_id: 'table-000001',
    task: { question: 'How many wins does Belgium have?', answer: '7', kind: 'table', difficulty: 1, image: 'c'.repeat(64) },
    turns,
    answer: last?.answer ?? null,
    end_reason: last?.answer != null ? 'answer' : 'max_turns',
    tool_calls: calls.length,
    tool_errors: calls.filter((c) => !c.ok).length,
    ...overrides,
  };
}

export const maskCall = call('focus_on_columns_with_mask', { columns: ['Country', 'Wins'] });

/** Direct answer, no tool. */
export const direct = (answer: string | string[]): Trajectory => trajectory([answerTurn(answer)]);
/** One successful mask call, then the answer. */
export const withTool = (answer: string | string[]): Trajectory => trajectory([callTurn([maskCall]), observation(), answerTurn(answer)]);
