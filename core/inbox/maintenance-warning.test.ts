// A commit of the inbox's tables stands once its snapshot is made; what its maintenance then
// cannot do (core/lsm `CommitResult.maintenanceError`: a snapshot expiration's unlink failing, a
// full disk during a compaction) is told, not thrown. The inbox's writers gave no `onWarning`, so
// it went out as a process warning, which nobody on a site reads; it goes to the inbox's own
// warnings (the site's log) now.
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Catalog, ForwardingFileIO, localFileIO, LsmError } from '../lsm/index.ts';
import { inboxTest, proposalInput } from './test-support.ts';

const t = inboxTest('tilstand-inbox-maintenance-');

/** Fails every removal of a snapshot file, as a disk gone read-only under the expiration does. */
class NoSnapshotRemovalIO extends ForwardingFileIO {
  override remove(path: string): void {
    if (/\/snapshot\/snapshot-\d+$/.test(path)) throw new LsmError('IOError', `remove ${path} failed: EROFS: read-only file system`, { path });
    super.remove(path);
  }
}

it("tells a commit's failed maintenance to the inbox's warnings, and the submits stand", () => {
  const catalog = new Catalog(join(t.dir, 'warehouse-ro'), { clock: () => t.now, fileIO: new NoSnapshotRemovalIO(localFileIO) });
  const warnings: string[] = [];
  const inbox = t.open({ catalog, onWarning: (m) => warnings.push(m) });
  const processWarnings: string[] = [];
  const onProcessWarning = (w: Error) => processWarnings.push(w.message);
  process.on('warning', onProcessWarning);
  try {
    // Past the 10 snapshots and the hour the tables keep: the next commits expire the oldest.
    for (let i = 0; i < 16; i++) {
      inbox.submit({ runId: `r${i}`, proposals: [proposalInput(`J-${i}`, `r${i}`)], withdrawals: [] });
      t.now += 10 * 60_000;
    }
    expect(inbox.openProposals()).toHaveLength(16);
    expect(warnings.some((w) => /snapshot expiration after it failed.*EROFS/s.test(w)), warnings.join('\n')).toBe(true);
    expect(processWarnings.filter((m) => /EROFS/.test(m))).toEqual([]);
  } finally {
    process.off('warning', onProcessWarning);
  }
});
