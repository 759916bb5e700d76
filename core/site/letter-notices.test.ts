// The running site tells a module of its own dead letters (core/ingest letter-notices.ts): a
// module's event its contract refuses reaches the module's ModuleClient as a notice once the
// letter is committed. Site on 127.0.0.1, ports 0.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEAD_LETTERS_TABLE_NAME, deadLettersAt, type DeadLetter } from '../ingest/dead-letters.ts';
import type { DeadLetterNotice } from '../ingest/letter-notices.ts';
import { ModuleClient } from '../ingest/module-client/index.ts';
import { Catalog } from '../lsm/index.ts';
import { dataPaths } from './config.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-letters-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

it("tells the module that sent it of a dead letter, once the letter is committed to dead_letters", async () => {
  const data = join(dir, 'd');
  await initDataDir({ data, site: 'letters1', scrypt: { N: 1024, r: 8, p: 1 } });
  const p = dataPaths(data, 'letters1');
  const secrets = JSON.parse(readFileSync(p.moduleSecrets, 'utf8')) as { modules: Record<string, { username: string; password: string }> };
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  const got: { notice: DeadLetterNotice; onDisk: DeadLetter | undefined }[] = [];
  const inv = new ModuleClient({
    url: site.mqttUrl,
    site: 'letters1',
    module: 'inventory',
    ...secrets.modules.inventory!,
    outboxPath: join(dir, 'inventory-outbox.db'),
    onWarning: () => undefined,
    onDeadLetter: (notice) => {
      // What another reader of the directory sees: the letter is on disk.
      const table = new Catalog(p.warehouse).getTable({ database: p.database!, table: DEAD_LETTERS_TABLE_NAME });
      got.push({ notice, onDisk: notice.kind === 'letter' ? deadLettersAt(table, [BigInt(notice.letter)])[0] : undefined });
    },
  });
  try {
    await inv.connected();
    const { seq } = await inv.publish('stock', 'c', null, { item: 'A-1', location: 'L1', qty: 'three' }, { name: 'inventory.stock', version: 1 });
    // The site's tick commits dead_letters within its budget (2 s by default).
    const end = Date.now() + 15_000;
    while (got.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(got).toHaveLength(1);
    const [letter] = site.ingestor.listDeadLetters();
    expect(got[0]!.notice).toMatchObject({ kind: 'letter', module: 'inventory', stream: 'stock', seq, reason: 'contract_violation', letter: letter!.position.toString() });
    expect(got[0]!.onDisk?.status).toBe('open');
    // /metrics counts what modules were told.
    const metrics = site.metrics();
    expect(metrics).toContain('tilstand_ingest_letter_notices_total{site="letters1",kind="letter"} 1');
    expect(metrics).toContain('tilstand_ingest_letter_notices_total{site="letters1",kind="summary"} 0');
    expect(metrics).toContain('tilstand_ingest_letters_unannounced_total{site="letters1"} 0');
  } finally {
    await inv.close();
    await site.stop();
  }
}, 30_000);
