/**
 * `vistool grounding eval TASKS_DIR`: grounds every table / vbar / hbar task of a data set by
 * OCR and scores it against the generator's exact geometry: per kind, label recall, text exact
 * match, mean band IoU, share of bands with IoU ≥ 0.8, kind found, and milliseconds per image.
 * A table for people on stderr, one JSON object on stdout.
 */
import type { RequestedKind } from '../grounding/classify.js';
import { evaluateTasks, GOOD_IOU, summarise, type ImageScore, type KindSummary } from '../grounding/evaluate.js';
import { loadTasks } from '../tasks/load.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';
import { taskFileOf } from './task-file.js';
import type { CliStreams } from './data-gen.js';

const usage = `vistool grounding eval TASKS_DIR [--kind auto|task] [--limit N] [--failures]

  TASKS_DIR    a data set folder with tasks.jsonl (from \`vistool data gen\`), or the tasks.jsonl itself
  --kind       auto (default): find each image's layout as \`grounding detect\` does;
               task: tell the grounder the task's kind (measures the layouts alone)
  --limit N    only the first N table / vbar / hbar tasks
  --failures   list every label read wrongly or placed with IoU < ${GOOD_IOU} on stderr

Prints per kind (table, vbar, hbar, all): images, labels, label recall, text exact match,
mean band IoU, share of bands with IoU ≥ ${GOOD_IOU}, kind found, extra bands, ms per image.`;

export function createGroundingEvalCommand(io: CliStreams = { stdout: process.stdout, stderr: process.stderr }): CliCommand {
  return {
    path: ['grounding', 'eval'],
    summary: 'Score OCR grounding against a generated data set (label recall, text match, band IoU, ms/image)',
    usage,
    async run(argv) {
      const { values, positionals } = parseCommandArgs({ args: argv, options: { kind: { type: 'string' }, limit: { type: 'string' }, failures: { type: 'boolean' } }, strict: true, allowPositionals: true });
      if (positionals.length !== 1) throw new UsageError('give exactly one TASKS_DIR (a folder holding tasks.jsonl)');
      const file = taskFileOf(positionals[0] as string, 'TASKS_DIR');
      const mode = values.kind ?? 'auto';
      if (mode !== 'auto' && mode !== 'task') throw new UsageError(`--kind must be auto or task; got '${mode}'`);
      const limit = values.limit === undefined ? Infinity : Number(values.limit);
      if (!(limit >= 1) || !Number.isInteger(limit === Infinity ? 1 : limit)) throw new UsageError(`--limit must be a whole number ≥ 1; got '${values.limit}'`);

      const tasks = (await loadTasks(file)).filter((t) => t.kind === 'table' || t.kind === 'vbar' || t.kind === 'hbar').slice(0, limit);
      if (tasks.length === 0) throw new Error(`${file} holds no table, vbar or hbar tasks; grounding eval scores only those kinds`);
      // Loaded here, not at the top: every other command must start without onnxruntime.
      const { ocrSessions, requestedDevice } = await import('../grounding/sessions.js');
      const sessions = await ocrSessions({ device: requestedDevice() });
      const kind: RequestedKind = 'auto';
      const scores = await evaluateTasks(tasks, file, {
        sessions,
        kind,
        useTaskKind: mode === 'task',
        onImage: values.failures ? (s) => reportFailures(io, s) : undefined,
      });
      const summary = summarise(scores);
      io.stderr.write(formatTable(summary, sessions.device) + '\n');
      io.stdout.write(JSON.stringify({ tasks: file, mode, device: sessions.device, summary }) + '\n');
      return 0;
    },
  };
}

function reportFailures(io: CliStreams, score: ImageScore): void {
  const bad = score.labels.filter((l) => l.predicted !== l.truth || l.iou < GOOD_IOU);
  if (score.found !== score.kind) io.stderr.write(`${score.id}: found ${score.found ?? 'no layout'}, expected ${score.kind}\n`);
  for (const l of bad) io.stderr.write(`${score.id} (${score.kind}, d${score.difficulty}) ${l.family}: ${JSON.stringify(l.truth)} → ${l.predicted === null ? 'not found' : JSON.stringify(l.predicted)}, IoU ${l.iou.toFixed(2)}\n`);
}

function percent(v: number): string {
  return `${(100 * v).toFixed(1)}%`;
}

export function formatTable(summary: Record<string, KindSummary>, device: string): string {
  const order = ['table', 'vbar', 'hbar', 'all'].filter((k) => summary[k]);
  const header = ['kind', 'images', 'labels', 'recall', 'text exact', 'mean IoU', `IoU≥${GOOD_IOU}`, 'kind found', 'extra', 'ms/image'];
  const rows = order.map((k) => {
    const s = summary[k] as KindSummary;
    return [k, String(s.images), String(s.labels), percent(s.labelRecall), percent(s.textExact), s.meanIou.toFixed(3), percent(s.goodIou), percent(s.kindCorrect), String(s.extraBands), s.msPerImage.toFixed(0)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [`grounding eval (${device})`, line(header), ...rows.map(line)].join('\n');
}

export const groundingEvalCommand = createGroundingEvalCommand();
