/**
 * What a check of a task reports: one finding, named by the check that made it. check.ts and the
 * diagram checker (geometry/check-diagram.ts) both produce these; it reports, it never repairs.
 */

/** Which check found it (check.ts's header lists what each one verifies). */
export type CheckKind = 'record' | 'answer' | 'geometry' | 'gold' | 'image' | 'regenerate';

export interface CheckIssue {
  check: CheckKind;
  message: string;
}
