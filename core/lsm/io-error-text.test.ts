// A failed file operation's message says the errno code once: Node's own message already starts
// with it ("EEXIST: file already exists, mkdir '…'"), and the site's log read "EEXIST EEXIST: …".

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ioError, localFileIO } from './file-io.ts';

describe('ioError text', () => {
  it('a real failure names the operation, the path and the code once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'io-error-text-'));
    try {
      const file = join(dir, 'manifest');
      writeFileSync(file, '');
      let message = '';
      try {
        // A file where a directory is to be: mkdir of a path under it fails (ENOTDIR or EEXIST).
        localFileIO.mkdirs(join(file, 'x'));
      } catch (e) {
        message = (e as Error).message;
        expect((e as { kind?: string }).kind).toBe('IOError');
      }
      const code = /failed: ([A-Z]+)/.exec(message)?.[1];
      expect(code, message).toBeDefined();
      expect(message).not.toMatch(new RegExp(`${code} ${code}`));
      expect(message).toContain(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a code a message does not start with, and a cause without a code', () => {
    const e = Object.assign(new Error('disk went away'), { code: 'EIO' });
    expect(ioError('write', '/d/f', e).message).toBe('write /d/f failed: EIO disk went away');
    expect(ioError('write', '/d/f', new Error('odd')).message).toBe('write /d/f failed: unknown odd');
    const node = Object.assign(new Error("EEXIST: file already exists, mkdir '/d/m'"), { code: 'EEXIST' });
    expect(ioError('mkdir', '/d/m', node).message).toBe("mkdir /d/m failed: EEXIST: file already exists, mkdir '/d/m'");
  });
});
