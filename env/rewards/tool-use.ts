/**
 * What the rewards need to know about tool use: did any call succeed, and the Chain-of-Focus
 * group ranking built on it. "Used a tool" always means at least one call that succeeded (ok):
 * a call that only produced an error observation did not change what the model saw.
 */
import type { Trajectory } from '../episodes/trajectory.js';
import { assistantTurns } from './format.js';

export function usedToolSuccessfully(trajectory: Pick<Trajectory, 'turns'>): boolean {
  return assistantTurns(trajectory).some((turn) => turn.calls.some((call) => call.ok));
}

/**
 * Whether the trajectory earns the conditional tool bonus's tool half under
 * `tool.tool_bonus_requires`: 'success', a call that ran; 'on_target', a call that ran with target
 * "on" (env/episodes/call-target.ts). Partly, off and unknown targets do not count: a task
 * without a known target never pays an on-target bonus. `why` says what was missing, for the notes.
 */
export function toolBonusEarned(
  trajectory: Pick<Trajectory, 'turns'>,
  requires: 'success' | 'on_target',
): { earned: boolean; why: string | null } {
  const ran = assistantTurns(trajectory).flatMap((turn) => turn.calls.filter((call) => call.ok));
  if (ran.length === 0) return { earned: false, why: null };
  if (requires === 'success' || ran.some((call) => call.target === 'on')) return { earned: true, why: null };
  const counts = new Map<string, number>();
  for (const call of ran) counts.set(call.target ?? 'unknown', (counts.get(call.target ?? 'unknown') ?? 0) + 1);
  const listed = [...counts].map(([target, n]) => `${n} ${target}`).join(', ');
  return { earned: false, why: `tool bonus withheld: tool.tool_bonus_requires is 'on_target' and no call was on target (calls that ran: ${listed})` };
}

/** Chain-of-Focus's AGAR ranks: a direct right answer beats a tool-assisted one, a tool attempt beats a direct miss. */
export const GROUP_RANK = { directCorrect: 1, toolCorrect: 0.8, toolWrong: 0.5, directWrong: 0 } as const;

/**
 * The Chain-of-Focus rank of each trajectory of one group, in order. Trajectories must already
 * be scored (`correct` set): ranking is a second pass over a scored group.
 */
export function rankGroup(trajectories: readonly Pick<Trajectory, 'turns' | 'correct' | 'prompt_id'>[]): number[] {
  return trajectories.map((trajectory, i) => {
    if (trajectory.correct === undefined) {
      throw new Error(
        `rankGroup: trajectory ${i} (prompt ${trajectory.prompt_id}) has no 'correct' field; score each trajectory with scoreTrajectory before ranking the group`,
      );
    }
    const tool = usedToolSuccessfully(trajectory);
    if (trajectory.correct) return tool ? GROUP_RANK.toolCorrect : GROUP_RANK.directCorrect;
    return tool ? GROUP_RANK.toolWrong : GROUP_RANK.directWrong;
  });
}
