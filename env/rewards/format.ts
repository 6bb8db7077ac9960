/**
 * Per-turn well-formedness of a trajectory: every assistant turn must carry a parseable tool
 * call or a final answer, its tags must be balanced, and — when the config asks — it must think
 * inside <think>…</think> and answer inside <answer>…</answer>.
 * Reads the trajectory only; it never re-parses calls (the action parser already recorded them).
 */
import type { AssistantTurn, Trajectory } from '../episodes/trajectory.js';
import { DEFAULT_REWARD_CONFIG, type FormatConfig } from './config.js';

export interface FormatReport {
  /** 'fraction': in [0,1]; 'deepeyes': −1 or 0. */
  score: number;
  assistantTurns: number;
  wellFormedTurns: number;
  /** One line per malformed turn, e.g. "turn 2: unbalanced <think> tags (2 open, 1 closed)". */
  problems: string[];
}

const BALANCED_TAGS = ['think', 'answer', 'tool_call'] as const;

export function assistantTurns(trajectory: Pick<Trajectory, 'turns'>): AssistantTurn[] {
  return trajectory.turns.filter((turn): turn is AssistantTurn => turn.role === 'assistant');
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Why one assistant turn is malformed, or null when it is well-formed. */
export function turnProblem(turn: AssistantTurn, config: FormatConfig): string | null {
  const malformedCall = turn.errors.some((e) => e.class === 'E1') || turn.calls.some((c) => c.error?.class === 'E1');
  if (malformedCall) return 'a tool call could not be parsed or names no known tool (E1)';
  if (turn.calls.length === 0 && turn.answer === null) return 'neither a tool call nor a final answer';
  for (const tag of BALANCED_TAGS) {
    const open = count(turn.text, `<${tag}>`);
    const closed = count(turn.text, `</${tag}>`);
    if (open !== closed) return `unbalanced <${tag}> tags (${open} open, ${closed} closed)`;
  }
  if (config.require_think && !/<think>[\s\S]*?<\/think>/u.test(turn.text)) return 'no <think>…</think> block';
  if (config.require_answer_tags && turn.answer !== null && !/<answer>[\s\S]*?<\/answer>/u.test(turn.text)) {
    return 'final answer not inside <answer>…</answer>';
  }
  return null;
}

export function scoreFormat(trajectory: Pick<Trajectory, 'turns'>, config: FormatConfig = DEFAULT_REWARD_CONFIG.format): FormatReport {
  const turns = assistantTurns(trajectory);
  const problems: string[] = [];
  let wellFormedTurns = 0;
  for (const [i, turn] of turns.entries()) {
    const problem = turnProblem(turn, config);
    if (problem === null) wellFormedTurns++;
    else problems.push(`assistant turn ${i + 1}: ${problem}`);
  }
  if (turns.length === 0) problems.push('no assistant turn');
  const score =
    config.mode === 'deepeyes' ? (problems.length > 0 ? -1 : 0) : turns.length === 0 ? 0 : wellFormedTurns / turns.length;
  return { score, assistantTurns: turns.length, wellFormedTurns, problems };
}
