// A restore into a directory whose unfinished-restore mark (`restore-unfinished.json`) does not read
// as one: torn, empty, `null`, or an object whose `site` is not a string. Such a mark cannot say
// whose half copy the warehouse holds. Without --force the restore is refused (InvalidArgument,
// exit 2) naming the file and what --force does, the directory as it was; with --force it goes
// ahead, removes only this site's database folder, and its note says the mark was replaced.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { SyncError } from './errors.ts';
import { readRestoreNote, restoreSite, RESTORE_UNFINISHED, unfinishedRestore } from './restore.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, scanSorted, tempDir, type SiteFixture } from './test-support/site-fixture.ts';
import { shipToDirectory } from './test-support/ship.ts';
import { filesOf } from './test-support/files.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const MARKS: Record<string, string> = {
  torn: '{"site": "8',
  empty: '',
  null: 'null\n',
  'a site that is not a string': JSON.stringify({ site: 86, hq: '/somewhere', startedAtMs: 1 }),
};

let shared: { fx: SiteFixture; hq: string } | undefined;
/** Site 86's tables at a directory HQ (made once). */
async function hqOf86(): Promise<{ fx: SiteFixture; hq: string }> {
  if (shared) return shared;
  const fx = makeSite('86', { rows: 40 });
  const hq = tempDir('hq');
  cleanup.push(fx.data, hq);
  await shipToDirectory(fx.data, fx.site, hq);
  shared = { fx, hq };
  return shared;
}

/**
 * A directory restored from site 86's HQ, then left as a kill leaves it (no note) with `mark` as its
 * unfinished-restore mark, and a folder of another database in its warehouse.
 */
async function withMark(mark: string): Promise<{ data: string; hq: string; fx: SiteFixture; markPath: string }> {
  const { fx, hq } = await hqOf86();
  const data = tempDir('target');
  cleanup.push(data);
  await restoreSite({ dataDir: data, target: new DirectoryTarget(hq), site: fx.site });
  rmSync(join(data, 'restore-note.json'));
  writeFileSync(join(data, 'warehouse', 'site_86.db', 'stock', 'stray-file'), 'not at HQ');
  mkdirSync(join(data, 'warehouse', 'site_85.db'));
  writeFileSync(join(data, 'warehouse', 'site_85.db', 'kept'), 'another database');
  const markPath = join(data, RESTORE_UNFINISHED);
  writeFileSync(markPath, mark);
  return { data, hq, fx, markPath };
}

describe('a restore over an unfinished-restore mark that does not read', () => {
  for (const [what, mark] of Object.entries(MARKS)) {
    it(`${what}: refused without --force, naming the file and what --force does; nothing changes`, async () => {
      const { data, hq, fx, markPath } = await withMark(mark);
      const before = filesOf(data);
      const err = await restoreSite({ dataDir: data, target: new DirectoryTarget(hq), site: fx.site }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SyncError);
      expect((err as SyncError).kind).toBe('InvalidArgument');
      const m = (err as Error).message;
      expect(m).toContain(`${markPath} does not read as an unfinished restore's mark`);
      expect(m).toContain(`restore site 86 here with --force, which replaces the mark and site 86's database folder (${join(data, 'warehouse', 'site_86.db')})`);
      expect(m).toContain('other database folders in the warehouse stay');
      expect(filesOf(data)).toEqual(before);
      // The site's start and `init` name the mark's site as '?' (core/site reads it through this).
      expect(unfinishedRestore(data)).toBe('?');
    }, 60_000);

    it(`${what}: with --force, restores the site, removes only its folder, and the note says the mark was replaced`, async () => {
      const { data, hq, fx, markPath } = await withMark(mark);
      const note = await restoreSite({ dataDir: data, target: new DirectoryTarget(hq), site: fx.site, force: true });
      expect(readRestoreNote(data)).toEqual(note);
      expect(note.unreadableMark).toContain(`${markPath} does not read as an unfinished restore's mark`);
      expect(existsSync(markPath)).toBe(false);
      // This site's folder was removed and copied again; the other database's folder stays.
      expect(existsSync(join(data, 'warehouse', 'site_86.db', 'stock', 'stray-file'))).toBe(false);
      expect(readFileSync(join(data, 'warehouse', 'site_85.db', 'kept'), 'utf8')).toBe('another database');
      expect(scanSorted(new Catalog(join(data, 'warehouse')).getTable({ database: 'site_86', table: 'stock' }))).toEqual(scanSorted(fx.table('stock')));
    }, 60_000);
  }
});
