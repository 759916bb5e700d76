// restore-note.json is replaced whole (temp file, fsync, rename): a restore killed while it
// writes the note leaves the previous note readable, not a torn one the site's next start would
// fail to parse (core/site/init.ts refuses an unreadable note).

import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncEngine } from './engine.ts';
import { readRestoreNote, restoreSite, RESTORE_NOTE } from './restore.ts';
import { sitePrefix } from './names.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, tempDir } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('restore-note.json', () => {
  it('a restore killed in the middle of writing the note leaves the previous note whole', async () => {
    const fx = makeSite('71', { rows: 20 });
    const hq = tempDir('hq');
    const fresh = tempDir('fresh');
    cleanup.push(fx.data, hq, fresh);
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), scheduledTags: null });
    await e.syncNow(5);
    await e.close();
    const first = await restoreSite({ dataDir: fresh, target: new DirectoryTarget(hq), site: fx.site, clock: () => 1 });
    expect(readRestoreNote(fresh)).toEqual(first);

    // Again with --force in a child that dies (SIGKILL) after half of the note's bytes: every
    // write whose file is named after the note (the note itself, or a temp file beside it) is cut.
    const script = `
      import fs from 'node:fs';
      import { syncBuiltinESMExports } from 'node:module';
      const NOTE = ${JSON.stringify(RESTORE_NOTE)};
      const named = new Map();
      const open = fs.openSync, write = fs.writeSync, writeFile = fs.writeFileSync;
      const die = () => process.kill(process.pid, 'SIGKILL');
      fs.openSync = (p, ...rest) => { const fd = open(p, ...rest); named.set(fd, String(p)); return fd; };
      fs.writeSync = (fd, data, ...rest) => {
        if ((named.get(fd) ?? '').includes(NOTE)) { write(fd, Buffer.from(data).subarray(0, data.length >> 1)); die(); }
        return write(fd, data, ...rest);
      };
      fs.writeFileSync = (p, data, ...rest) => {
        if (String(p).includes(NOTE)) { writeFile(p, String(data).slice(0, data.length >> 1)); die(); }
        return writeFile(p, data, ...rest);
      };
      syncBuiltinESMExports();
      const { restoreSite } = await import(${JSON.stringify(resolve(__dirname, 'restore.ts'))});
      const { DirectoryTarget } = await import(${JSON.stringify(resolve(__dirname, 'targets/directory.ts'))});
      await restoreSite({ dataDir: ${JSON.stringify(fresh)}, target: new DirectoryTarget(${JSON.stringify(hq)}), site: ${JSON.stringify(fx.site)}, force: true, clock: () => 2 });
      console.log('not killed');
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, sig) => done(sig)));
    expect(out).toBe('');
    expect(signal).toBe('SIGKILL');

    expect(JSON.parse(readFileSync(join(fresh, RESTORE_NOTE), 'utf8'))).toEqual(first);
    expect(readRestoreNote(fresh)).toEqual(first);
    // The killed restore's sync.lock names a dead process: the next restore takes it over.
    const again = await restoreSite({ dataDir: fresh, target: new DirectoryTarget(hq), site: fx.site, force: true, clock: () => 3 });
    expect(again.restoredAtMs).toBe(3);
    expect(readRestoreNote(fresh)).toEqual(again);
  }, 60_000);
});
