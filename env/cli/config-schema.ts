/**
 * `vistool config schema`: prints the run-config JSON Schema (draft-07) — the single source of
 * truth the editor, the CLI and the trainer validate against — self-contained (the reward
 * section's `$ref` inlined), for editors without the extension and for tooling. The build
 * writes the same text to dist/run-config.schema.json for the extension's jsonValidation.
 */
import { selfContainedSchema } from '../config/run-config-schema.js';
import { type CliCommand, UsageError } from './command.js';

export interface TextOutput {
  write(text: string): unknown;
}

export function createConfigSchemaCommand(stdout: TextOutput = process.stdout): CliCommand {
  return {
    path: ['config', 'schema'],
    summary: 'Print the run-config JSON Schema (draft-07, self-contained)',
    usage: 'vistool config schema',
    async run(argv) {
      if (argv.length > 0) throw new UsageError(`unexpected argument '${argv[0]}'`);
      stdout.write(JSON.stringify(selfContainedSchema(), null, 2) + '\n');
      return 0;
    },
  };
}

export const configSchemaCommand = createConfigSchemaCommand();
