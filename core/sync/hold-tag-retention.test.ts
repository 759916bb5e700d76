// A snapshot's hold tag (`sync-N`, DESIGN.md "Snapshot hold") keeps its files on the site until
// HQ has them, however long the line is down. A table may carry `tag.default-time-retained`
// (ALTER accepts it; Paimon applies it to a tag made without a retention): the hold must not take
// it, or the files could go while the unit still waits to send them.

import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { holdTagName } from './names.ts';
import { SyncError } from './errors.ts';
import { faultyTarget, healthSite } from './test-support/health-site.ts';
import { writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterEach(() => {
  for (const d of cleanup.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('hold tags and a table default tag retention', () => {
  it('a hold tag is kept until released, whatever tag.default-time-retained the table has', async () => {
    const h = healthSite('hold-ret', cleanup, {
      rows: 10,
      // HQ is unreachable: the unit stays pending and its hold tag with it.
      target: (inner) => faultyTarget(inner, () => {
        throw new SyncError('Transport', 'line down');
      }),
    });
    const stock = h.fx.table('stock');
    stock.alter([{ kind: 'setOption', key: 'tag.default-time-retained', value: '1 h' }]);
    writeStock(h.fx, 10, 12, 2);
    const e = h.open();
    try {
      await e.enqueueSnapshotSync();
      await e.runOnce();
      const latest = h.fx.table('stock').latestSnapshot()!;
      const hold = h.fx.table('stock').tags.get(holdTagName(latest.id));
      expect(hold.retainedMillis).toBeUndefined();
      // The table's default still applies to a tag made without a retention (Paimon's rule).
      expect(h.fx.table('stock').createTag('manual').retainedMillis).toBe(3_600_000);
    } finally {
      await e.close();
    }
  });
});
