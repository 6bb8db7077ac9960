/**
 * Where the SFT warm-up's phases begin, for the dashboard's marks. The trainer keeps its schedule
 * in run.json (`sft_schedule`, trainer/vistool_trainer/algorithms/sft_schedule.py): `ends[i]` is
 * where phase i ends, exclusive, in SFT steps from the start of SFT (an empty phase ends where the
 * one before it does); after the last comes the mixture. A phase's mark sits on the metrics row
 * whose `sft/step` is the phase's first step, so it is drawn on whichever x axis the chart uses,
 * and only once that row exists.
 *
 * Pure: reads values it is given, never a file.
 */
import { isRecord } from '../../protocol/guards.js';

/** The phases before the mixture, in the trainer's order (sft_schedule.py PHASES), with the words the marks show. */
export const SFT_PHASES: readonly { name: string; mark: string }[] = [
  { name: 'answers_after_tool', mark: 'sft: answers after tool' },
  { name: 'calls_without_images', mark: 'sft: calls w/o images' },
  { name: 'tool_trajectories', mark: 'sft: tool trajectories' },
];
export const SFT_MIXTURE_MARK = 'sft: mixture';

/** The first SFT step (1-based, as `sft/step` counts) of each phase that has steps, with its mark; [] without a schedule. */
export function sftPhaseStarts(run: unknown): { sftStep: number; stage: string }[] {
  const schedule = isRecord(run) ? run.sft_schedule : null;
  if (!isRecord(schedule) || !Array.isArray(schedule.ends)) return [];
  const ends = schedule.ends;
  if (ends.length !== SFT_PHASES.length || !ends.every((e) => typeof e === 'number' && Number.isInteger(e) && e >= 0)) return [];
  const starts: { sftStep: number; stage: string }[] = [];
  let start = 0;
  ends.forEach((end: number, i) => {
    if (end > start) starts.push({ sftStep: start + 1, stage: SFT_PHASES[i]?.mark ?? `sft: phase ${i + 1}` });
    start = Math.max(start, end);
  });
  starts.push({ sftStep: start + 1, stage: SFT_MIXTURE_MARK });
  return starts;
}

/**
 * The marks on an axis: each start whose row is among the rows (`sftSteps[i]` is row i's
 * `sft/step`, NaN where it has none; `xs[i]` its x), at that row's x.
 */
export function sftPhaseMarks(starts: readonly { sftStep: number; stage: string }[], sftSteps: ArrayLike<number> | null, xs: ArrayLike<number>): { x: number; stage: string }[] {
  if (!sftSteps || starts.length === 0) return [];
  const wanted = new Map(starts.map((s) => [s.sftStep, s.stage]));
  const marks: { x: number; stage: string }[] = [];
  for (let i = 0; i < sftSteps.length; i++) {
    const stage = wanted.get(sftSteps[i] as number);
    const x = xs[i] as number;
    if (stage === undefined || Number.isNaN(x)) continue;
    marks.push({ x, stage });
    wanted.delete(sftSteps[i] as number);
  }
  return marks;
}
