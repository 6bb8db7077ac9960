/**
 * The one message protocol between a panel (a web app under webview/) and its host (a VS Code
 * webview panel, `vistool view` in a browser, or a static bundle's page). Every message type is
 * declared once, in the module of its capability under protocol/panel/, and shared by every side,
 * in the GitLens style: commands (panel → host, no answer), requests (panel → host, one typed
 * response), notifications (host → panel). protocol/README.md says how to add one.
 *
 * Design rules (docs/webview-architecture in GitLens):
 * - Notifications carry complete snapshots (all run summaries), never deltas, so a panel that
 *   missed one (hidden, reloading) is whole again after the next.
 * - Bulk data (metric rows, rollout indexes and records) is pulled by the panel with an
 *   explicit range or key; the summary snapshot says how much exists, so a panel can always
 *   tell what it lacks. What a chart draws is shaped by the host (metrics/series: a bounded
 *   number of points per line), so the answer's size does not grow with the run.
 * - Panels persist only navigation and UI state (see webview/shared/host.ts), never data.
 *
 * This file only re-exports the modules for importers that want the whole protocol; nothing under
 * protocol/ imports it.
 */
export * from './panel/messages.js';
export * from './panel/panels.js';
export * from './panel/runs.js';
export * from './panel/metrics.js';
export * from './panel/rollouts.js';
export * from './panel/search.js';
export * from './panel/evaluations.js';
export * from './panel/annotations.js';
export * from './panel/playground.js';
export * from './panel/calls.js';
export * from './panel/replay.js';
export * from './panel/handlers.js';
