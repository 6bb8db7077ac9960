/**
 * `vistool config schema`: prints the run-config JSON Schema (draft-07) — the single source of
 * truth the editor, the CLI and the trainer validate against — self-contained (the reward
 * section's `$ref` inlined), for editors without the extension and for tooling. With
 * `--for-editor`, the same schema without its validating keywords (env/config/editor-schema.ts):
 * the build writes that to dist/run-config.schema.json for the extension's jsonValidation, whose
 * own diagnostics report the schema's problems as the CLI does.
 */
import { editorSchema } from '../config/editor-schema.js';
import { selfContainedSchema } from '../config/run-config-schema.js';
import { type CliCommand, UsageError } from './command.js';

export interface TextOutput {
  write(text: string): unknown;
}

export function createConfigSchemaCommand(stdout: TextOutput = process.stdout): CliCommand {
  return {
    path: ['config', 'schema'],
    summary: 'Print the run-config JSON Schema (draft-07, self-contained)',
    usage: 'vistool config schema [--for-editor]',
    async run(argv) {
      const forEditor = argv[0] === '--for-editor';
      const extra = argv.slice(forEditor ? 1 : 0);
      if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
      const schema = selfContainedSchema();
      stdout.write(JSON.stringify(forEditor ? editorSchema(schema) : schema, null, 2) + '\n');
      return 0;
    },
  };
}

export const configSchemaCommand = createConfigSchemaCommand();
