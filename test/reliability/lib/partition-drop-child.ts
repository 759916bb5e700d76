// Child process of partition-drop-crash.test.ts: opens a day-partitioned table whose old
// partitions are due to be dropped, writes one row and commits — the commit that drops them (one
// OVERWRITE snapshot per `partition.expiration-batch-size` batch, then snapshot expiration) — and
// kills itself with SIGKILL at a named point inside that commit:
//
//   partition-drop-child.ts <table dir> <point> <n> <open ms> <commit ms>
//
//   none               no kill: prints `counts {"overwrites":…,"removes":…,"batchWrites":[…]}` and
//                      exits 0 (the parent picks the kill points of the other runs from these);
//   after-overwrite n  right after the n-th OVERWRITE snapshot file is created (between batches;
//                      the last one: before snapshot expiration);
//   before-overwrite n at the n-th OVERWRITE snapshot: its manifests and manifest lists are
//                      written, its temporary snapshot file too (whole), the link to its name not;
//   in-batch n:k       before the k-th file write of batch n (a manifest, a manifest list, or an
//                      index manifest written, the rest of the batch not);
//   expire-earliest    in snapshot expiration, before EARLIEST is rewritten;
//   expire-remove n    in snapshot expiration, before the n-th unlink (snapshot files first, then
//                      the manifests and data files no retained snapshot or tag references).
//
// The seam is the store's FileIO (TableOpenOptions.fileIO), as faults.test.ts uses it: the child
// wraps the local one and dies inside the call that reaches the named point; core/lsm has no
// test hook for this. `open ms` / `commit ms` are the table clock when the writer opens and when
// it commits (the drop is due at the commit: its check interval has passed).

import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { ForwardingFileIO, LocalFileIO, Table } from '../../../core/lsm/index.ts';
import { tempNameFor } from '../../../core/lsm/file-io.ts';

export type KillPoint = 'none' | 'after-overwrite' | 'before-overwrite' | 'in-batch' | 'expire-earliest' | 'expire-remove';

/** The row the child commits with the drop (a partition the drop keeps). */
export const CHILD_ROW = { dt: '2026-11-30', k: 99, v: 'child' };

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000); // the signal ends this
  process.stderr.write('SIGKILL did not end the process\n');
  process.exit(4);
}

class KillingFileIO extends ForwardingFileIO {
  /** Set once the writer has opened: the commit's calls are counted from here. */
  armed = false;
  overwrites = 0;
  removes = 0;
  /** writeNew calls per batch (index 0: batch 1, counted from the snapshot before it). */
  batchWrites: number[] = [];
  private inDrop = false;

  constructor(
    private readonly point: KillPoint,
    private readonly n: number,
    private readonly k: number,
  ) {
    super(new LocalFileIO());
  }

  override createAtomic(path: string, data: Uint8Array): boolean {
    if (!this.armed || !/\/snapshot\/snapshot-\d+$/.test(path)) return this.inner.createAtomic(path, data);
    const kind = (JSON.parse(Buffer.from(data).toString('utf8')) as { commitKind?: string }).commitKind;
    if (kind !== 'OVERWRITE') {
      // The commit's own snapshots (APPEND, a COMPACT): the drop's batch 1 starts after them.
      const ok = this.inner.createAtomic(path, data);
      this.inDrop = true;
      this.batchWrites = [0];
      return ok;
    }
    this.overwrites++;
    if (this.point === 'before-overwrite' && this.overwrites === this.n) {
      // Everything of the snapshot but its link: the temporary file is whole and synced.
      const tmp = tempNameFor(path);
      fs.mkdirSync(dirname(tmp), { recursive: true });
      fs.writeFileSync(tmp, data, { flag: 'wx' });
      die();
    }
    const ok = this.inner.createAtomic(path, data);
    if (this.point === 'after-overwrite' && this.overwrites === this.n) die();
    this.batchWrites.push(0);
    return ok;
  }

  override writeNew(path: string, data: Uint8Array): void {
    if (this.armed && this.inDrop && this.overwrites < this.batchWrites.length) {
      const batch = this.batchWrites.length; // 1-based: the batch being written
      const i = ++this.batchWrites[batch - 1]!;
      if (this.point === 'in-batch' && batch === this.n && i === this.k) die();
    }
    this.inner.writeNew(path, data);
  }

  override replaceAtomic(path: string, data: Uint8Array): void {
    if (this.armed && this.point === 'expire-earliest' && this.overwrites > 0 && /\/snapshot\/EARLIEST$/.test(path)) die();
    this.inner.replaceAtomic(path, data);
  }

  override remove(path: string): void {
    if (this.armed && this.overwrites > 0) {
      this.removes++;
      if (this.point === 'expire-remove' && this.removes === this.n) die();
    }
    this.inner.remove(path);
  }
}

function main(): void {
  const [dir, point, nText, openMs, commitMs] = process.argv.slice(2) as [string, KillPoint, string, string, string];
  const [n, k] = nText.split(':').map(Number) as [number, number | undefined];
  const io = new KillingFileIO(point, n, k ?? 0);
  let now = Number(openMs);
  const table = Table.open(dir, { fileIO: io, clock: () => now });
  const w = table.newWriter({ commitUser: 'drop-child', onWarning: (m) => process.stderr.write(`${m}\n`) });
  w.writeRecord(CHILD_ROW);
  now = Number(commitMs);
  io.armed = true;
  const r = w.commit();
  w.close();
  if (point !== 'none') {
    process.stderr.write(`the commit ended without reaching ${point} ${nText} (overwrites ${io.overwrites}, removes ${io.removes})\n`);
    process.exit(3);
  }
  process.stdout.write(`counts ${JSON.stringify({ overwrites: io.overwrites, removes: io.removes, batchWrites: io.batchWrites.slice(0, io.overwrites), dropped: r.partitions?.dropped ?? [] })}\n`);
}

if (process.argv[1] === import.meta.filename) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`${(e as Error).stack}\n`);
    process.exit(2);
  }
}
