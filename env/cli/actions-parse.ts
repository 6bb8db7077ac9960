/**
 * `vistool actions parse [--file F] [--image-var NAME ...]`: reads one model message (stdin or
 * a file) and prints what the action parser makes of it, as JSON: calls, answer, errors,
 * formats and the rest of ParsedAction, with the env's verdict on each call (the checks a step
 * runs before any tool) among the errors. Parse errors are data, so the exit code is 0 for any
 * message; only bad options (exit 2) or an unreadable file (exit 1) fail.
 */
import { readFile } from 'node:fs/promises';
import { parseAction } from '../actions/parse.js';
import type { ParsedAction, ParseError } from '../actions/types.js';
import { checkToolCall } from '../tools/registry.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';

export interface TextOutput {
  write(text: string): unknown;
}

export interface TextInput extends AsyncIterable<string | Buffer> {
  isTTY?: boolean;
}

const usage = `vistool actions parse [--file MESSAGE.txt] [--image-var NAME ...] < MESSAGE.txt

  --file F         read the message from F instead of stdin
  --image-var N    a Python variable that holds an image from an earlier turn (repeatable)

Prints {"calls": [...], "answer": ..., "errors": [{"class", "message", "offset", "line"}], "formats": [...], ...}.
The errors include the env's verdict on each call (tool name, arguments, schema: E1-E4), as a step
gives it; checks that need the image (labels, E5) are \`vistool tools apply\`'s.
Exit 0 whatever the message holds; 2 on bad options.`;

async function readAll(input: TextInput): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The parse with the env's verdict on each call added to `errors` (the checks a step runs before
 * any tool: name, arguments, schema; E1–E4), at the call's offset. What needs the image — labels
 * against its bands, the tool itself (E5) — is `vistool tools apply`'s job.
 */
export function withToolVerdicts(parsed: ParsedAction, text: string): ParsedAction {
  const verdicts: ParseError[] = [];
  parsed.calls.forEach((call, index) => {
    const verdict = checkToolCall(call);
    if (verdict === null) return;
    const offset = parsed.callOffsets?.[index];
    verdicts.push({ ...verdict, ...(offset === undefined ? {} : { offset, line: text.slice(0, offset).split('\n').length }) });
  });
  if (verdicts.length === 0) return parsed;
  const errors = [...parsed.errors, ...verdicts].sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0));
  return { ...parsed, errors };
}

export function createActionsParseCommand(stdin: TextInput = process.stdin, stdout: TextOutput = process.stdout): CliCommand {
  return {
    path: ['actions', 'parse'],
    summary: 'Parse one model message into tool calls, a final answer and errors (JSON)',
    usage,
    async run(argv) {
      const values: { file?: string; 'image-var'?: string[] } = parseCommandArgs({
        args: argv,
        options: { file: { type: 'string' }, 'image-var': { type: 'string', multiple: true } },
        strict: true,
        allowPositionals: false,
      }).values;
      let text: string;
      if (values.file !== undefined) {
        try {
          text = await readFile(values.file, 'utf8');
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          throw new Error(`cannot read the message file ${values.file}: ${reason}`, { cause: err });
        }
      } else {
        if (stdin.isTTY) throw new UsageError('no message: pipe one on stdin or give --file');
        text = await readAll(stdin);
      }
      const parsed = parseAction(text, { imageVariables: values['image-var'] ?? [] });
      stdout.write(JSON.stringify(withToolVerdicts(parsed, text), null, 2) + '\n');
      return 0;
    },
  };
}

export const actionsParseCommand = createActionsParseCommand();
