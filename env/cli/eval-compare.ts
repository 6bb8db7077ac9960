/**
 * `vistool eval compare DIR...`: lines up evals (vistool eval --out folders) in one table —
 * accuracy, exact accuracy, tool-call rate, turns and failures per arm, the difference to the
 * first eval, accuracy per task kind, and the gain from tools. Read-only.
 */
import { compareEvals } from '../eval/compare.js';
import { ResultsDocumentError } from '../eval/results-document.js';
import { formatComparison } from '../eval/table.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';
import type { EvalCliStreams } from './eval.js';

const usage = `vistool eval compare DIR [DIR ...] [--common] [--json]

  DIR       eval folders (vistool eval --out); the first is the baseline for Δacc
  --common  restrict each arm to the tasks every eval completed in it (when the task sets differ)
  --json    print the comparison as one JSON object instead of a table`;

export function createEvalCompareCommand(io: EvalCliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['eval', 'compare'],
    summary: 'Line up eval results side by side (accuracy with and without tools, call rate, per kind)',
    usage,
    async run(argv) {
      const { values, positionals } = parseCommandArgs({
        args: argv,
        allowPositionals: true,
        strict: true,
        options: { common: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
      });
      if (positionals.length === 0) throw new UsageError('give at least one eval folder');
      let comparison;
      try {
        comparison = await compareEvals(positionals, { common: values.common === true });
      } catch (err) {
        if (err instanceof ResultsDocumentError) throw new UsageError(err.message);
        throw err;
      }
      io.stdout.write(values.json ? JSON.stringify(comparison) + '\n' : formatComparison(comparison) + '\n');
      return 0;
    },
  };
}

export const evalCompareCommand = createEvalCompareCommand();
