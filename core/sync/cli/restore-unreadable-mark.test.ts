// `tilstand restore` into a directory whose unfinished-restore mark does not read (torn, `null`):
// exit 2 naming the file and what --force does, with or without other flags; it failed with exit 5
// and a bare "Unexpected end of JSON input" (a TypeError for `null`), --force too. With --force it
// restores, and the note (--json prints it) says the mark was replaced.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { RESTORE_UNFINISHED } from '../restore.ts';
import { makeSite, tempDir } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runRestore } from './sync.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

describe('tilstand restore over a mark that does not read', () => {
  it('torn or null: exit 2 naming the file and what --force does; with --force, exit 0 and the note says so', async () => {
    const fx = makeSite('rum', { rows: 10 });
    const hqDir = tempDir('hq');
    cleanup.push(fx.data, hqDir);
    await shipToDirectory(fx.data, fx.site, hqDir);
    for (const mark of ['{"site": "r', 'null']) {
      const data = tempDir('restored');
      cleanup.push(data);
      const markPath = join(data, RESTORE_UNFINISHED);
      writeFileSync(markPath, mark);

      const refused = await runCli(runRestore, ['--data', data, '--hq', hqDir, '--site', 'rum']);
      expect(refused.code, refused.err).toBe(2);
      expect(refused.err).toContain(`tilstand: ${markPath} does not read as an unfinished restore's mark`);
      expect(refused.err).toContain('here with --force, which replaces the mark');
      expect(refused.out).toBe('');
      expect(existsSync(join(data, 'warehouse'))).toBe(false);

      const forced = await runCli(runRestore, ['--data', data, '--hq', hqDir, '--site', 'rum', '--force', '--json']);
      expect(forced.code, forced.err).toBe(0);
      const note = JSON.parse(forced.out) as { site: string; unreadableMark?: string };
      expect(note.site).toBe('rum');
      expect(note.unreadableMark).toContain(markPath);
      expect(existsSync(markPath)).toBe(false);
    }
  }, 60_000);

  it('the plain output says the mark was replaced', async () => {
    const fx = makeSite('rum', { rows: 10 });
    const hqDir = tempDir('hq');
    const data = tempDir('restored');
    cleanup.push(fx.data, hqDir, data);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const markPath = join(data, RESTORE_UNFINISHED);
    writeFileSync(markPath, '');
    const forced = await runCli(runRestore, ['--data', data, '--hq', hqDir, '--site', 'rum', '--force']);
    expect(forced.code, forced.err).toBe(0);
    expect(forced.out).toContain(`an unfinished restore's mark that did not read was replaced: ${markPath} does not read as an unfinished restore's mark: it is empty; replaced, and only site rum's database folder removed`);
  }, 60_000);
});
