/**
 * `node --import tsx test/runs/read-run-dir.ts RUN_DIR`: one run directory as the workbench reads
 * it, printed as one JSON object: the metrics as the dashboard's store holds them (env/runs/
 * metrics-store.ts), the step files the rollout viewer lists (env/runs/rollout-index.ts), and for
 * each of those, its index and the viewer's prompt groups (webview/viewer/groups.ts). The veRL
 * bridge's tests (verl_bridge/tests) run it on what veRL and the agent loop wrote, so they check
 * the TypeScript readers themselves rather than a Python copy of their rules.
 */
import { join } from 'node:path';
import { MetricsStore } from '../../env/runs/metrics-store.js';
import { listStepFiles, StepFileIndex } from '../../env/runs/rollout-index.js';
import { groupRollouts } from '../../webview/viewer/groups.js';

async function main(runDir: string): Promise<void> {
  const metrics = new MetricsStore(join(runDir, 'metrics.jsonl'));
  await metrics.refresh();
  const stepFiles = await listStepFiles(runDir);
  const steps = await Promise.all(
    stepFiles.map(async (file) => {
      const index = await new StepFileIndex(join(runDir, file.file), file.step).index('run');
      const groups = groupRollouts(index.rollouts).map((g) => ({ promptId: g.promptId, size: g.size, lines: g.rollouts.map((r) => r.line).sort((a, b) => a - b), kept: g.kept }));
      return { ...file, rollouts: index.rollouts, skipped: index.skipped, groups };
    }),
  );
  process.stdout.write(JSON.stringify({ metrics: { rows: metrics.rowCount, names: metrics.names, table: metrics.slice(0), problems: metrics.problems }, stepFiles, steps }) + '\n');
}

const [runDir] = process.argv.slice(2);
if (runDir === undefined) {
  process.stderr.write('usage: node --import tsx test/runs/read-run-dir.ts RUN_DIR\n');
  process.exit(2);
}
main(runDir).catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
