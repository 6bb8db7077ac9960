/**
 * Every command id the extension registers, in one place: package.json `contributes.commands`
 * lists the same ids (a unit test checks that the two agree).
 */
export const Commands = {
  newRunConfig: 'vistool.newRunConfig',
  startRun: 'vistool.startRun',
  stopRun: 'vistool.stopRun',
  resumeRun: 'vistool.resumeRun',
  openDashboard: 'vistool.openDashboard',
  openRolloutViewer: 'vistool.openRolloutViewer',
  openPlayground: 'vistool.openPlayground',
  openReport: 'vistool.openReport',
  generateTasks: 'vistool.generateTasks',
  evaluateCheckpoint: 'vistool.evaluateCheckpoint',
  checkTrainerEnvironment: 'vistool.checkTrainerEnvironment',
  selectPythonInterpreter: 'vistool.selectPythonInterpreter',
  setUpTrainerEnvironment: 'vistool.setUpTrainerEnvironment',
  setUpVerlEnvironment: 'vistool.setUpVerlEnvironment',
  checkVerlEnvironment: 'vistool.checkVerlEnvironment',
  showRunLog: 'vistool.showRunLog',
  revealRun: 'vistool.revealRun',
  deleteRun: 'vistool.deleteRun',
  openSample: 'vistool.openSample',
  refreshRuns: 'vistool.refreshRuns',
  refreshDatasets: 'vistool.refreshDatasets',
  refreshConfigs: 'vistool.refreshConfigs',
} as const;

export type CommandId = (typeof Commands)[keyof typeof Commands];
