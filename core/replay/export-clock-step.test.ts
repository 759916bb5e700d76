// An export over a period in which the site's clock stepped back (a PC that booted with a clock an
// hour fast, then NTP): the journal holds, in order, events received "an hour ahead" and then
// events received within the period. The export took the journal up to the first event received
// after --until and stopped there: the fixture said "0 events" for a period whose journal held
// two, exit 0, and every replay of it ran without them. Now it is refused, naming both events
// and what to do; an until before the step's later events exports as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { DemoEvent } from './demo-events.ts';
import { exportFixture } from './export.ts';
import { defaultScratchParent } from './replay.ts';
import { LiveSite, T0 } from './test-support.ts';

const dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-clock-step-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const resource = (atMs: number, id: string, seq: number): DemoEvent => {
  const envelope = { op: 'r', before: null, after: { resource_id: id, kind: 'team', capability: 'pick', state: 'free', since: new Date(atMs).toISOString() }, source: { module: 'operations', stream: 'resources', seq }, ts_ms: atMs, contract: { name: 'operations.resources', version: 1 } };
  return { topic: 'tilstand/s1/events/operations/resources', payload: Buffer.from(JSON.stringify(envelope)), atMs };
};

it('a period across a step back of the clock is refused, not cut short at the step', async () => {
  const site = new LiveSite();
  try {
    site.receive([resource(T0 + 100, 'R1', 1)]);
    await site.advance(T0 + 30_000);
    // One event journaled while the clock ran an hour fast; then NTP steps it back.
    const fast = resource(T0 + 3_600_000, 'R2', 2);
    const accepted = site.ingestor.accept(fast.topic, fast.payload, fast.atMs);
    site.journal.flush();
    await accepted;
    site.receive([resource(T0 + 50_000, 'R3', 3), resource(T0 + 60_000, 'R4', 4)]);
    await site.advance(T0 + 120_000);
    site.close();

    await expect(exportFixture({ data: site.dir, tag: 'step', atMs: T0 + 20_000, untilMs: T0 + 120_000, out: join(dir, 'refused') })).rejects.toThrow(
      "the site's clock stepped back: the journal's event at position 2 was received at 2026-11-30T07:00:00.000Z, after until (2026-11-30T06:02:00.000Z), " +
        'and a later one, at position 3, at 2026-11-30T06:00:50.000Z, within the period; a fixture holds the journal in order up to until, ' +
        'so it would end before position 2 and leave out what came after it. Export with an until before 2026-11-30T06:00:50.000Z ' +
        '(the period before the step), or once the clock has passed 2026-11-30T07:00:00.000Z',
    );
    // The period before the step's later events: the journal up to the fast one, as before.
    const before = await exportFixture({ data: site.dir, tag: 'step', atMs: T0 + 20_000, untilMs: T0 + 40_000, out: join(dir, 'before') });
    expect([before.events.afterPosition, before.events.count]).toEqual(['1', 0]);
  } finally {
    site.remove();
  }
}, 60_000);
