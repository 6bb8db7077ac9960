/**
 * `vistool serve`: runs the environment server until SIGTERM/SIGINT, then shuts down
 * gracefully (in-flight requests finish). Prints one JSON line when it is ready, so a parent
 * process (the trainer) can read the URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile, chmod } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { EnvServer } from '../server/server.js';
import { createScorer } from '../server/scorer.js';
import { type CliCommand, parseCommandArgs, UsageError } from './command.js';

const usage = `vistool serve [--root DIR ...] [--images-dir DIR] [--host 127.0.0.1] [--port 0]
              [--token-file FILE] [--reward-config FILE.json] [--max-body BYTES]
              [--max-episodes N] [--idle-timeout SECONDS] [--quiet]

  --root DIR          task images must lie inside DIR (default: the current folder); repeat it
                      for several data folders (the first is the default task_dir)
  --images-dir DIR    where episode images are written, content-addressed (default: DIR/.vistool/images)
  --port N            0 picks a free port; the URL is printed as {"event":"listening",...}
  --token-file FILE   write the bearer token there (mode 0600); the token comes from
                      $VISTOOL_TOKEN when set, else it is generated
  --reward-config F   JSON reward configuration (defaults when absent)
  --host H            bind address; anything but loopback needs --allow-remote`;

export const serveCommand: CliCommand = {
  path: ['serve'],
  summary: 'Run the environment server (HTTP/JSON on loopback, bearer token)',
  usage,
  async run(argv) {
    const { values } = parseCommandArgs({
      args: argv,
      options: {
        root: { type: 'string', multiple: true },
        'images-dir': { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '0' },
        'token-file': { type: 'string' },
        'reward-config': { type: 'string' },
        'max-body': { type: 'string' },
        'max-episodes': { type: 'string' },
        'idle-timeout': { type: 'string' },
        'allow-remote': { type: 'boolean', default: false },
        quiet: { type: 'boolean', default: false },
      },
      strict: true,
    });
    const [root = resolve('.'), ...moreRoots] = (values.root ?? ['.']).map((r) => resolve(r));
    const port = intOption(values.port, '--port', 0, 65535);
    const host = values.host ?? '127.0.0.1';
    if (!['127.0.0.1', 'localhost', '::1'].includes(host) && !values['allow-remote']) {
      throw new UsageError(`--host ${host} is not a loopback address; the server has no TLS, so pass --allow-remote if you really mean it`);
    }
    const token = process.env.VISTOOL_TOKEN || randomBytes(32).toString('hex');
    if (values['token-file']) {
      const tokenFile = resolve(values['token-file']);
      await mkdir(dirname(tokenFile), { recursive: true });
      await writeFile(tokenFile, token + '\n', { mode: 0o600 });
      await chmod(tokenFile, 0o600); // an existing file keeps its old mode on write
    } else if (!process.env.VISTOOL_TOKEN) {
      throw new UsageError('give --token-file FILE (the token is written there) or set VISTOOL_TOKEN');
    }
    let rewardConfig: unknown = undefined;
    if (values['reward-config']) {
      const text = await readFile(values['reward-config'], 'utf8').catch(() => {
        throw new UsageError(`cannot read --reward-config ${values['reward-config']}`);
      });
      try {
        rewardConfig = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`--reward-config ${values['reward-config']} is not valid JSON: ${(err as Error).message}`);
      }
    }
    const quiet = values.quiet;
    const log = (entry: Record<string, unknown>) => {
      if (!quiet || entry.level !== 'info') process.stderr.write(JSON.stringify({ ts: new Date().toISOString(), ...entry }) + '\n');
    };
    const server = new EnvServer({
      host,
      port,
      token,
      root,
      moreRoots,
      imagesDir: resolve(values['images-dir'] ?? `${root}/.vistool/images`),
      scorer: createScorer(rewardConfig, log),
      ...(values['max-body'] ? { maxBodyBytes: intOption(values['max-body'], '--max-body', 1024, 1 << 30) } : {}),
      ...(values['max-episodes'] ? { maxEpisodes: intOption(values['max-episodes'], '--max-episodes', 1, 1_000_000) } : {}),
      ...(values['idle-timeout'] ? { idleTimeoutMs: 1000 * intOption(values['idle-timeout'], '--idle-timeout', 1, 86_400) } : {}),
      log,
    });
    const url = await server.start();
    process.stdout.write(JSON.stringify({ event: 'listening', url, token_file: values['token-file'] ? resolve(values['token-file']) : null, pid: process.pid }) + '\n');
    await new Promise<void>((resolvePromise) => {
      const shutdown = (signal: string) => {
        process.stderr.write(JSON.stringify({ ts: new Date().toISOString(), level: 'info', msg: `received ${signal}, finishing in-flight requests` }) + '\n');
        void server.stop().then(resolvePromise);
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    });
    process.stdout.write(JSON.stringify({ event: 'stopped' }) + '\n');
    return 0;
  },
};

function intOption(value: string | undefined, name: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be an integer from ${min} to ${max}, got '${value}'`);
  return n;
}
