/**
 * The efficiency component: 1 while the episode takes at most `free_turns` assistant turns,
 * falling linearly to 0 at `max_turns`. Off by default (weight 0): it competes with tool use.
 */
import type { Trajectory } from '../episodes/trajectory.js';
import { DEFAULT_REWARD_CONFIG, type EfficiencyConfig } from './config.js';
import { assistantTurns } from './format.js';

export function scoreEfficiency(trajectory: Pick<Trajectory, 'turns'>, config: EfficiencyConfig = DEFAULT_REWARD_CONFIG.efficiency): number {
  const turns = assistantTurns(trajectory).length;
  if (turns <= config.free_turns) return 1;
  if (turns >= config.max_turns) return 0;
  return (config.max_turns - turns) / (config.max_turns - config.free_turns);
}
