// A put killed mid-write (kill -9, a power cut) leaves its temporary file `.<name>.<uuid>.tmp` in
// HQ's folder. Readers never take it for data (`list`, and through it `hq sites|tables|tags|scan`;
// Paimon's own readers list `snapshot-*`/`tag-*` only), but nothing removed it: every killed put of
// a large data file left one more partial copy for good. The same site's next put of that key
// removes the leftovers of that key (never another key's, nor a file that is no put's temp).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { runHq } from '../cli/hq.ts';
import { sitePrefix } from '../names.ts';
import { makeSite, tempDir } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { DirectoryTarget } from './directory.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** Runs a put of `key` into `root` in a child process whose body never ends, and kills it (-9) once its temporary file holds bytes. */
async function killedPut(root: string, key: string): Promise<void> {
  const script = `
    import { PassThrough } from 'node:stream';
    import { DirectoryTarget } from ${JSON.stringify(new URL('./directory.ts', import.meta.url).href)};
    const body = new PassThrough();
    body.write(Buffer.alloc(65536, 7));
    setInterval(() => body.write(Buffer.alloc(1024, 7)), 50);
    await new DirectoryTarget(${JSON.stringify(root)}, { writePrefix: 'site_7.db/' }).put(${JSON.stringify(key)}, body, { size: 1 << 30 });
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, sig) => done(sig)));
  const folder = join(root, ...key.split('/').slice(0, -1));
  const deadline = Date.now() + 20_000;
  // A temporary file of this key's name that was not there before, or one that grew.
  const base = `.${key.split('/').pop()}.`;
  const sizes = (): Map<string, number> =>
    new Map(fs.existsSync(folder) ? fs.readdirSync(folder).filter((n) => n.startsWith(base) && n.endsWith('.tmp')).map((n) => [n, fs.statSync(join(folder, n)).size]) : []);
  const before = sizes();
  const writing = () => [...sizes()].some(([n, size]) => size > 0 && before.get(n) !== 0 && (before.get(n) ?? -1) < size);
  while (!writing() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(writing(), `a temporary file of ${key}`).toBe(true);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
}

const temps = (folder: string): string[] => fs.readdirSync(folder).filter((n) => n.endsWith('.tmp'));

describe("a directory HQ with a killed put's temporary files", () => {
  it('reads past them, and the next put of the same key removes them', async () => {
    const fx = makeSite('7', { rows: 10 });
    const root = tempDir('hq');
    dirs.push(fx.data, root);
    await shipToDirectory(fx.data, '7', root);
    const table = join(root, 'site_7.db', 'stock');
    const snapshotDir = join(table, 'snapshot');
    const [latest] = fs.readdirSync(snapshotDir).filter((n) => n.startsWith('snapshot-'));
    // Kills mid-write of a next snapshot's JSON, of a tag's, of a table's first schema, each twice.
    const keys = ['site_7.db/stock/snapshot/snapshot-99', 'site_7.db/stock/tag/tag-hourly-2026120706', 'site_7.db/half/schema/schema-0'];
    for (const key of [...keys, ...keys]) await killedPut(root, key);
    // One leftover per key, however many kills: the next put of that key replaces it.
    for (const key of keys) expect(temps(join(root, ...key.split('/').slice(0, -1))), key).toHaveLength(1);
    const hq = (...args: string[]) => runCli(runHq, [...args, '--hq', root]);
    const sites = await hq('sites', '--json');
    expect([sites.code, JSON.parse(sites.out).map((s: { tables: number }) => s.tables)]).toEqual([0, [3]]);
    expect((await hq('tables', '--site', '7')).out.trim().split('\n').sort()).toEqual(['approval_inbox', 'decision_log', 'stock']);
    const tags = await hq('tags', '--site', '7', '--table', 'stock', '--json');
    expect([tags.code, tags.err, tags.out]).toEqual([0, '', '[]\n']);
    const scan = await hq('scan', '--site', '7', '--table', 'stock');
    expect([scan.code, scan.err, scan.out.trim().split('\n').length]).toEqual([0, '', 10]);
    expect((await new DirectoryTarget(root).list(sitePrefix('7'))).filter((o) => o.key.endsWith('.tmp'))).toEqual([]);

    // The key put again (the step's retry after the restart): no leftover stays.
    const site = new DirectoryTarget(root, { writePrefix: sitePrefix('7') });
    const key = 'site_7.db/stock/bucket-0/data-x.parquet';
    await killedPut(root, key);
    await killedPut(root, 'site_7.db/stock/bucket-0/data-x.parquet.crc'); // another key: its own leftover stays
    await site.put(key, Buffer.from('rows'), { size: 4, sha256: createHash('sha256').update('rows').digest('hex') });
    expect(temps(join(root, 'site_7.db', 'stock', 'bucket-0'))).toEqual(['.data-x.parquet.crc.tmp']);
    expect(fs.readFileSync(join(root, 'site_7.db', 'stock', 'bucket-0', 'data-x.parquet'), 'utf8')).toBe('rows');
    await site.putPointer(keys[0]!, Buffer.from('{}'));
    expect(temps(join(root, 'site_7.db', 'stock', 'snapshot'))).toEqual([]);
  }, 120_000);
});

describe('puts of one key at once in one process', () => {
  it('both succeed: they take turns with the one temporary name', async () => {
    const root = tempDir('hq');
    dirs.push(root);
    const site = new DirectoryTarget(root, { writePrefix: sitePrefix('7') });
    const key = 'site_7.db/stock/snapshot/snapshot-1';
    const bodies = Array.from({ length: 6 }, (_, i) => Buffer.from(`{"id":${i}}`));
    const results = await Promise.allSettled(bodies.map((b) => site.put(key, b, { size: b.length, sha256: createHash('sha256').update(b).digest('hex') })));
    expect(results.map((r) => r.status)).toEqual(bodies.map(() => 'fulfilled'));
    expect(fs.readFileSync(join(root, 'site_7.db', 'stock', 'snapshot', 'snapshot-1'), 'utf8')).toBe('{"id":5}');
    expect(temps(join(root, 'site_7.db', 'stock', 'snapshot'))).toEqual([]);
  });
});
