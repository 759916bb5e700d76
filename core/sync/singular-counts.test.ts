// Counts in the sync engine's log and status said in the singular for one ("1 step", not "1 steps";
// "1 attempt"), through the engine on a real site directory and outbox: the steps a new target or a
// take-over drops, the steps of a unit whose tag was removed on the site, the attempts of a step
// failing while HQ answers. (The CLI's lines: cli/singular-counts.test.ts.)
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncEngine, statusOf } from './engine.ts';
import { sitePrefix } from './names.ts';
import { openOutboxDb, Outbox, type NewRow } from './outbox.ts';
import { writeMarker } from './sender.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, tempDir, type SiteFixture } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

function site(id: string): SiteFixture {
  const fx = makeSite(id, { rows: 1 });
  cleanup.push(fx.data);
  return fx;
}

function hqDir(): string {
  const d = tempDir('hq');
  cleanup.push(d);
  return d;
}

/** `n` put steps of `unit` whose source file does not exist. */
const steps = (fx: SiteFixture, unit: string, n: number): NewRow[] =>
  Array.from({ length: n }, (_, k) => ({ unit, phase: 0, op: 'put', priority: 0, src: join(fx.data, `gone-${k}.parquet`), key: `${sitePrefix(fx.site)}stock/gone-${k}.parquet` }));

/** Runs `f` on the site's outbox (site.db), closed before the engine opens it. */
function withOutbox(fx: SiteFixture, f: (o: Outbox) => void): void {
  const db = openOutboxDb(join(fx.data, 'site.db'));
  try {
    f(new Outbox(db));
  } finally {
    db.close();
  }
}

function engine(fx: SiteFixture, hq: string, log: (l: string) => void, extra: Partial<ConstructorParameters<typeof SyncEngine>[0]> = {}): SyncEngine {
  return new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null, log, ...extra });
}

describe('the sync engine says one step, one attempt', () => {
  it('a new target: "1 step of the old one dropped", "2 steps …"', async () => {
    for (const [id, n, said] of [['one-target', 1, '1 step'], ['two-targets', 2, '2 steps']] as const) {
      const fx = site(id);
      const [a, b] = [hqDir(), hqDir()];
      withOutbox(fx, (o) => {
        o.setState('target', `dir:${a}`);
        o.add(steps(fx, 'tag:stock:old', n), Date.now());
      });
      const lines: string[] = [];
      const e = engine(fx, b, (l) => lines.push(l));
      await e.close();
      expect(lines).toEqual([`sync: the target changed from dir:${a} to dir:${b}: ${said} of the old one dropped; everything is sent again`]);
    }
  });

  it('a take-over: "1 step and the record of what HQ holds dropped", "2 steps …"', async () => {
    for (const [id, n, said] of [['one-take', 1, '1 step'], ['two-takes', 2, '2 steps']] as const) {
      const fx = site(id);
      const hq = hqDir();
      await writeMarker(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), fx.site, { sender: 'the-old-pc', dataDir: '/srv/old', sinceMs: Date.now() - 60_000, by: 'first send' });
      withOutbox(fx, (o) => o.add(steps(fx, 'tag:stock:old', n), Date.now()));
      const lines: string[] = [];
      const e = engine(fx, hq, (l) => lines.push(l), { takeOver: true });
      try {
        await e.enqueueSnapshotSync();
      } finally {
        await e.close();
      }
      expect(lines.filter((l) => l.includes('took'))).toEqual([
        `sync: this directory took HQ's prefix over from sender the-old-pc: ${said} and the record of what HQ holds dropped; planning asks HQ again`,
      ]);
    }
  });

  it('a unit whose tag was removed on the site: "cancelled (1 step)", "(2 steps)"', async () => {
    for (const [id, n, said] of [['one-gone', 1, '1 step'], ['two-gone', 2, '2 steps']] as const) {
      const fx = site(id);
      withOutbox(fx, (o) => o.add(steps(fx, 'tag:stock:removed', n), Date.now()));
      const lines: string[] = [];
      const e = engine(fx, hqDir(), (l) => lines.push(l));
      try {
        await e.runOnce();
      } finally {
        await e.close();
      }
      expect(lines.filter((l) => l.includes('cancelled'))).toEqual([`sync: tag:stock:removed cancelled (${said}): tag removed on the site before it reached HQ`]);
    }
  });

  it('a step failing while HQ answers: "(1 attempt)", "(2 attempts)"', () => {
    for (const [id, n, said] of [['one-attempt', 1, '1 attempt'], ['two-attempts', 2, '2 attempts']] as const) {
      const fx = site(id);
      const sinceMs = Date.UTC(2026, 11, 5, 7, 40);
      withOutbox(fx, (o) => {
        o.add(steps(fx, 'snapshot:stock:3', 1), sinceMs);
        const row = o.rows()[0]!;
        for (let k = 0; k < n; k++) o.markFailed(row.id, 'Verification: size 10 at HQ, 12 here', sinceMs + 1_000);
        o.setState('stuckStep', JSON.stringify({ id: row.id, sinceMs }));
        const s = statusOf(o, sinceMs + 3_600_000, 600_000);
        expect(s.lastError).toContain(`${row.key} has failed since 2026-12-05T07:40:00.000Z while HQ took other requests (${said}): Verification: size 10 at HQ, 12 here`);
      });
    }
  });
});
