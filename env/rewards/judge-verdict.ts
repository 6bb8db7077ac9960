/**
 * What an LLM judge said, and how its reply is read. A reply must say `<|YES|>` or `<|NO|>`
 * (VTool-R1 style) or hold a JSON object with a boolean `correct`; anything else — both tokens,
 * neither, `{"correct": "yes"}`, prose — is garbage: a judge failure, never a "no".
 */

export type JudgeVerdict =
  | { status: 'ok'; correct: boolean; /** True when answered from the cache. */ cached: boolean }
  | { status: 'error'; reason: string };

export type ParsedReply = { correct: boolean } | { garbage: string };

const YES = '<|YES|>';
const NO = '<|NO|>';

function preview(text: string): string {
  const oneLine = text.replace(/\s+/gu, ' ').trim();
  return oneLine.length > 120 ? `${oneLine.slice(0, 117)}...` : oneLine;
}

function jsonVerdict(text: string): boolean | null {
  const unfenced = text.replace(/^```(?:json)?\s*|\s*```$/gu, '').trim();
  const candidates = [unfenced, ...(text.match(/\{[^{}]*\}/gu) ?? [])];
  for (const candidate of candidates) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        const correct = (value as Record<string, unknown>).correct;
        if (typeof correct === 'boolean') return correct;
      }
    } catch {
      // not JSON; try the next candidate
    }
  }
  return null;
}

export function parseJudgeReply(text: string): ParsedReply {
  const yes = text.includes(YES);
  const no = text.includes(NO);
  if (yes && no) return { garbage: `the judge wrote both ${YES} and ${NO}: "${preview(text)}"` };
  if (yes) return { correct: true };
  if (no) return { correct: false };
  const json = jsonVerdict(text);
  if (json !== null) return { correct: json };
  return { garbage: `the judge wrote neither ${YES}/${NO} nor {"correct": true|false}: "${preview(text)}"` };
}
