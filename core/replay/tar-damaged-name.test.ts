// A fixture archive damaged after its first entry: the reader's messages named the later entry by
// its raw header bytes ("bad header checksum at entry '<up to 255 bytes of whatever lies there>'"),
// so a damaged archive echoed its bytes — escape sequences included — to the terminal. The name is
// shown escaped and cut.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extractTar, writeTar } from './tar.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-tar-damaged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sets a header's checksum field to what its bytes add up to. */
function reChecksum(h: Buffer): void {
  h.write('        ', 148, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
}

describe('extractTar on an archive damaged after its first entry', () => {
  const src = join(dir, 'src');
  mkdirSync(src);
  writeFileSync(join(src, 'a.json'), 'x'.repeat(10));
  writeFileSync(join(src, 'b.json'), 'y'.repeat(10));
  const good = join(dir, 'good.tar');
  writeTar(src, good);
  const second = 1024; // header of a.json, one block of its bytes, then b.json's header
  const noise = Buffer.from('\x1b]0;owned\x07\x1b[2J' + 'Z'.repeat(200), 'latin1');

  it('a bad checksum: the name escaped and cut, no raw control byte', () => {
    const bytes = readFileSync(good);
    noise.copy(bytes, second, 0, 100);
    const file = join(dir, 'bad-sum.tar');
    writeFileSync(file, bytes);
    let msg = '';
    try {
      extractTar(file, join(dir, 'out-1'));
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/^tar: bad header checksum at entry '/);
    // eslint-disable-next-line no-control-regex
    expect(msg).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    expect(msg).toContain('\\u001b]0;owned\\u0007');
    expect(msg.length).toBeLessThan(200);
  });

  it('an entry of another type, its checksum right: the name escaped and cut', () => {
    const bytes = readFileSync(good);
    const h = bytes.subarray(second, second + 512);
    h.fill(0, 0, 100);
    noise.copy(h, 0, 0, 100);
    h.write('2', 156, 'ascii');
    reChecksum(h);
    const file = join(dir, 'link.tar');
    writeFileSync(file, bytes);
    let msg = '';
    try {
      extractTar(file, join(dir, 'out-2'));
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/^tar: entry '.*' has type '2'; only files and directories are supported$/);
    // eslint-disable-next-line no-control-regex
    expect(msg).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
    expect(msg.length).toBeLessThan(200);
  });
});
