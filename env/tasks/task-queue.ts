/**
 * A thread's tasks, made in batches: a batch's first attempts are built up front and every glyph
 * they need that the cache lacks is drawn in one sharp call (while the previous batch's last
 * tasks are made), then the tasks are made two at a time. A call costs about a millisecond before its first glyph, and while the cache is cold
 * most tasks need a few new glyphs: one call per batch instead of one per task is most of what
 * a short run spends warming up. Batching changes no task (a raster is the same whichever call
 * draws it), only how many calls draw them.
 */
import { loadGlyphs } from './glyph-cache.js';
import { sceneGlyphs } from './label-map.js';
import { buildFirstAttempt, makeTask, type FirstAttempt, type MadeTask, type TaskPlan } from './make-task.js';

/** Tasks whose glyphs are drawn together. */
export const BATCH = 16;

/** Tasks a thread makes at once: one's JavaScript runs while another's pixels are rasterised or encoded. */
export const IN_FLIGHT = 2;

interface Queued {
  plan: TaskPlan;
  resolve: (made: MadeTask) => void;
  reject: (err: unknown) => void;
}

interface Ready extends Queued {
  first: FirstAttempt;
}

export class TaskQueue {
  private readonly waiting: Queued[] = [];
  private readonly ready: Ready[] = [];
  private preparing: Promise<void> | null = null;
  private lanes = 0;

  constructor(private readonly maxAttempts: number) {}

  make(plan: TaskPlan): Promise<MadeTask> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ plan, resolve, reject });
      // Requests made in the same turn of the event loop join one batch.
      if (this.lanes === 0) setImmediate(() => this.startLanes());
    });
  }

  private startLanes(): void {
    while (this.lanes < IN_FLIGHT && this.waiting.length + this.ready.length > 0) {
      this.lanes++;
      void this.lane().finally(() => {
        this.lanes--;
        if (this.waiting.length > 0) this.startLanes();
      });
    }
  }

  private async lane(): Promise<void> {
    for (;;) {
      if (this.ready.length === 0) {
        if (this.waiting.length === 0 && !this.preparing) return;
        await this.prepare();
        continue;
      }
      const task = this.ready.shift() as Ready;
      // The next batch's glyphs are drawn while this batch's last tasks are made.
      if (this.ready.length < IN_FLIGHT && this.waiting.length > 0) void this.prepare();
      await makeTask(task.plan, this.maxAttempts, task.first).then(task.resolve, task.reject);
    }
  }

  /** Builds the next batch's first attempts and draws the glyphs they lack, once however many lanes ask. */
  private prepare(): Promise<void> {
    this.preparing ??= (async () => {
      const batch = this.waiting.splice(0, BATCH);
      const firsts = batch.map((q) => buildFirstAttempt(q.plan));
      try {
        await loadGlyphs(firsts.flatMap((f) => ('built' in f ? sceneGlyphs(f.built.scene) : [])));
        batch.forEach((q, i) => this.ready.push({ ...q, first: firsts[i] as FirstAttempt }));
      } catch (err) {
        for (const q of batch) q.reject(err);
      }
    })().finally(() => {
      this.preparing = null;
    });
    return this.preparing;
  }
}
