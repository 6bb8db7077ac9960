/**
 * A turn's tokens as the trainer scored them: each sampled token shaded by how surprising it was
 * (low log-probability) or how uncertain the model was (high entropy), with both numbers and the
 * loss mask on hover. Tokens outside the loss are struck through. Token text is model output, set
 * as text only.
 */
import type { TokenViewTurn } from '../../protocol/rollout-record.js';
import { formatNumber, h } from '../shared/dom.js';

export type TokenShading = 'logprob' | 'entropy';

/** 0 (plain) to 1 (strongest): 1 − p for log-probs; entropy against the largest in the turn. */
function tokenStrengths(entry: TokenViewTurn, shading: TokenShading): number[] {
  if (shading === 'logprob') return entry.logprob.map((lp) => 1 - Math.exp(lp));
  const top = Math.max(1e-9, ...entry.entropy);
  return entry.entropy.map((e) => e / top);
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Visible whitespace: a token that is a space or a newline must still take room to be hovered. */
function shown(token: string): string {
  return token.replace(/\n/g, '⏎\n').replace(/^ +$/, (spaces) => '·'.repeat(spaces.length));
}

export function tokenView(entry: TokenViewTurn): HTMLElement {
  const body = h('div', { class: 'token-body', 'data-testid': 'token-body' });
  const render = (shading: TokenShading) => {
    const strengths = tokenStrengths(entry, shading);
    body.dataset.shading = shading;
    body.replaceChildren(...entry.tokens.map((token, i) => {
      const lp = entry.logprob[i] ?? 0;
      const span = h('span', {
        class: `tok ${entry.mask[i] ? '' : 'tok-unmasked'}`,
        'data-testid': 'token',
        'data-logprob': lp,
        'data-entropy': entry.entropy[i] ?? 0,
        'data-mask': entry.mask[i] ?? 0,
        title: `${JSON.stringify(token)} · log p ${formatNumber(lp)} (p ${formatNumber(Math.exp(lp))}) · entropy ${formatNumber(entry.entropy[i] ?? 0)} · ${entry.mask[i] ? 'in the loss' : 'not in the loss'}`,
      }, shown(token));
      span.style.setProperty('--strength', String(Math.round((strengths[i] ?? 0) * 100) / 100));
      return span;
    }));
  };
  const choice = h('select', { 'aria-label': 'shade tokens by', 'data-testid': 'token-shading' }, h('option', { value: 'logprob' }, 'shade by surprise (1 − p)'), h('option', { value: 'entropy' }, 'shade by entropy'));
  choice.addEventListener('change', () => render((choice as HTMLSelectElement).value === 'entropy' ? 'entropy' : 'logprob'));
  render('logprob');
  const meanLp = mean(entry.logprob);
  const meanEntropy = mean(entry.entropy);
  const outside = entry.mask.filter((m) => !m).length;
  return h(
    'details',
    { class: 'token-view', 'data-testid': 'token-view' },
    h('summary', null, `tokens (${entry.tokens.length}) · mean log p ${formatNumber(meanLp)} · mean entropy ${formatNumber(meanEntropy)}${outside ? ` · ${outside} not in the loss` : ''}`),
    h('div', { class: 'token-controls' }, choice),
    body,
  );
}
