/**
 * Whether a view's first scan of the workspace has finished. The views' "nothing here" welcome
 * texts (package.json `viewsWelcome`) are shown only once it has: before, a view is empty because
 * it has not looked yet (the extension activating, a slow first file search), and saying "No run
 * configs in this workspace" then is wrong. Until then the view says it is looking.
 */
import * as vscode from 'vscode';

export type ScannedView = 'runs' | 'datasets' | 'configs';

/** The context key package.json's `when` clauses read, e.g. `vistool.configsScanned`. */
export function scannedContextKey(view: ScannedView): string {
  return `vistool.${view}Scanned`;
}

export function markScanned(view: ScannedView): void {
  void vscode.commands.executeCommand('setContext', scannedContextKey(view), true);
}
