/**
 * The trainer's JSON events (docs/ARCHITECTURE.md, contract 3; trainer/vistool_trainer/run/events.py): one
 * object per line on its stdout — started, env (its env server is up), stage, progress (long
 * preparation inside a stage), step, rollouts, checkpoint, eval, warning, finished, failed. This reads a line into a typed event and says it
 * in one line for the run's log channel.
 *
 * Editor-free (unit-tested under plain Node).
 */

export interface TrainerEvent {
  event: string;
  ts?: number;
  [field: string]: unknown;
}

export function parseTrainerEvent(line: string): TrainerEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const event = (value as { event?: unknown }).event;
  return typeof event === 'string' ? (value as TrainerEvent) : null;
}

function number(value: unknown, digits = 3): string | null {
  return typeof value === 'number' && Number.isFinite(value) ? (Number.isInteger(value) ? String(value) : value.toFixed(digits)) : null;
}

/** Metrics worth a glance in a log line, in this order, when present. */
const HEADLINE = ['sft/loss', 'reward/mean', 'acc/mean', 'tool/call_rate', 'actor/kl', 'timing/step_s'];

export function describeTrainerEvent(event: TrainerEvent): string {
  const field = (name: string) => event[name];
  switch (event.event) {
    case 'started':
      return `started ${String(field('name') ?? '')} (pid ${String(field('pid') ?? '?')})${field('resume') ? ', resuming' : ''} in ${String(field('run_dir') ?? '')}`;
    case 'env':
      return `env server ${String(field('url'))} (pid ${String(field('pid') ?? '?')}, log ${String(field('log') ?? '?')})`;
    case 'stage':
      return `stage ${String(field('stage'))}`;
    case 'progress':
      return `${String(field('stage') ?? '?')}: ${String(field('what'))} ${String(field('done'))}/${String(field('total'))}`;
    case 'step': {
      const parts = HEADLINE.flatMap((name) => {
        const text = number(field(name));
        return text === null ? [] : [`${name} ${text}`];
      });
      return `step ${String(field('step'))} (${String(field('stage') ?? '?')})${parts.length ? ': ' + parts.join(', ') : ''}`;
    }
    case 'rollouts':
      return `rollouts of step ${String(field('step'))}: ${String(field('count'))} written to ${String(field('path'))}`;
    case 'checkpoint':
      return `checkpoint ${String(field('path'))}`;
    case 'eval': {
      const metrics = Object.entries(event).filter(([k, v]) => k.startsWith('eval/') && typeof v === 'number');
      return `eval ${String(field('label') ?? field('checkpoint') ?? '')}: ${metrics.map(([k, v]) => `${k.slice(5)} ${number(v)}`).join(', ')}`;
    }
    case 'warning':
      return `warning: ${String(field('message'))}`;
    case 'finished':
      return `finished (${String(field('status') ?? 'finished')})`;
    case 'failed':
      return `failed: ${String(field('error'))}`;
    default:
      return `${event.event}: ${JSON.stringify(event)}`;
  }
}
