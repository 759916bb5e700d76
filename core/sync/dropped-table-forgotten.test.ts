// The engine keeps its tables from round to round (core/lsm KeptTables, `openTables`), and asks it
// only for the tables the database lists. KeptTables forgot a table only when asked for one that
// is gone, so a table dropped on the site (the CLI's drop, another process) was never asked for
// again and its Table — every tag it had parsed, its cached manifests — stayed held for the
// engine's life. Each round now keeps only the tables it listed (`KeptTables.retain`).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Catalog, type KeptTables } from '../lsm/index.ts';
import { SyncEngine } from './engine.ts';
import { sitePrefix } from './names.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, tempDir } from './test-support/site-fixture.ts';

it('a table dropped on the site is no longer held by the engine after its next round of openTables', async () => {
  const fx = makeSite('91', { rows: 20 });
  const hq = tempDir('hq');
  try {
    const db = `site_${fx.site}`;
    const other = new Catalog(join(fx.data, 'warehouse'));
    const t = other.createTable({ database: db, table: 'scratch' }, { fields: [{ name: 'k', type: 'STRING NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
    const w = t.newWriter();
    w.writeRecord({ k: 'a' });
    w.commit();
    w.close();
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null });
    try {
      const kept = () => (e as unknown as { kept: KeptTables }).kept.keptNames();
      expect(e.openTables().has('scratch')).toBe(true);
      expect(kept()).toContain('scratch');
      other.dropTable({ database: db, table: 'scratch' });
      expect(e.openTables().has('scratch')).toBe(false);
      expect(kept(), 'the dropped table is forgotten').not.toContain('scratch');
      expect(kept().length, 'the listed tables stay kept').toBe(e.openTables().size);
    } finally {
      await e.close();
    }
  } finally {
    rmSync(fx.data, { recursive: true, force: true });
    rmSync(hq, { recursive: true, force: true });
  }
});
