/**
 * `vistool data check PATH`: validates a tasks.jsonl against the schema, then checks every
 * task (answers recomputed from the table, geometry on regenerated pixels for generated tasks,
 * stored images byte-compared, gold calls run through the tools). A line that is not a valid
 * record is reported with its line number and the good lines are still checked. Exits 1 if
 * anything fails.
 */
import { checkTask, taskDirOf, type CheckReport } from '../tasks/check.js';
import { readTaskFileText, readTaskLines } from '../tasks/load.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';
import { parseLegiblePx, type CliStreams } from './data-gen.js';
import { taskFileOf } from './task-file.js';

const usage = `vistool data check PATH [--json] [--concurrency K] [--max-pixels P] [--legible-px L]

  PATH           a tasks.jsonl (images are read relative to it), or the folder holding it
  --json         print one JSON report object instead of text
  --concurrency  tasks checked at once (default 4)
  --max-pixels   search tasks: judge the need-for-zoom criterion under this image budget
                 instead of the one each task was generated for (default 50176)
  --legible-px   search tasks: ... and with this legible feature size, px (default 6)`;

export function createDataCheckCommand(io: CliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['data', 'check'],
    summary: 'Check a task file: schema, answers, geometry on pixels, gold calls',
    usage,
    async run(argv) {
      const parsed = parseCommandArgs({ args: argv, options: { json: { type: 'boolean' }, concurrency: { type: 'string' }, 'max-pixels': { type: 'string' }, 'legible-px': { type: 'string' } }, allowPositionals: true, strict: true });
      const [given, ...extra] = parsed.positionals;
      if (given === undefined || extra.length > 0) throw new UsageError('give exactly one PATH: a tasks.jsonl or the folder holding it');
      const path = taskFileOf(given);
      const concurrency = parsed.values.concurrency === undefined ? 4 : Number(parsed.values.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1) throw new UsageError(`--concurrency must be a positive whole number, got '${parsed.values.concurrency}'`);
      const maxPixels = parsed.values['max-pixels'];
      if (maxPixels !== undefined && !(/^\d+$/.test(maxPixels) && Number(maxPixels) >= 784)) throw new UsageError(`--max-pixels must be a whole number of pixels, at least 784; got '${maxPixels}'`);
      const budget = {
        ...(maxPixels !== undefined ? { maxPixels: Number(maxPixels) } : {}),
        ...(parsed.values['legible-px'] !== undefined ? { legiblePx: parseLegiblePx(parsed.values['legible-px']) } : {}),
      };
      const { tasks: lines, problems } = readTaskLines(await readTaskFileText(path), path);
      const tasks = lines.map((l) => l.task);
      const taskDir = taskDirOf(path);
      const badLines = new Map<number, string[]>();
      for (const p of problems) badLines.set(p.line, [...(badLines.get(p.line) ?? []), p.message]);
      const lineReports: CheckReport[] = [...badLines].map(([line, messages]) => ({
        id: `line ${line}`,
        ok: false,
        issues: messages.map((message) => ({ check: 'record' as const, message })),
      }));
      const reports: CheckReport[] = new Array(tasks.length);
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(concurrency, tasks.length) }, async () => {
          while (next < tasks.length) {
            const i = next++;
            reports[i] = await checkTask(tasks[i]!, { taskDir, budget });
          }
        }),
      );
      reports.push(...lineReports);
      const failed = reports.filter((r) => !r.ok);
      if (parsed.values.json) {
        io.stdout.write(`${JSON.stringify({ path, checked: reports.length, ok: reports.length - failed.length, failed: failed.length, failures: failed })}\n`);
      } else {
        for (const r of failed) {
          io.stdout.write(`${r.id}: FAILED\n`);
          for (const issue of r.issues) io.stdout.write(`  [${issue.check}] ${issue.message}\n`);
        }
        io.stdout.write(`${path}: ${reports.length} checked, ${reports.length - failed.length} ok, ${failed.length} failed\n`);
      }
      return failed.length === 0 ? 0 : 1;
    },
  };
}

export const dataCheckCommand = createDataCheckCommand();
