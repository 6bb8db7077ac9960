/**
 * The error taxonomy shared by the tools, the action parser, the episodes and the rewards.
 * Classes follow VISTA-Gym's E1–E6 taxonomy. Messages are written for the model that
 * caused them: say what was wrong and what would have been valid, so it can recover next turn.
 */

import { ERROR_CLASS_LEGEND } from '../../protocol/tool-use.js';

export type ErrorClass = 'E1' | 'E2' | 'E3' | 'E4' | 'E5' | 'E6';

/** What each class means (the legend lives with the panel protocol: the viewer shows it too). */
export const ERROR_CLASS_DESCRIPTIONS: Readonly<Record<ErrorClass, string>> = ERROR_CLASS_LEGEND;

export interface ActionError {
  class: ErrorClass;
  message: string;
  /** Name of the tool involved, when one could be identified. */
  tool?: string;
}

export function actionError(errorClass: ErrorClass, message: string, tool?: string): ActionError {
  return tool === undefined ? { class: errorClass, message } : { class: errorClass, message, tool };
}
