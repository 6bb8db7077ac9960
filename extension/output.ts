/**
 * The extension's own log channel ("vistool"): environment checks, set-up, task generation,
 * evaluation. Each run has its own channel besides (processes/run-manager.ts).
 */
import * as vscode from 'vscode';

let channel: vscode.LogOutputChannel | undefined;

export function vistoolLog(context?: vscode.ExtensionContext): vscode.LogOutputChannel {
  if (!channel) {
    channel = vscode.window.createOutputChannel('vistool', { log: true });
    context?.subscriptions.push(channel, { dispose: () => (channel = undefined) });
  }
  return channel;
}
