/**
 * Theme colours for canvases (charts, image overlays), read from the `--vscode-*` variables the
 * host defines, and a watch on the body class so canvases are redrawn when the theme changes
 * (VS Code swaps vscode-light / vscode-dark / vscode-high-contrast on the body).
 */

export interface ThemeColours {
  foreground: string;
  muted: string;
  grid: string;
  background: string;
  /** One colour per run, in order; reused cyclically. */
  series: string[];
  warning: string;
  error: string;
  success: string;
}

function cssVar(name: string, fallback: string): string {
  const value = getComputedStyle(document.body).getPropertyValue(name).trim();
  return value === '' ? fallback : value;
}

/** The colours last read, and the theme they were read under. */
let cached: { theme: string; colours: ThemeColours } | null = null;

/**
 * The theme's colours. Reading computed styles makes the browser recompute the page's styles
 * whenever the page changed since (tens of milliseconds on a page that just drew its lists and
 * charts), and the colours only change with the theme: the body's class, or the variables VS Code
 * sets on the <html> element. So they are read again only when one of those changed.
 */
export function themeColours(): ThemeColours {
  const theme = `${document.body.className}\n${document.documentElement.getAttribute('style') ?? ''}`;
  if (cached?.theme !== theme) cached = { theme, colours: readColours() };
  return cached.colours;
}

function readColours(): ThemeColours {
  return {
    foreground: cssVar('--vscode-foreground', '#3b3b3b'),
    muted: cssVar('--vscode-descriptionForeground', '#717171'),
    grid: cssVar('--vscode-charts-lines', 'rgba(128,128,128,0.35)'),
    background: cssVar('--vscode-editor-background', '#ffffff'),
    series: [
      cssVar('--vscode-charts-blue', '#1a85ff'),
      cssVar('--vscode-charts-orange', '#d18616'),
      cssVar('--vscode-charts-green', '#388a34'),
      cssVar('--vscode-charts-purple', '#652d90'),
      cssVar('--vscode-charts-red', '#e51400'),
      cssVar('--vscode-charts-yellow', '#bf8803'),
    ],
    warning: cssVar('--vscode-editorWarning-foreground', '#bf8803'),
    error: cssVar('--vscode-errorForeground', '#c72e0f'),
    success: cssVar('--vscode-testing-iconPassed', '#388a34'),
  };
}

/** Calls `onChange` whenever the body's theme class changes. */
export function watchTheme(onChange: () => void): void {
  let last = document.body.className;
  new MutationObserver(() => {
    if (document.body.className === last) return;
    last = document.body.className;
    onChange();
  }).observe(document.body, { attributes: true, attributeFilter: ['class'] });
}

export function isDarkTheme(): boolean {
  return document.body.classList.contains('vscode-dark') || document.body.classList.contains('vscode-high-contrast');
}

/** Browser host only: flips between the light and dark defaults. */
export function toggleBrowserTheme(): void {
  const dark = isDarkTheme();
  document.body.classList.toggle('vscode-dark', !dark);
  document.body.classList.toggle('vscode-light', dark);
  document.body.dataset.vscodeThemeKind = dark ? 'vscode-light' : 'vscode-dark';
}
