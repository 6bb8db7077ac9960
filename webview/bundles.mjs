// The browser bundles of the panels, shared by esbuild.mjs (npm run build) and the browser
// tests (which build them when dist/webview is missing or older than the sources).
// Browser targets only: no Node built-ins may end up in these bundles.

/** @type {import('esbuild').BuildOptions[]} */
export const webviewTargets = [
  {
    entryPoints: {
      dashboard: 'webview/dashboard/main.ts',
      viewer: 'webview/viewer/main.ts',
      playground: 'webview/playground/main.ts',
    },
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    outdir: 'dist/webview',
  },
  {
    // Panel styles, and the codicons (its font is copied beside it as codicon.ttf).
    entryPoints: { panels: 'media/panels.css', 'browser-theme': 'media/browser-theme.css', codicon: 'node_modules/@vscode/codicons/dist/codicon.css' },
    loader: { '.ttf': 'file' },
    assetNames: '[name]',
    outdir: 'dist/webview',
  },
];

/** Folders whose files the bundles are made from (for staleness checks): the panels, their styles and the protocol they import. */
export const webviewSources = ['webview', 'media', 'protocol'];
