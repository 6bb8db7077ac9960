/**
 * Diagnostics for run configs, refreshed as you type and cleared when a config closes: every
 * problem `vistool config validate` reports — the schema's (unknown keys, wrong types) and the
 * semantic checks' — with the CLI's message, severity and code, so the editor and the CLI never
 * disagree (issue 44, 2.9: an unknown key was a warning here and an error there). JSON syntax is
 * left to VS Code's JSON support, which reports it anyway; the schema VS Code gets through
 * `contributes.jsonValidation` has no validating keywords (env/config/editor-schema.ts), so it
 * gives hovers and completion and reports nothing twice.
 */
import * as vscode from 'vscode';
import { type CudaFacts, localFacts } from '../../env/config/environment-facts.js';
import type { ConfigProblem } from '../../env/config/problem.js';
import { editorProblems, validateRunConfigText } from '../../env/config/validate-run-config.js';
import { configBaseDir, isRunConfig, workspaceRoots } from './config-documents.js';

const DEBOUNCE_MS = 150;

const SEVERITIES: Record<ConfigProblem['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

export function problemRange(found: ConfigProblem): vscode.Range {
  const start = found.start ?? { line: 1, column: 1 };
  const end = found.end ?? start;
  return new vscode.Range(start.line - 1, start.column - 1, end.line - 1, end.column - 1);
}

export function toDiagnostic(found: ConfigProblem): vscode.Diagnostic {
  const diagnostic = new vscode.Diagnostic(problemRange(found), found.message, SEVERITIES[found.severity]);
  diagnostic.source = 'vistool';
  diagnostic.code = found.code;
  return diagnostic;
}

export class ConfigDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('vistool');
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[] = [];

  static register(context: vscode.ExtensionContext, cudaFacts: () => CudaFacts): ConfigDiagnostics {
    const diagnostics = new ConfigDiagnostics(cudaFacts);
    context.subscriptions.push(diagnostics);
    return diagnostics;
  }

  private constructor(private readonly cudaFacts: () => CudaFacts) {
    this.disposables.push(
      this.collection,
      vscode.workspace.onDidOpenTextDocument((d) => this.update(d)),
      vscode.workspace.onDidChangeTextDocument((e) => this.schedule(e.document)),
      vscode.workspace.onDidCloseTextDocument((d) => this.clear(d.uri)),
      // A data file or model folder appearing changes what exists: re-check open configs on save anywhere.
      vscode.workspace.onDidSaveTextDocument(() => this.refreshAll()),
    );
    this.refreshAll();
  }

  /** Re-checks every open run config (after Check Trainer Environment learnt about the GPUs). */
  refreshAll(): void {
    for (const document of vscode.workspace.textDocuments) this.update(document);
  }

  /** The problems shown for a document now (the in-editor tests read them). */
  problemsFor(document: vscode.TextDocument): ConfigProblem[] {
    return validateRunConfigText(document.getText(), { baseDir: configBaseDir(document.uri), facts: localFacts(this.cudaFacts(), process.env, process.env.HOME ?? '', workspaceRoots()) }).problems;
  }

  private schedule(document: vscode.TextDocument): void {
    if (!isRunConfig(document)) return;
    const key = document.uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.set(key, setTimeout(() => {
      this.timers.delete(key);
      this.update(document);
    }, DEBOUNCE_MS));
  }

  private update(document: vscode.TextDocument): void {
    if (!isRunConfig(document) || document.isClosed) return;
    this.collection.set(document.uri, editorProblems(this.problemsFor(document)).map(toDiagnostic));
  }

  private clear(uri: vscode.Uri): void {
    clearTimeout(this.timers.get(uri.toString()));
    this.timers.delete(uri.toString());
    this.collection.delete(uri);
  }

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    for (const d of this.disposables.reverse()) d.dispose();
  }
}
