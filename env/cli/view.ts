/**
 * `vistool view RUN_DIR [RUN_DIR...]`: serves the dashboard, the rollout viewer and the tool
 * playground to a browser on this machine (HTTP on loopback, a random token in the URL), for
 * clusters without an editor and for the browser tests. Runs until SIGINT/SIGTERM.
 * Never writes to the run directories it shows.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isInside } from '../core/paths.js';
import { RUN_MARKERS } from '../runs/run-groups.js';
import { PanelBackend } from '../view/panel-backend.js';
import { parseReplayPolicy, type ReplayPolicy, ReplayPolicyError } from '../view/replay-policy.js';
import { ViewServer } from '../view/view-server.js';
import { writeBundle } from '../view/bundle.js';
import { openInBrowser } from './open-browser.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';

const usage = `vistool view [RUN_DIR ...] [--port 0] [--host 127.0.0.1] [--root DIR ...]
             [--theme light|dark] [--assets DIR] [--open] [--bundle OUT]
             [--policy openai:URL#MODEL [--allow-remote-policy] [--observation-role tool|user]
              [--api-key-env NAME]]

  RUN_DIR        run directories to show (config.json, run.json, metrics.jsonl, rollouts/, images/);
                 several runs are overlaid on the dashboard. A folder of runs (such as the
                 demo's runs/demo, which holds the tools and text arms) shows every run in it
  --port N       0 picks a free port (default)
  --root DIR     the playground may also open images under DIR by path (repeatable); images
                 under the run directories and the folders given are always allowed
  --theme T      default theme of the pages (light or dark; ?theme= in the URL overrides)
  --assets DIR   where the built panel bundles are (default: dist/webview beside the CLI)
  --open         open the runs' index page in the browser ($BROWSER, else xdg-open / open / start)
  --bundle OUT   write a static copy of the dashboard and the rollout viewer on these runs into
                 OUT (a new or empty folder) and exit: it opens from file:// or any static host,
                 holds no token, no absolute path and no file from outside the run directories
                 (images downsampled to 1600 px wide); the playground is left out
  --policy P     the policy the rollout viewer's "Replay without the tool's result" asks, as
                 \`vistool eval --policy\` names one: openai:<base_url>#<model>, e.g. a checkpoint
                 served by \`python -m vistool_trainer serve-policy --checkpoint CKPT --port 0\`
                 (its "listening" line gives the URL and the model). Without it the button is
                 disabled and says why
  --allow-remote-policy  allow a --policy on another machine (a replay sends the rollout's
                 question, images and turns to it); by default only 127.0.0.1/::1/localhost
  --observation-role R   the role tool observations are sent with: tool (default; what the
                 trainer's policies read) or user (servers that refuse images in tool turns)
  --api-key-env NAME     environment variable with the policy's bearer token (default
                 VISTOOL_POLICY_API_KEY, which serve-policy requires when it is set)

Prints one JSON line {"event":"listening","url":...} with the token in the URL, then serves
until interrupted. Only this machine can connect, and only with the token.`;

/** The rule of env/runs/run-groups.ts, synchronously (argument checking happens before anything starts). */
function isRunDirectory(dir: string): boolean {
  return RUN_MARKERS.some((name) => existsSync(join(dir, name)));
}

/** env/runs/run-groups.ts's isLinkedFolderInside, synchronously: a link to a run is followed when it leads inside the folder given or the current one. */
function isLinkedFolderInsideSync(link: string, allowedRoots: readonly string[]): boolean {
  let real: string;
  try {
    real = realpathSync(link);
    if (!statSync(real).isDirectory()) return false;
  } catch {
    return false;
  }
  return allowedRoots.some((root) => isInside(existsSync(root) ? realpathSync(root) : root, real));
}

/**
 * The run directories a positional names: itself when it is one, else the runs directly inside
 * it (a folder of runs, in name order), else a usage error saying what was looked for.
 */
export function expandRunDirectories(dirs: readonly string[]): string[] {
  return dirs.flatMap((dir) => {
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`'${dir}' is not a directory; give run directories (each has metrics.jsonl, rollouts/, ...)`);
    if (isRunDirectory(dir)) return [dir];
    const inside = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => (entry.isDirectory() || (entry.isSymbolicLink() && isLinkedFolderInsideSync(join(dir, entry.name), [dir, process.cwd()]))) && isRunDirectory(join(dir, entry.name)))
      .map((entry) => join(dir, entry.name))
      .sort();
    if (inside.length === 0) throw new UsageError(`'${dir}' is neither a run directory (no run.json, config.json or metrics.jsonl) nor a folder of them; give a run directory such as runs/demo/tools`);
    return inside;
  });
}

/** --policy and its companions, checked before anything starts; null without --policy (the viewer's replay button says how to give one). */
function replayPolicyOf(values: { policy?: string; 'allow-remote-policy'?: boolean; 'observation-role'?: string; 'api-key-env'?: string; bundle?: string }): ReplayPolicy | null {
  if (values.policy === undefined) {
    for (const flag of ['observation-role', 'api-key-env'] as const) if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --policy, which names the policy a replay asks`);
    if (values['allow-remote-policy']) throw new UsageError('--allow-remote-policy goes with --policy, which names the policy a replay asks');
    return null;
  }
  if (values.bundle !== undefined) throw new UsageError('--policy is for the served viewer: a static bundle (--bundle) cannot ask a policy');
  try {
    return parseReplayPolicy(values.policy, {
      allowRemote: values['allow-remote-policy'] === true,
      ...(values['observation-role'] !== undefined ? { observationRole: values['observation-role'] } : {}),
      ...(values['api-key-env'] !== undefined ? { apiKeyEnv: values['api-key-env'] } : {}),
    });
  } catch (err) {
    if (err instanceof ReplayPolicyError) throw new UsageError(err.message);
    throw err;
  }
}

/** dist/webview next to the bundled CLI, or the repository's dist/webview when run from source. */
function defaultAssetsDir(): string {
  const candidates = [join(__dirname, 'webview'), join(__dirname, '..', '..', 'dist', 'webview')];
  return candidates.find((dir) => existsSync(join(dir, 'dashboard.js'))) ?? (candidates[0] as string);
}

export const viewCommand: CliCommand = {
  path: ['view'],
  summary: 'Open runs in the dashboard, rollout viewer and tool playground in a browser',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string', default: '0' },
        host: { type: 'string', default: '127.0.0.1' },
        root: { type: 'string', multiple: true },
        theme: { type: 'string', default: 'light' },
        assets: { type: 'string' },
        open: { type: 'boolean', default: false },
        bundle: { type: 'string' },
        policy: { type: 'string' },
        'allow-remote-policy': { type: 'boolean', default: false },
        'observation-role': { type: 'string' },
        'api-key-env': { type: 'string' },
      },
      strict: true,
    });
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, got '${values.port}'`);
    const host = values.host ?? '127.0.0.1';
    if (!['127.0.0.1', 'localhost', '::1'].includes(host)) throw new UsageError(`--host ${host} is not a loopback address; vistool view only serves this machine`);
    if (values.theme !== 'light' && values.theme !== 'dark') throw new UsageError(`--theme must be light or dark, got '${values.theme}'`);
    const replayPolicy = replayPolicyOf(values);
    const runs = expandRunDirectories(positionals);
    const assetsDir = resolve(values.assets ?? defaultAssetsDir());
    if (!existsSync(join(assetsDir, 'dashboard.js'))) throw new Error(`the panel bundles are missing from ${assetsDir}; run \`npm run build\` first`);

    if (values.bundle !== undefined) {
      if (runs.length === 0) throw new UsageError('--bundle needs run directories to copy');
      const report = await writeBundle(runs, values.bundle, assetsDir, (line) => process.stderr.write(`${line}\n`));
      process.stdout.write(JSON.stringify({ event: 'bundle', ...report, index: join(report.out, 'index.html') }) + '\n');
      process.stderr.write(`vistool view: bundle of ${report.runs} run(s) in ${report.out} (${report.files} files, ${(report.bytes / 2 ** 20).toFixed(1)} MB); open ${join(report.out, 'index.html')}\n`);
      return 0;
    }
    const token = randomBytes(24).toString('hex');
    const log = (level: string, message: string) => process.stderr.write(JSON.stringify({ ts: new Date().toISOString(), level, msg: message }) + '\n');
    // The folders named on the command line are roots too: a folder of runs (runs/demo) holds the task images its runs share (data/).
    const backend = new PanelBackend({ runs, roots: [...(values.root ?? []), ...positionals], log, ...(replayPolicy ? { replayPolicy: { policy: replayPolicy } } : {}) });
    if (replayPolicy) process.stderr.write(`vistool view: the rollout viewer replays training rollouts without their tool results against ${replayPolicy.description}\n`);
    await backend.start();
    const server = new ViewServer({ backend, assetsDir, token, host, port, log });
    const base = await server.start();
    const query = `?token=${token}${values.theme === 'dark' ? '&theme=dark' : ''}`;
    process.stdout.write(
      JSON.stringify({ event: 'listening', url: `${base}/${query}`, dashboard: `${base}/dashboard${query}`, viewer: `${base}/viewer${query}`, playground: `${base}/playground${query}`, pid: process.pid }) + '\n',
    );
    process.stderr.write(`vistool view: open ${base}/${query} (the index of the runs: dashboard, rollout viewer, playground)\n`);
    if (values.open) {
      const problem = await openInBrowser(`${base}/${query}`);
      if (problem !== null) process.stderr.write(`vistool view: ${problem}\n`);
    }
    await new Promise<void>((resolvePromise) => {
      const shutdown = () => {
        backend.stop();
        void server.stop().then(resolvePromise);
      };
      process.once('SIGTERM', shutdown);
      process.once('SIGINT', shutdown);
    });
    process.stdout.write(JSON.stringify({ event: 'stopped' }) + '\n');
    return 0;
  },
};
