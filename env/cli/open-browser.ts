/**
 * Opens a URL in the user's browser for `vistool view --open`. `$BROWSER` wins when set (the
 * convention Python's webbrowser and many CLIs follow; it is also how tests watch the call), else
 * the platform's opener: xdg-open, open, or start.
 *
 * Hand-written rather than the `open` package: that package is ESM-only and finds its bundled
 * xdg-open through import.meta.url, which the bundled CommonJS CLI does not have.
 */
import { spawn } from 'node:child_process';

export function browserCommand(url: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): { command: string; args: string[] } {
  const browser = env.BROWSER?.trim();
  if (browser) return { command: browser, args: [url] };
  if (platform === 'darwin') return { command: 'open', args: [url] };
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', url] };
  return { command: 'xdg-open', args: [url] };
}

/** Resolves to null once the opener has started, or to why it could not start (nothing is thrown: the URL is printed anyway). */
export function openInBrowser(url: string): Promise<string | null> {
  const { command, args } = browserCommand(url);
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.once('error', (err) => resolve(`could not start ${command} (${err.message}); open the URL yourself, or set $BROWSER`));
    child.once('spawn', () => {
      child.unref();
      resolve(null);
    });
  });
}
