/**
 * The scanners, by name, in the fixed order of the rollout record's `findings`
 * (schemas/rollout-record.schema.json), and `scanTrajectory`, which runs them all. The env server
 * sets a trajectory's findings when it scores it, `vistool eval` when it scores a task; whoever
 * adds a `counterfactual` to a record afterwards scans it again, so answered_without_looking sees it.
 */
import type { Trajectory } from '../trajectory.js';
import { answeredWithoutLooking } from './answered-without-looking.js';
import { degenerateEdit } from './degenerate-edit.js';
import { formatCollapse } from './format-collapse.js';
import { ignoredToolError } from './ignored-tool-error.js';
import { offTargetCall } from './off-target-call.js';
import { repeatedCall } from './repeated-call.js';
import type { Finding, ScanContext, Scanner } from './types.js';

export type { Finding, ScanContext, Scanner };

export const SCANNERS: readonly Scanner[] = [offTargetCall, repeatedCall, ignoredToolError, degenerateEdit, formatCollapse, answeredWithoutLooking];

export const FINDING_NAMES: readonly Finding[] = SCANNERS.map((scanner) => scanner.name);

/** The names of the scanners that fire on `record`, in SCANNERS order; [] when none does. */
export function scanTrajectory(record: Trajectory, context: ScanContext = {}): Finding[] {
  return SCANNERS.filter((scanner) => scanner.fires(record, context)).map((scanner) => scanner.name);
}
