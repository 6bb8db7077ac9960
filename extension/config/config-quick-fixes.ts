/**
 * Quick fixes for run configs, keyed by what env/config says the fix is: rename a misspelt
 * key, set the value a check suggests, remove a key that is ignored. Offered for our semantic
 * diagnostics and also beside VS Code's own schema diagnostics at the same place (a misspelt
 * key gets "Rename 'imagez' to 'images'").
 */
import * as vscode from 'vscode';
import { type CudaFacts, localFacts } from '../../env/config/environment-facts.js';
import { JsonText } from '../../env/config/json-text.js';
import { validateRunConfigText } from '../../env/config/validate-run-config.js';
import { configBaseDir, RUN_CONFIG_SELECTOR, workspaceRoots } from './config-documents.js';
import { problemRange } from './config-diagnostics.js';

export class ConfigQuickFixes implements vscode.CodeActionProvider {
  static readonly providedCodeActionKinds = [vscode.CodeActionKind.QuickFix];

  static register(context: vscode.ExtensionContext, cudaFacts: () => CudaFacts): void {
    context.subscriptions.push(
      vscode.languages.registerCodeActionsProvider(RUN_CONFIG_SELECTOR, new ConfigQuickFixes(cudaFacts), { providedCodeActionKinds: ConfigQuickFixes.providedCodeActionKinds }),
    );
  }

  private constructor(private readonly cudaFacts: () => CudaFacts) {}

  provideCodeActions(document: vscode.TextDocument, range: vscode.Range | vscode.Selection, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const source = document.getText();
    const { problems } = validateRunConfigText(source, { baseDir: configBaseDir(document.uri), facts: localFacts(this.cudaFacts(), process.env, process.env.HOME ?? '', workspaceRoots()) });
    const text = new JsonText(source);
    const actions: vscode.CodeAction[] = [];
    for (const found of problems) {
      if (found.fixes.length === 0) continue;
      const where = problemRange(found);
      if (!where.intersection(range)) continue;
      // Ours by code; VS Code's schema diagnostics (source 'json') by place.
      const matching = context.diagnostics.filter((d) => d.range.intersection(where) && (d.source !== 'vistool' || d.code === found.code));
      found.fixes.forEach((fix, index) => {
        const action = new vscode.CodeAction(fix.title, vscode.CodeActionKind.QuickFix);
        const edit = new vscode.WorkspaceEdit();
        for (const change of text.editsFor(fix)) {
          edit.replace(document.uri, new vscode.Range(document.positionAt(change.offset), document.positionAt(change.offset + change.length)), change.content);
        }
        action.edit = edit;
        action.diagnostics = matching;
        action.isPreferred = index === 0 && found.severity === 'error';
        actions.push(action);
      });
    }
    return actions;
  }
}
