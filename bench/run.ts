/**
 * `npm run bench`: runs every benchmark module listed below, one after another (never in
 * parallel: each one measures speed and must have the machine to itself).
 * `npm run bench -- tools` runs only the benchmarks whose name contains "tools".
 * To add a benchmark: export an async function from bench/<area>.ts and add one line here.
 */
import { benchFuzz } from './fuzz.js';
import { benchGrounding } from './grounding.js';
import { benchRolloutEngines } from './rollout-engines.js';
import { benchServer, benchSoak } from './server.js';
import { benchTasks, benchTasksGeometry, benchTasksSearch } from './tasks.js';
import { benchTools } from './tools.js';
import { benchTrainerMemory } from './trainer-memory.js';
import { benchView } from './view.js';

interface Benchmark {
  name: string;
  run(): Promise<void>;
}

const benchmarks: Benchmark[] = [
  { name: 'tools', run: benchTools },
  { name: 'server', run: benchServer },
  { name: 'tasks', run: benchTasks },
  { name: 'tasks-geometry', run: benchTasksGeometry },
  { name: 'tasks-search', run: benchTasksSearch },
  { name: 'grounding', run: benchGrounding },
  { name: 'fuzz', run: benchFuzz },
  { name: 'view', run: benchView },
  { name: 'soak', run: benchSoak },
  { name: 'trainer-memory', run: benchTrainerMemory },
  { name: 'rollout-engines', run: benchRolloutEngines },
];

async function main(filters: string[]): Promise<number> {
  const chosen = benchmarks.filter((b) => filters.length === 0 || filters.some((f) => b.name.includes(f)));
  if (chosen.length === 0) {
    process.stderr.write(`no benchmark matches ${filters.join(', ')}; there are: ${benchmarks.map((b) => b.name).join(', ')}\n`);
    return 2;
  }
  for (const bench of chosen) {
    process.stdout.write(`\n=== bench: ${bench.name} ===\n`);
    await bench.run();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
