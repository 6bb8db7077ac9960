/**
 * The two types every target rule shares (call-target.ts and the rules it hands calls to,
 * search-target.ts and benchmark-target.ts): what a judgement says, and what it reads of a task.
 * A module of their own, below all three, so the rules need not import the module that imports them.
 */
import type { CallRecord } from './trajectory.js';
import type { TaskRecord } from '../tasks/record.js';

export type CallTarget = NonNullable<CallRecord['target']>;

/** What the judgement reads of a task: its gold calls and query; for search scenes its metadata and the budget it was made for. */
export type TargetTask = Pick<TaskRecord, 'kind' | 'gold' | 'query' | 'table' | 'generator'> & Partial<Pick<TaskRecord, 'meta'>>;
