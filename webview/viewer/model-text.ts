/**
 * Splits a model message into styled spans: <think>, <answer> and <tool_call> blocks and ```
 * code fences (ReFocus Python), with the rest as plain text. Only finds where those markers
 * are; the panel renders every segment with textContent, so whatever the text holds (HTML,
 * markdown, javascript: links) stays visible characters. Unclosed blocks run to the end, as a
 * truncated generation would. Pure: no DOM.
 */

export type SegmentKind = 'text' | 'think' | 'answer' | 'tool_call' | 'code';

export interface Segment {
  kind: SegmentKind;
  /** The opening marker as written (`<think>`, "```python\n"), empty for plain text. */
  open: string;
  body: string;
  /** The closing marker as written, empty when the block was not closed. */
  close: string;
}

const TAGS: { kind: SegmentKind; open: RegExp; close: string }[] = [
  { kind: 'think', open: /<think>/i, close: '</think>' },
  { kind: 'answer', open: /<answer>/i, close: '</answer>' },
  { kind: 'tool_call', open: /<tool_call>/i, close: '</tool_call>' },
];
const FENCE = /```[A-Za-z0-9_+-]*[ \t]*\n?/;

export function segmentModelText(text: string): Segment[] {
  const segments: Segment[] = [];
  let rest = text;
  while (rest.length > 0) {
    let best: { kind: SegmentKind; index: number; open: string; close: string } | null = null;
    for (const tag of TAGS) {
      const match = tag.open.exec(rest);
      if (match && (best === null || match.index < best.index)) best = { kind: tag.kind, index: match.index, open: match[0], close: tag.close };
    }
    const fence = FENCE.exec(rest);
    if (fence && (best === null || fence.index < best.index)) best = { kind: 'code', index: fence.index, open: fence[0], close: '```' };
    if (best === null) {
      segments.push({ kind: 'text', open: '', body: rest, close: '' });
      break;
    }
    if (best.index > 0) segments.push({ kind: 'text', open: '', body: rest.slice(0, best.index), close: '' });
    const afterOpen = rest.slice(best.index + best.open.length);
    const end = afterOpen.toLowerCase().indexOf(best.close.toLowerCase());
    if (end === -1) {
      segments.push({ kind: best.kind, open: best.open, body: afterOpen, close: '' });
      break;
    }
    segments.push({ kind: best.kind, open: best.open, body: afterOpen.slice(0, end), close: afterOpen.slice(end, end + best.close.length) });
    rest = afterOpen.slice(end + best.close.length);
  }
  return segments;
}
