/**
 * How a rollout used its tools, drawn (issue 43): a badge per scanner that fired (a short label, the
 * scanner's meaning as its tooltip), a call's target beside the call (an icon and words, so colour
 * is never the only signal), and an evaluated episode's counterfactual replay beside its answer
 * (the answer with the tool's result withheld, changed or not, right or wrong). The names and
 * words are protocol/findings.ts's, the same the dashboard and the metrics use.
 *
 * Every value from a record goes into the page as text through `h`: a finding name or an answer a
 * writer got wrong is shown as what it is, never as markup.
 */
import { CALL_TARGET_LEGEND, type CallTarget, counterfactualOf, FINDING_LEGEND, type FindingName, isCallTarget, isFindingName } from '../../protocol/findings.js';
import { h } from '../shared/dom.js';

const TARGET_ICONS: Readonly<Record<CallTarget, string>> = { on: 'pass', partly: 'circle-large-outline', off: 'error', unknown: 'question' };

/** One scanner's badge; `compact` (the list's rows) keeps it to the label. */
export function findingBadge(name: FindingName, compact = false): HTMLElement {
  const { label, meaning } = FINDING_LEGEND[name];
  return h('span', { class: `finding-badge finding-${name}${compact ? ' compact' : ''}`, 'data-testid': 'finding-badge', 'data-finding': name, title: `${label}: ${meaning}` },
    h('span', { class: 'codicon codicon-warning', 'aria-hidden': 'true' }), ` ${label}`);
}

/**
 * A record's findings as badges: the known scanners' in their order, then any other name the record
 * holds (a newer writer's scanner), shown as the text it is; null when the record has no findings
 * list, and a quiet "no findings" when it has an empty one (scanned, nothing fired).
 */
export function findingsLine(findings: unknown): HTMLElement | null {
  if (!Array.isArray(findings)) return null;
  const known = new Set(findings.filter(isFindingName));
  const others = [...new Set(findings.filter((f) => !isFindingName(f)).map((f) => String(f)))];
  const badges = [
    ...Object.keys(FINDING_LEGEND).filter((name): name is FindingName => known.has(name as FindingName)).map((name) => findingBadge(name)),
    ...others.map((name) => h('span', { class: 'finding-badge unknown', 'data-testid': 'finding-badge', 'data-finding': 'unrecognised', title: 'a scanner this viewer does not know (a newer writer?)' }, `unrecognised: ${name}`)),
  ];
  return h('div', { class: 'findings-line', 'data-testid': 'rollout-findings' }, h('span', { class: 'muted' }, 'findings '), ...(badges.length > 0 ? badges : [h('span', { class: 'muted', 'data-testid': 'no-findings' }, 'none (the scanners saw nothing)')]));
}

/** A call's target beside its name; null on a call without one (a failed call, an older record). */
export function targetBadge(target: unknown): HTMLElement | null {
  if (target === undefined) return null;
  if (!isCallTarget(target)) return h('span', { class: 'call-target target-unknown', 'data-testid': 'call-target', 'data-target': 'invalid', title: 'the record names a target this viewer does not know' }, `target: ${String(target)}`);
  const { label, meaning } = CALL_TARGET_LEGEND[target];
  return h('span', { class: `call-target target-${target}`, 'data-testid': 'call-target', 'data-target': target, title: meaning },
    h('span', { class: `codicon codicon-${TARGET_ICONS[target]}`, 'aria-hidden': 'true' }), ` ${label}`);
}

/** The counterfactual replay beside the real answer; null when the record was not replayed. */
export function counterfactualView(record: unknown): HTMLElement | null {
  const replay = counterfactualOf(record);
  if (replay === null) return null;
  return h('div', { class: 'counterfactual', 'data-testid': 'counterfactual', 'data-changed': String(replay.changed), 'data-correct': String(replay.correct), title: "The same episode replayed with each tool result withheld (the call stands, the observation carries the unedited image and the same text); the policy went on greedily" },
    h('span', { class: 'muted' }, 'without the tool\'s result '),
    h('strong', { 'data-testid': 'counterfactual-answer' }, replay.answer ?? '(no answer)'),
    ' ',
    h('span', { class: `cf-change ${replay.changed ? 'changed' : 'unchanged'}`, 'data-testid': 'counterfactual-changed' },
      h('span', { class: `codicon codicon-${replay.changed ? 'diff' : 'circle-slash'}`, 'aria-hidden': 'true' }), replay.changed ? ' changed' : ' unchanged'),
    ' ',
    h('span', { class: replay.correct ? 'good' : 'bad', 'data-testid': 'counterfactual-correct' },
      h('span', { class: `codicon codicon-${replay.correct ? 'pass' : 'error'}`, 'aria-hidden': 'true' }), replay.correct ? ' correct' : ' incorrect'),
  );
}
