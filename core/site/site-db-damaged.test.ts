// A site.db that is damaged (a disk fault, a copy cut short): SQLite's words name no file ("file
// is not a database"), and `tilstand start` said only "site north did not start: file is not a
// database" — the operator could not tell site.db from journal.db (which is named) or a table's
// file. The start now names the file as the other commands do, still as damage (exit 4).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { exitCodeOf } from './cli/exit-code.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-db-damaged-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('a site.db that is no database is named at start, as damage (exit 4)', async () => {
  const data = join(dir, 'site');
  await initDataDir({ data, site: 'north', scrypt: FAST });
  const file = join(data, 'site.db');
  rmSync(`${file}-wal`, { force: true });
  rmSync(`${file}-shm`, { force: true });
  writeFileSync(file, Buffer.alloc(4096, 0x5a));
  const lines: string[] = [];
  const err = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) }).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  // As `tilstand users`, `status` and the other commands say it (core/sync cli/common.ts damageIn).
  expect(err?.message).toBe(`corruption in ${file}: file is not a database`);
  expect(exitCodeOf(err)).toBe(4);
  expect(lines.at(-1)).toBe(`site north did not start: corruption in ${file}: file is not a database`);
}, 60_000);
