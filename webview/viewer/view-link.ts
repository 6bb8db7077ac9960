/**
 * The rollout viewer's selection as a link: run, step, rollout (its line in the step file, which
 * names its prompt group too), the rollout compared beside it, the turn, and in the evaluations
 * view the two sides, the outcome shown and the task; and the list's finding filter. A browser page keeps its URL's query in step
 * with what it shows, so a copied link opens the same view (on the same `vistool view` server,
 * whose token the page URL holds, or in a bundle). Pure: URLSearchParams in, fields out.
 */
import type { EvalSide } from '../../protocol/panel-protocol.js';
import { type FindingName, isFindingName } from '../../protocol/findings.js';
import { cellText, type GridCell, parseCell, parseSide, sideText } from '../shared/eval-link.js';

export interface LinkedView {
  runId: string | null;
  step: number | null;
  line: number | null;
  compareLine: number | null;
  turn: number;
  mode: 'steps' | 'evals';
  a: EvalSide | null;
  b: EvalSide | null;
  outcome: string;
  task: string | null;
  /** Only side A's tasks in one cell of its gold × answer grid (the dashboard's evaluation summary). */
  cell?: GridCell | null;
  /** The list's finding filter (a scanner's name, or 'none'): the dashboard's findings table links to a step's rollouts on which one fired. */
  finding?: FindingName | 'none' | null;
}

/** The query keys a link sets (others, such as the token and the theme, are left as they are). */
export const LINK_KEYS = ['run', 'step', 'line', 'turn', 'cmp', 'group', 'mode', 'a', 'b', 'outcome', 'task', 'cell', 'finding'] as const;

const side = sideText;

const whole = (text: string | null) => (text !== null && /^\d{1,9}$/.test(text) ? Number(text) : null);

/** `query` with the view's keys set (and those the view does not use removed); `group` is the rollout's prompt id, for people reading the link. */
export function withView(query: URLSearchParams, view: LinkedView, group: string | null): URLSearchParams {
  const next = new URLSearchParams(query);
  for (const key of LINK_KEYS) next.delete(key);
  const set = (key: string, value: string | number | null) => {
    if (value !== null && value !== '') next.set(key, String(value));
  };
  set('run', view.runId);
  if (view.mode === 'evals') {
    set('mode', 'evals');
    set('a', side(view.a));
    set('b', side(view.b));
    if (view.outcome !== 'all') set('outcome', view.outcome);
    set('task', view.task);
    set('cell', cellText(view.cell ?? null));
    set('finding', view.finding ?? null);
    return next;
  }
  set('step', view.step);
  set('line', view.line);
  set('group', group);
  set('cmp', view.compareLine);
  if (view.turn > 0) set('turn', view.turn);
  set('finding', view.finding ?? null);
  return next;
}

/** What a link asks for; null when it names no run (a plain viewer URL). */
export function viewOf(query: URLSearchParams): Partial<LinkedView> | null {
  const runId = query.get('run');
  const mode = query.get('mode') === 'evals' ? 'evals' : 'steps';
  if (runId === null && mode === 'steps') return null;
  const finding = query.get('finding');
  if (mode === 'evals') {
    return {
      runId, mode, a: parseSide(query.get('a')), b: parseSide(query.get('b')), outcome: query.get('outcome') ?? 'all', task: query.get('task'), cell: parseCell(query.get('cell')),
      ...(isFindingName(finding) ? { finding } : {}),
    };
  }
  return {
    runId, mode, step: whole(query.get('step')), line: whole(query.get('line')), compareLine: whole(query.get('cmp')), turn: whole(query.get('turn')) ?? 0,
    // A name the viewer does not know is left out (no filter), never passed on.
    ...(finding === 'none' || isFindingName(finding) ? { finding } : {}),
  };
}
