// Runs writers' deferred compactions (WriterOptions.compaction 'deferred') in slices on the event
// loop: after a commit that planned one, a slice of `sliceMs` runs from `setImmediate`, and the
// next after the loop has turned again, so the I/O and timers that came meanwhile (an MQTT
// client's PUBACK, an HTTP request) go first. One chain per writer; `stop()` ends them all (the
// owner closing; the writers then give their compactions up when closed).
//
// Concurrency: the owner's thread; a slice runs only between the owner's other callbacks.

import type { TableWriter } from '../table-writer.ts';

export interface SlicerHooks {
  /** A slice committed the compaction (its COMPACT snapshot). */
  committed?: (snapshotId: number) => void;
  /** A slice failed: the compaction was given up (TableWriter.compactStep), and no more slices run for it. */
  failed: (e: unknown) => void;
}

export class CompactionSlicer {
  private readonly scheduled = new Map<TableWriter, SlicerHooks>();
  private stopped = false;

  constructor(private readonly sliceMs: number) {
    if (!(sliceMs > 0)) throw new RangeError(`sliceMs: expected a positive number of milliseconds, got ${sliceMs}`);
  }

  /** After a commit of `w`: runs its planned compaction in slices, unless a slice is already due. */
  after(w: TableWriter, hooks: SlicerHooks): void {
    if (this.stopped || !w.compacting || this.scheduled.has(w)) return;
    this.scheduled.set(w, hooks);
    setImmediate(() => this.slice(w));
  }

  /** No slice runs from now on. */
  stop(): void {
    this.stopped = true;
    this.scheduled.clear();
  }

  private slice(w: TableWriter): void {
    const hooks = this.scheduled.get(w);
    this.scheduled.delete(w);
    if (this.stopped || !hooks) return;
    let r;
    try {
      r = w.compactStep(this.sliceMs);
    } catch (e) {
      hooks.failed(e);
      return;
    }
    if (r.snapshotId !== undefined) hooks.committed?.(r.snapshotId);
    if (!r.done) this.after(w, hooks);
  }
}
