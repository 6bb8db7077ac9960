/**
 * How a link names an evaluation side (`run|key|arm`) and a cell of an answer grid
 * (`gold|answer`) in the viewer's URL: the viewer reads them (webview/viewer/view-link.ts) and the
 * dashboard's evaluation summary writes them (host.showInViewer with `evals`). Each part is
 * URI-encoded, so the separator (which encodeURIComponent always encodes) never occurs inside one.
 * Pure.
 */
import type { EvalSide } from '../../protocol/panel-protocol.js';

export function sideText(s: EvalSide | null): string | null {
  return s === null ? null : [s.runId, s.key, s.arm].map(encodeURIComponent).join('|');
}

export function parseSide(text: string | null): EvalSide | null {
  if (text === null) return null;
  const [runId, key, arm] = text.split('|').map((part) => decodeURIComponent(part));
  return runId && key && (arm === 'tools' || arm === 'no_tools') ? { runId, key, arm } : null;
}

/** A grid cell: the normalised gold answer and the answer given. */
export interface GridCell {
  gold: string;
  answer: string;
}

export function cellText(cell: GridCell | null): string | null {
  return cell === null ? null : [cell.gold, cell.answer].map(encodeURIComponent).join('|');
}

export function parseCell(text: string | null): GridCell | null {
  if (text === null) return null;
  const parts = text.split('|');
  if (parts.length !== 2) return null;
  const [gold, answer] = parts.map((part) => decodeURIComponent(part)) as [string, string];
  return { gold, answer };
}
