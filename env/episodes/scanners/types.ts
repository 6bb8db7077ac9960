/**
 * What a scanner is: a small pure function over one rollout record that says whether a way of
 * misusing the tools happened in it (issue 43; like Inspect AI's scanners). Each fires or not;
 * the names are the rollout record's `findings` (schemas/rollout-record.schema.json).
 */
import type { PixelBounds } from '../../config/qwen-image-tokens.js';
import type { CallScene } from '../call-target.js';
import type { AssistantTurn, Trajectory } from '../trajectory.js';

export type Finding = NonNullable<Trajectory['findings']>[number];

/**
 * What a scanner may know besides the record: the task image's size and metadata (in pixels),
 * where the caller has them (the env server and `vistool eval` do). Scanners that need it do not
 * fire without it.
 */
export interface ScanContext {
  taskImage?: CallScene;
  /** The bounds the policy's images were shown under (a crop's box is in the shown image's coordinates); absent: the crop tool's default, as it crops without them. */
  bounds?: PixelBounds;
}

export interface Scanner {
  name: Finding;
  /** One line for people: when it fires. */
  description: string;
  fires(record: Trajectory, context: ScanContext): boolean;
}

export function assistantTurnsOf(record: Pick<Trajectory, 'turns'>): AssistantTurn[] {
  return record.turns.filter((turn): turn is AssistantTurn => turn.role === 'assistant');
}
