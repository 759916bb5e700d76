// `tilstand hq pull --out <a site's data directory, or its warehouse>`: the pull makes the copy
// HQ's — it removes the snapshot JSON HQ does not have and writes HQ's snapshot, tag and schema
// files over those of the same name — so pulled into a live site's own warehouse it rolled the
// site's tables back to what HQ last got (with --force; without it the site's newer commits were
// refused as "own writes", exit 3, as if the warehouse were an analyst's), and into the data
// directory itself it made a site_<id>.db beside site.db. Refused now, exit 2, nothing written,
// also through a symbolic link and on a folder inside the data directory.
import { mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, tempDir, writeStock } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-pull-into-site-'));
const cleanup: string[] = [dir];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** Every file under `root` with its size and modification time. */
function files(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        out.push(`${relative(root, p)} ${s.size} ${s.mtimeMs}`);
      }
    }
  };
  walk(root);
  return out.sort();
}

describe("hq pull --out <a site's data directory or its warehouse>", () => {
  it('is refused, exit 2, naming the data directory, and the site\'s tables stay as they were', async () => {
    const fx = makeSite('live', { rows: 20 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir); // site.db: the outbox, as on a site that syncs
    // The site commits on after HQ got its copy.
    writeStock(fx, 20, 30, 2);
    const before = files(join(fx.data, 'warehouse'));
    const rows = fx.table('stock').scanRows({});
    const link = join(dir, 'wh-link');
    symlinkSync(join(fx.data, 'warehouse'), link);
    const dataLink = join(dir, 'data-link');
    symlinkSync(fx.data, dataLink);
    for (const out of [join(fx.data, 'warehouse'), fx.data, link, join(dataLink, 'warehouse'), join(fx.data, 'warehouse', 'site_live.db'), join(fx.data, 'pulled')]) {
      for (const force of [[], ['--force']]) {
        const r = await runCli(runHq, ['pull', '--hq', hqDir, '--site', 'live', '--out', out, ...force]);
        expect([r.code, r.out], `${out} ${force}`).toEqual([2, '']);
        expect(r.err, out).toMatch(/^tilstand: option '--out': .* (is the site data directory .* itself|is the warehouse of the site data directory |is inside the site data directory ).*; pull into a warehouse outside it\n$/);
        expect(r.err.includes(fx.data) || r.err.includes(dataLink), out).toBe(true);
      }
    }
    expect(files(join(fx.data, 'warehouse'))).toEqual(before);
    expect(fx.table('stock').scanRows({})).toEqual(rows);
    expect(readdirSync(fx.data).sort()).toEqual(['config.json', 'contracts', 'site.db', 'warehouse'].concat(readdirSync(fx.data).filter((n) => n.startsWith('site.db-'))).sort());
    // A warehouse beside the data directory, not in it, is pulled into as before.
    const ok = await runCli(runHq, ['pull', '--hq', hqDir, '--site', 'live', '--out', join(dir, 'copy')]);
    expect(ok.code, ok.err).toBe(0);
  }, 60_000);
});
