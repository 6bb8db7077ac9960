/**
 * `vistool tools list [--json]`: the tool library at a glance — each tool's name and the first
 * sentence of its description, or with --json the OpenAI function objects a client would send.
 */
import { listTools, toolsAsOpenAIFunctions } from '../tools/registry.js';
import { type CliCommand, parseCommandArgs } from './command.js';

export interface TextOutput {
  write(text: string): unknown;
}

const usage = `vistool tools list [--json]

  --json   print the tools as OpenAI function objects ({type: "function", function: {name, description, parameters}})`;

/** The listing as text: one line per tool, its name then the first sentence of its description. */
export function toolListing(): string {
  const tools = listTools();
  const width = Math.max(...tools.map((t) => t.name.length));
  return tools.map((t) => `${t.name.padEnd(width)}  ${firstSentence(t.description)}`).join('\n');
}

function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

export function createToolsListCommand(stdout: TextOutput = process.stdout): CliCommand {
  return {
    path: ['tools', 'list'],
    summary: 'List the image tools (names and descriptions; --json for OpenAI function format)',
    usage,
    async run(argv) {
      const json = parseCommandArgs({ args: argv, options: { json: { type: 'boolean', default: false } }, strict: true, allowPositionals: false }).values.json ?? false;
      stdout.write((json ? JSON.stringify(toolsAsOpenAIFunctions(), null, 2) : toolListing()) + '\n');
      return 0;
    },
  };
}

export const toolsListCommand = createToolsListCommand();
