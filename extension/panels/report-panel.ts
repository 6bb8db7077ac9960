/**
 * A run's report.html (the demo's, or one `python -m vistool_trainer report` wrote) in an editor
 * tab. The report is static HTML that links its images by relative path; here it is shown as it
 * is, under a policy that runs no script at all (`script-src 'none'`), loads images only from the
 * report's own folder (through a <base> on the webview URI of that folder) and allows the inline
 * <style> the report carries. One tab per report file, revealed when opened again.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { escapeHtml } from '../../env/view/page.js';

/** The report's page with the policy and base put first in its head (a report has no scripts; none would run). */
export function reportPage(html: string, base: string, cspSource: string): string {
  const csp = ["default-src 'none'", "script-src 'none'", `img-src ${cspSource}`, "style-src 'unsafe-inline'", "form-action 'none'"].join('; ');
  const head = `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}"><base href="${escapeHtml(base)}">`;
  // The policy must come before anything that loads: right after <head>, else after the doctype, else first.
  if (/<head[^>]*>/i.test(html)) return html.replace(/<head[^>]*>/i, (tag) => `${tag}${head}`);
  if (/^\s*<!doctype[^>]*>/i.test(html)) return html.replace(/^\s*<!doctype[^>]*>/i, (doctype) => `${doctype}${head}`);
  return head + html;
}

export class ReportPanels implements vscode.Disposable {
  private readonly open = new Map<string, vscode.WebviewPanel>();

  /** The tab showing `file` (opened or revealed); the in-editor tests read its html. */
  async show(file: string): Promise<vscode.WebviewPanel> {
    const existing = this.open.get(file);
    const html = await readFile(file, 'utf8');
    const folder = vscode.Uri.file(dirname(file));
    const panel =
      existing ??
      vscode.window.createWebviewPanel('vistool.report', `vistool · report · ${basename(dirname(file))}`, vscode.ViewColumn.Active, {
        enableScripts: false,
        localResourceRoots: [folder],
      });
    if (!existing) {
      this.open.set(file, panel);
      panel.onDidDispose(() => this.open.delete(file));
    }
    const base = `${panel.webview.asWebviewUri(folder).toString().replace(/\/$/, '')}/`;
    panel.webview.html = reportPage(html, base, panel.webview.cspSource);
    panel.reveal(undefined, false);
    return panel;
  }

  panelFor(file: string): vscode.WebviewPanel | undefined {
    return this.open.get(file);
  }

  dispose(): void {
    for (const panel of [...this.open.values()]) panel.dispose();
  }
}
