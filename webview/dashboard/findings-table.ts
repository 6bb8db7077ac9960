/**
 * The dashboard's "findings" table (issue 43): per scanner, how many rollouts it fired on at each
 * shown run's latest training step and latest evaluation that logged the scanners (`scan/<name>`,
 * scan-counts.ts), with the scanner's meaning as the row's tooltip. A non-zero count is a link that
 * opens the viewer on the rollouts the scanner fired on: the step's, or the evaluation's episodes
 * (side A of the evaluations view) when the evaluation was kept task by task.
 * Every value goes in as text.
 */
import { FINDING_LEGEND, FINDING_NAMES, type FindingName, scanMetric } from '../../protocol/findings.js';
import { h } from '../shared/dom.js';
import type { ScanCounts } from './scan-counts.js';

export interface FindingsRun {
  id: string;
  name: string;
  step: { step: number; counts: ScanCounts } | null;
  /** `key`: the evaluation's set when it was kept task by task (evals/list), whose episodes a count opens; null when it was not. */
  evaluation: { label: string; step: number | null; counts: ScanCounts; key: string | null } | null;
}

/** What a count opens: a training step's rollouts, or a kept evaluation's episodes, on which the scanner fired. */
export type FindingTarget = { runId: string; finding: FindingName } & ({ step: number } | { evalKey: string });

function countCell(run: FindingsRun, name: FindingName, open: (target: FindingTarget) => void): HTMLElement {
  const count = run.step?.counts[name];
  if (run.step === null || count === undefined) return h('td', { class: 'num muted', 'data-testid': 'findings-step-count', 'data-finding': name }, '–');
  const { step } = run.step;
  const attrs = { class: 'num', 'data-testid': 'findings-step-count', 'data-finding': name, 'data-run': run.id };
  if (count <= 0) return h('td', attrs, String(count));
  return h('td', attrs, h('button', { type: 'button', class: 'link-button', 'data-testid': 'findings-link', title: `Open the rollouts of ${run.name} at step ${step} on which "${FINDING_LEGEND[name].label}" fired, in the viewer`, onclick: () => open({ runId: run.id, step, finding: name }) }, String(count)));
}

function evalCell(run: FindingsRun, name: FindingName, open: (target: FindingTarget) => void): HTMLElement {
  const evaluation = run.evaluation;
  const count = evaluation?.counts[name];
  const attrs = { class: `num ${count === undefined ? 'muted' : ''}`, 'data-testid': 'findings-eval-count', 'data-finding': name, 'data-run': run.id };
  if (!evaluation || count === undefined || count <= 0 || evaluation.key === null) return h('td', attrs, count === undefined ? '–' : String(count));
  const key = evaluation.key;
  return h('td', attrs, h('button', { type: 'button', class: 'link-button', 'data-testid': 'findings-eval-link', title: `Open the episodes of ${run.name}'s evaluation ${evaluation.label} on which "${FINDING_LEGEND[name].label}" fired, in the viewer`, onclick: () => open({ runId: run.id, evalKey: key, finding: name }) }, String(count)));
}

/** The table for the runs that log the scanners; null when none does. */
export function findingsTable(runs: readonly FindingsRun[], open: (target: FindingTarget) => void): HTMLElement | null {
  const shown = runs.filter((r) => r.step !== null || r.evaluation !== null);
  if (shown.length === 0) return null;
  const heads = shown.flatMap((run) => [
    h('th', { scope: 'col', class: 'num', title: `${run.name}: rollouts of its latest training step that logged the scanners` }, `${run.name} · step ${run.step?.step ?? '–'}`),
    h('th', { scope: 'col', class: 'num', title: `${run.name}: episodes of its latest evaluation that logged the scanners` }, `${run.name} · ${run.evaluation ? `eval ${run.evaluation.label}` : 'no eval'}`),
  ]);
  return h('section', { class: 'findings', 'data-testid': 'findings-table', 'aria-label': 'Findings' },
    h('h2', null, 'Findings'),
    h('p', { class: 'muted' }, 'How the tools were used, beyond whether they were called: rollouts each scanner fired on (scan/<name>). A count opens those rollouts in the viewer.'),
    h('div', { class: 'table-scroll' },
      h('table', { class: 'findings-table' },
        h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'scanner'), ...heads)),
        h('tbody', null, ...FINDING_NAMES.map((name) =>
          h('tr', { 'data-finding': name, title: `${scanMetric(name)}: ${FINDING_LEGEND[name].meaning}` },
            h('th', { scope: 'row' }, FINDING_LEGEND[name].label),
            ...shown.flatMap((run) => [countCell(run, name, open), evalCell(run, name, open)])))),
      ),
    ),
  );
}
