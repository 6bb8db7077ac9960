/**
 * Makes a veRL recipe's missing data: the commands the export lists as its next steps (tasks with
 * the bundled CLI when the config generates them, then `vistool_verl data convert --to verl` into
 * train.parquet and val.parquet), run from the vistool folder with the veRL environment's python
 * in place of `python3` and the extension's bridge on PYTHONPATH. The commands are the export's
 * own, shell-quoted there; nothing here comes from a model or a user's text.
 */
import type * as vscode from 'vscode';
import { shellWord } from '../../env/config/verl-export.js';
import { runCommand } from '../processes/command-runner.js';
import { bridgeEnv } from './bridge-path.js';

export interface RecipeDataInput {
  extensionPath: string;
  python: string;
  /** The folder the export's commands are written for (bin/vistool.js, verl_bridge/). */
  repoRoot: string;
  steps: string[];
  log: vscode.LogOutputChannel;
}

/** The export's next step as it runs here: `python3` is the veRL environment's interpreter. */
export function recipeDataCommand(step: string, python: string): string {
  return step.startsWith('python3 ') ? `${shellWord(python)} ${step.slice('python3 '.length)}` : step;
}

export async function makeRecipeData(input: RecipeDataInput): Promise<boolean> {
  for (const step of input.steps) {
    const line = recipeDataCommand(step, input.python);
    input.log.info(`$ ${line}`);
    const result = await runCommand(
      { command: 'bash', args: ['-c', line], cwd: input.repoRoot, env: bridgeEnv(input.extensionPath) },
      { onStdoutLine: (l) => input.log.info(l), onStderrLine: (l) => input.log.warn(l) },
    ).catch((err: Error) => ({ code: null, stderr: err.message }));
    if (result.code !== 0) {
      input.log.error(`the recipe's data step failed (exit ${result.code ?? 'signal'}): ${line}`);
      return false;
    }
  }
  return true;
}
