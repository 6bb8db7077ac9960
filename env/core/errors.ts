/**
 * The error taxonomy shared by the tools, the action parser, the episodes and the rewards.
 * Classes follow VISTA-Gym's E1–E6 taxonomy. Messages are written for the model that
 * caused them: say what was wrong and what would have been valid, so it can recover next turn.
 */

import type { ActionError, ErrorClass } from '../../protocol/rollout-record.js';
import { ERROR_CLASS_LEGEND } from '../../protocol/tool-use.js';

/** The shapes are the rollout record's (schemas/rollout-record.schema.json), where errors are kept. */
export type { ActionError, ErrorClass };

/** What each class means (the legend lives with the panel protocol: the viewer shows it too). */
export const ERROR_CLASS_DESCRIPTIONS: Readonly<Record<ErrorClass, string>> = ERROR_CLASS_LEGEND;

export function actionError(errorClass: ErrorClass, message: string, tool?: string): ActionError {
  return tool === undefined ? { class: errorClass, message } : { class: errorClass, message, tool };
}
