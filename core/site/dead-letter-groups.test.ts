// The floor UI's Dead letters screen says where the open letters come from: its list shows the
// oldest few, all of one module's when it floods. `deadLetterGroups` answers the open letters'
// topic-and-reason groups, the largest first, from the running Ingestor: letters not yet committed
// to dead_letters are counted too (the screen would otherwise lag the alarm's count).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEAD_LETTERS_TABLE_NAME, openLetterGroups } from '../ingest/dead-letters.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { session } from './test-support/session.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-letter-groups-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('deadLetterGroups: the open letters by topic and reason, the largest first, those not yet committed included', { timeout: 60_000 }, async () => {
  const data = join(dir, 'd');
  await initDataDir({ data, site: 'north', admin: { name: 'Olav', pin: '1357' } });
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  try {
    const s = session();
    await site.service.call('signIn', { user: 'Olav', secret: '1357' }, s);
    const stock = 'tilstand/north/events/inventory/stock';
    const counts = 'tilstand/north/events/inventory/counts';
    const first = await site.ingestor.accept(stock, Buffer.from('{"not json'));
    await site.ingestor.accept(counts, Buffer.from('{"not json'));
    site.ingestor.commitAll();
    // Not committed yet: two more of stock's, so it is the largest group.
    await site.ingestor.accept(stock, Buffer.from('{"not json'));
    await site.ingestor.accept(stock, Buffer.from('{"not json'));
    const table = site.catalog.getTable({ database: 'site_north', table: DEAD_LETTERS_TABLE_NAME });
    expect(openLetterGroups(table).reduce((n, g) => n + g.count, 0)).toBe(2);
    expect(await site.service.call('deadLetterGroups', {}, s)).toEqual([
      { topic: stock, reason: 'bad_json', count: 3 },
      { topic: counts, reason: 'bad_json', count: 1 },
    ]);
    // A closed letter is not among them.
    site.ingestor.dismissDeadLetters([first], 'Olav', 'a test');
    expect(await site.service.call('deadLetterGroups', {}, s)).toEqual([
      { topic: stock, reason: 'bad_json', count: 2 },
      { topic: counts, reason: 'bad_json', count: 1 },
    ]);
  } finally {
    await site.stop();
  }
});
