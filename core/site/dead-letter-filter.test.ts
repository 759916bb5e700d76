// The Dead letters screen's summary filters its list to one topic-and-reason group: `deadLetters`
// with `topic` and `reason` chooses the letters before the cut at `limit`, so a group of two
// behind another module's flood still shows (the list alone shows only the flood's oldest).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { validateCall } from './api-validate.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { session } from './test-support/session.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-letter-filter-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('deadLetters: topic and reason choose the letters before the limit, and a letter of the filtered list is dismissed by its id', { timeout: 60_000 }, async () => {
  const data = join(dir, 'd');
  await initDataDir({ data, site: 'north', admin: { name: 'Olav', pin: '1357' } });
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  try {
    const s = session();
    await site.service.call('signIn', { user: 'Olav', secret: '1357' }, s);
    const stock = 'tilstand/north/events/inventory/stock';
    const counts = 'tilstand/north/events/inventory/counts';
    // The flood first (oldest), then the two of another topic; one of them committed, one not yet.
    for (let i = 0; i < 5; i++) await site.ingestor.accept(stock, Buffer.from('{"not json'));
    await site.ingestor.accept(counts, Buffer.from('{"not json'));
    site.ingestor.commitAll();
    await site.ingestor.accept(counts, Buffer.from('{"not json'));
    const call = <M extends 'deadLetters'>(m: M, req: unknown) => (validateCall(m, req), site.service.call(m, req as never, s));

    // Unfiltered, the limit shows only the flood.
    expect((await call('deadLetters', { limit: 2 })).map((d) => d.topic)).toEqual([stock, stock]);
    // The group: both of its letters, however many of the flood come first.
    const group = await call('deadLetters', { limit: 2, topic: counts, reason: 'bad_json' });
    expect(group.map((d) => [d.topic, d.reason, d.status])).toEqual([
      [counts, 'bad_json', 'open'],
      [counts, 'bad_json', 'open'],
    ]);
    // A topic alone, a reason alone, and a reason no letter of the topic has.
    expect(await call('deadLetters', { topic: counts })).toHaveLength(2);
    expect(await call('deadLetters', { reason: 'bad_json' })).toHaveLength(7);
    expect(await call('deadLetters', { topic: counts, reason: 'no_binding' })).toEqual([]);

    // While filtered, a letter of the list is dismissed by its id, and the filtered list shows it closed.
    const r = await site.service.call('dismissDeadLetters', { ids: [group[0]!.id], note: 'a test' }, s);
    expect(r).toEqual({ dismissed: 1, notOpen: [] });
    expect((await call('deadLetters', { topic: counts, reason: 'bad_json' })).map((d) => [d.id, d.status])).toEqual([
      [group[1]!.id, 'open'],
      [group[0]!.id, 'dismissed'],
    ]);
    expect((await call('deadLetters', { topic: counts, reason: 'bad_json', status: 'open' })).map((d) => d.id)).toEqual([group[1]!.id]);
  } finally {
    await site.stop();
  }
});

it('deadLetters: a reason outside the closed set and a topic past MQTT’s bound are refused at the boundary', () => {
  expect(() => validateCall('deadLetters', { reason: 'from_the_future' })).toThrow(/request.reason: expected one of too_large, bad_json/);
  expect(() => validateCall('deadLetters', { topic: 'x'.repeat(65_536) })).toThrow(/request.topic: longer than 65535 characters/);
  expect(() => validateCall('deadLetters', { topic: 7 })).toThrow(/request.topic: expected a string/);
  validateCall('deadLetters', { topic: 'tilstand/north/events/inventory/counts', reason: 'no_binding', status: 'open', limit: 10 });
});
