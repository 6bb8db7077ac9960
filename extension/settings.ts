/**
 * The extension's settings (package.json `contributes.configuration`), read in one place with
 * their defaults, and the folders they resolve to for a workspace folder.
 */
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { replayPolicyState, type ReplayPolicyState } from '../env/view/replay-policy.js';

export function runsRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((folder) => {
    const setting = vscode.workspace.getConfiguration('vistool', folder.uri).get<string>('runsFolder', 'runs') || 'runs';
    return isAbsolute(setting) ? setting : join(folder.uri.fsPath, setting);
  });
}

/** The workspace folders' paths: where a symbolic link in a runs folder may lead. */
export function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
}

export function datasetsExclude(): string {
  return vscode.workspace.getConfiguration('vistool').get<string>('datasetsExclude', '{**/node_modules/**,**/.venv/**,**/runs/**,**/.git/**}');
}

export function pythonPathSetting(): string {
  return vscode.workspace.getConfiguration('vistool').get<string>('pythonPath', '').trim();
}

export function nodePathSetting(): string {
  return vscode.workspace.getConfiguration('vistool').get<string>('nodePath', '').trim();
}

export function stopTimeoutMs(): number {
  const seconds = vscode.workspace.getConfiguration('vistool').get<number>('stopTimeoutSeconds', 30);
  return Math.max(1, seconds) * 1000;
}

export interface TrainerSetupSettings {
  venvFolder: string;
  torchVersion: string;
  torchIndexUrl: string;
}

export function trainerSetupSettings(): TrainerSetupSettings {
  const config = vscode.workspace.getConfiguration('vistool.trainerSetup');
  return {
    venvFolder: config.get<string>('venvFolder', '').trim(),
    torchVersion: config.get<string>('torchVersion', '2.13.0').trim() || '2.13.0',
    torchIndexUrl: config.get<string>('torchIndexUrl', '').trim(),
  };
}

/**
 * The policy the rollout viewer replays training rollouts against (`vistool.viewer.replay*`), or
 * why there is none: the disabled button's tooltip names the setting to change.
 */
export function replayPolicySetting(): ReplayPolicyState {
  const config = vscode.workspace.getConfiguration('vistool.viewer');
  return replayPolicyState(config.get<string>('replayPolicy', ''), {
    settingName: 'the setting vistool.viewer.replayPolicy',
    allowRemoteName: 'the setting vistool.viewer.replayAllowRemote',
    allowRemote: config.get<boolean>('replayAllowRemote', false),
    observationRole: config.get<string>('replayObservationRole', 'tool'),
    apiKeyEnv: config.get<string>('replayApiKeyEnv', 'VISTOOL_POLICY_API_KEY').trim() || 'VISTOOL_POLICY_API_KEY',
  });
}
