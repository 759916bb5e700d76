// `tilstand hq diff` between any two points HQ holds, not only two tags: each side a tag, a
// snapshot id or a time (`--from|--from-snapshot|--from-at`, `--to|--to-snapshot|--to-at`), the
// to side left out for the latest. A time is read as `hq scan --at` reads it (the newest state HQ
// holds at or before it, named on stderr); a snapshot id HQ holds only as a tag reads the tag; an
// id HQ does not hold says it expired. Before, only `--from <tag> --to <tag>` was taken.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RowKind } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, writeStock, type SiteFixture } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-diff-'));
const hqDir = join(dir, 'hq');
const hq = (...args: string[]) => runCli((argv, io) => runHq(argv, io), [args[0]!, '--hq', hqDir, ...args.slice(1)]);
const stock = ['--site', 'north', '--table', 'stock'];
let fx: SiteFixture;
/** Snapshot id and commit time of each state, on the site. */
const at = new Map<'morning' | 'between' | 'noon' | 'latest', { id: number; ms: number }>();
const iso = (ms: number) => new Date(ms).toISOString();
const kinds = (jsonl: string) => jsonl.trim().split('\n').map((l) => { const r = JSON.parse(l) as { _kind: string; item: string }; return `${r._kind} ${r.item}`; });

/** Waits for the clock's next millisecond, so two commits have different times (bounded: 1 ms). */
function nextMs(): void {
  const t = Date.now();
  for (let i = 0; i < 1e8 && Date.now() === t; i++);
}

function write(rows: [string, number][], kind: RowKind): void {
  const w = fx.table('stock').newWriter();
  try {
    for (const [item, qty] of rows) w.write([item, 'loc-0', qty, `note ${item}`], kind);
    w.commit();
  } finally {
    w.close();
  }
}

beforeAll(async () => {
  fx = makeSite('north', { rows: 5 });
  const t = fx.table('stock');
  const mark = (name: 'morning' | 'between' | 'noon' | 'latest') => {
    const s = t.latestSnapshot()!;
    at.set(name, { id: s.id, ms: s.timeMillis });
  };
  // morning (tagged) → between (an update, not tagged: HQ never gets it) → noon (tagged) → latest.
  mark('morning');
  t.createTag('morning');
  nextMs();
  write([['item-1', 99]], RowKind.INSERT);
  mark('between');
  nextMs();
  writeStock(fx, 5, 7, 2);
  mark('noon');
  t.createTag('noon');
  nextMs();
  write([['item-2', 2]], RowKind.DELETE);
  writeStock(fx, 7, 8, 3);
  mark('latest');
  await shipToDirectory(fx.data, fx.site, hqDir);
}, 60_000);
afterAll(() => {
  rmSync(fx.data, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('tilstand hq diff between any two points', () => {
  it('takes snapshot ids: a tagged one reads its tag, the latest itself (were unknown options, exit 2)', async () => {
    const byTag = await hq('diff', ...stock, '--from', 'morning', '--to', 'noon');
    expect([byTag.code, byTag.err]).toEqual([0, '']);
    expect(kinds(byTag.out)).toEqual(['-U item-1', '+U item-1', '+I item-5', '+I item-6']);
    const byId = await hq('diff', ...stock, '--from-snapshot', String(at.get('morning')!.id), '--to-snapshot', String(at.get('noon')!.id));
    expect([byId.code, byId.err, byId.out]).toEqual([0, '', byTag.out]);
    const toLatest = await hq('diff', ...stock, '--from-snapshot', String(at.get('noon')!.id), '--to-snapshot', String(at.get('latest')!.id), '--format', 'csv');
    expect([toLatest.code, toLatest.err]).toEqual([0, '']);
    expect(toLatest.out.trim().split('\n').map((l) => l.split(',').slice(0, 2).join(' '))).toEqual(['_kind item', '-D item-2', '+I item-7']);
    // A snapshot id given where a tag is asked, no tag being named so: read as --from-snapshot
    // reads it (it was called expired, HQ holding the snapshot only by its tag).
    const plain = await hq('diff', ...stock, '--from', String(at.get('morning')!.id), '--to', String(at.get('noon')!.id));
    expect([plain.code, plain.err, plain.out]).toEqual([0, '', byTag.out]);
  });

  it('takes times, each read as `hq scan --at` reads it, and names on stderr the state read', async () => {
    const morning = at.get('morning')!;
    const noon = at.get('noon')!;
    // "Between 08:00 and 12:00": here the two tags' commit times, one as ISO text, one as epoch ms.
    const r = await hq('diff', ...stock, '--from-at', iso(morning.ms), '--to-at', String(noon.ms));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe((await hq('diff', ...stock, '--from', 'morning', '--to', 'noon')).out);
    expect(r.err).toBe(
      `tilstand: --from-at ${iso(morning.ms)}: reading tag morning (snapshot ${morning.id}, committed ${iso(morning.ms)}), the newest state HQ holds at or before that time\n` +
        `tilstand: --to-at ${iso(noon.ms)}: reading tag noon (snapshot ${noon.id}, committed ${iso(noon.ms)}), the newest state HQ holds at or before that time\n`,
    );
    // At the untagged commit in between HQ holds only the morning's state: it says so.
    const between = await hq('diff', ...stock, '--from-at', iso(at.get('between')!.ms), '--to', 'noon');
    expect([between.code, between.out]).toEqual([0, r.out]);
    expect(between.err).toContain(`: reading tag morning (snapshot ${morning.id}, committed ${iso(morning.ms)})`);
  });

  it('diffs to the latest snapshot HQ holds when the to side is left out', async () => {
    const latest = at.get('latest')!;
    const r = await hq('diff', ...stock, '--from-at', iso(at.get('noon')!.ms));
    expect(r.code, r.err).toBe(0);
    expect(kinds(r.out)).toEqual(['-D item-2', '+I item-7']);
    expect(r.out).toBe((await hq('diff', ...stock, '--from', 'noon', '--to-snapshot', String(latest.id))).out);
    // A time after the latest commit reads the latest, said as such: an empty diff.
    const now = await hq('diff', ...stock, '--from-at', iso(latest.ms + 60_000));
    expect([now.code, now.out]).toEqual([0, '']);
    expect(now.err).toMatch(/^tilstand: --from-at .*: reading the latest synced snapshot \(snapshot \d+, committed .*\), the newest state HQ holds at or before that time\n$/);
    const fromTag = await hq('diff', ...stock, '--from', 'morning');
    expect([fromTag.code, kinds(fromTag.out)]).toEqual([0, ['-U item-1', '+U item-1', '-D item-2', '+I item-5', '+I item-6', '+I item-7']]);
  });

  it('refuses two forms of one side, or no from side, naming the options (exit 2, before HQ is read)', async () => {
    const cases: [string[], string][] = [
      [['--from', 'morning', '--from-at', '2026-12-05T08:00:00Z'], "give one of --from, --from-snapshot, --from-at for 'hq diff' (got --from and --from-at)"],
      [['--from', 'morning', '--to-snapshot', '3', '--to-at', '2026-12-05T12:00:00Z'], "give at most one of --to, --to-snapshot, --to-at for 'hq diff' (got --to-snapshot and --to-at)"],
      [['--to', 'noon'], "option '--from' <tag>, '--from-snapshot' <id> or '--from-at' <ISO time> is required for 'hq diff'"],
      [['--from-at', 'eight'], "option '--from-at': expected an ISO-8601 time such as 2024-05-01T12:00:00Z (or epoch milliseconds), got 'eight'"],
    ];
    for (const [args, message] of cases) {
      const r = await hq('diff', ...stock, ...args);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', `tilstand: ${message}\n`]);
    }
  });

  it('says a snapshot HQ does not hold expired, and a time before every state HQ holds is not found: exit 1, no stack, nothing on stdout', async () => {
    const between = at.get('between')!.id;
    // The last, `--to <id>`, was taken before: its error did not say what HQ holds.
    for (const args of [['--from-snapshot', String(between)], ['--from', 'morning', '--to-snapshot', String(between), '--format', 'csv'], ['--from', 'morning', '--to', String(between), '--format', 'csv']]) {
      const r = await hq('diff', ...stock, ...args);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([
        1,
        '',
        `tilstand: snapshot ${between} has expired; diff needs both states (use a tag to keep one); HQ keeps the latest synced snapshot and the tags (\`tilstand hq tags\` lists them with their snapshot ids)\n`,
      ]);
    }
    const ahead = await hq('diff', ...stock, '--from', 'morning', '--to-snapshot', '999');
    expect([ahead.code, ahead.out, ahead.err]).toEqual([1, '', `tilstand: snapshot 999 of site_north.stock does not exist (the latest HQ holds is ${at.get('latest')!.id})\n`]);
    const early = at.get('morning')!.ms - 1;
    const before = await hq('diff', ...stock, '--from-at', String(early));
    expect([before.code, before.out, before.err]).toEqual([
      1,
      '',
      `tilstand: no snapshot of site_north.stock at or before ${iso(early)} (--from-at); HQ keeps the latest synced snapshot and the tags, and none of them is that old (\`tilstand hq tags\` lists the tags with their times)\n`,
    ]);
  });
});
