// `replay run --fixture <file>` with a file that is no fixture archive (/etc/passwd, a text, random
// bytes, an empty file) is a bad option, exit 2, in a short message that echoes none of the
// file's contents: it was exit 5, "tar: bad header checksum at entry '<the first 255 bytes of
// the file>'". A folder without fixture.json is refused the same way (it was exit 5).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeTar } from './tar.ts';
import { replayCli } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-replay-not-fixture-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('replay run --fixture <not a fixture>', () => {
  it('a file that is not a tar archive: exit 2, a short message, none of its contents', async () => {
    const secret = 'root:x:0:0:root:/root:/bin/bash\n'.repeat(40);
    const cases: [string, Buffer][] = [
      ['passwd', Buffer.from(secret)],
      ['short.txt', Buffer.from('hello\n')],
      ['empty', Buffer.alloc(0)],
      ['random.bin', randomBytes(4096)],
    ];
    for (const [name, bytes] of cases) {
      const file = join(dir, name);
      writeFileSync(file, bytes);
      const scratch = join(dir, `scratch-${name}`);
      mkdirSync(scratch);
      const out = join(dir, `out-${name}`);
      const r = await replayCli(['replay', 'run', '--fixture', file, '--out', out, '--scratch', scratch]);
      expect.soft([r.code, r.out, r.err], name).toEqual([2, '', `tilstand: option '--fixture': ${file} is not a replay fixture (expected a fixture folder or the .tar archive \`tilstand replay export\` writes)\n`]);
      expect.soft(existsSync(out), name).toBe(false);
      expect.soft(readdirSync(scratch), name).toEqual([]);
    }
  });

  it('a tar archive or a folder without fixture.json: exit 2', async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    writeFileSync(join(folder, 'notes.txt'), 'x');
    const tar = join(dir, 'other.tar');
    writeTar(folder, tar);
    for (const given of [folder, tar]) {
      const r = await replayCli(['replay', 'run', '--fixture', given, '--out', join(dir, 'out-x')]);
      expect.soft([r.code, r.out, r.err], given).toEqual([2, '', `tilstand: option '--fixture': ${given} is not a replay fixture (no fixture.json)\n`]);
    }
  });
});
