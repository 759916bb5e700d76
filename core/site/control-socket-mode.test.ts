// The control socket is closed to other local users from the moment it exists: it is bound under
// a umask of 077, and chmod'ed to 0600 after. With the chmod alone, the socket had the process
// umask's mode (0755 under 022) between the bind and the chmod, and another user could connect
// and send control requests. The process umask is the caller's again after listen, also when the
// listen fails.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ControlError, ControlServer, controlRequest, socketAnswers, type ControlHandler } from './control.ts';

// control.ts's chmodSync, made a no-op in a test that wants to see the mode the bind gave.
const chmod = vi.hoisted(() => ({ skip: false }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const chmodSync: typeof fs.chmodSync = (path, mode) => {
    if (!chmod.skip) fs.chmodSync(path, mode);
  };
  return { ...fs, default: { ...fs, chmodSync }, chmodSync };
});

/** The process umask, read without changing it (reading with no argument is deprecated). */
function currentUmask(): number {
  const u = process.umask(0o022);
  process.umask(u);
  return u;
}

const handlers = new Map<string, ControlHandler>([['quick', () => 'ok']]);
let dir: string;
let server: ControlServer | undefined;
let umaskBefore: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-control-mode-'));
  // A permissive umask, as a service manager may hand the site: the socket must not inherit it.
  umaskBefore = process.umask(0o022);
});
afterEach(async () => {
  chmod.skip = false;
  await server?.close();
  server = undefined;
  process.umask(umaskBefore);
  rmSync(dir, { recursive: true, force: true });
});

describe('control socket mode', () => {
  it('is closed to group and others from its bind, before any chmod (chmod made a no-op)', async () => {
    chmod.skip = true;
    const path = join(dir, 'control.sock');
    server = await ControlServer.listen(path, handlers);
    expect(statSync(path).mode & 0o077).toBe(0);
    expect(statSync(path).mode & 0o777).toBe(0o700);
    expect(await controlRequest(path, 'quick')).toBe('ok');
  });

  it('is 0600 after listen, and the process umask is the caller\'s again', async () => {
    const path = join(dir, 'control.sock');
    server = await ControlServer.listen(path, handlers);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(currentUmask()).toBe(0o022);
    // A file made after listen gets the caller's umask, not the socket's.
    writeFileSync(join(dir, 'after'), '');
    expect(statSync(join(dir, 'after')).mode & 0o777).toBe(0o644);
  });

  it('gives the process umask back when listen fails (EADDRINUSE, a folder that does not exist)', async () => {
    // A dangling symlink: existsSync says no file, bind finds the name taken.
    const taken = join(dir, 'control.sock');
    symlinkSync(join(dir, 'nowhere'), taken);
    await expect(ControlServer.listen(taken, handlers)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(currentUmask()).toBe(0o022);
    // (libuv reports a bind in a missing folder as EACCES.)
    await expect(ControlServer.listen(join(dir, 'gone', 'control.sock'), handlers)).rejects.toMatchObject({ syscall: 'listen', code: expect.stringMatching(/^(EACCES|ENOENT)$/) });
    expect(currentUmask()).toBe(0o022);
  });

  it('deletes a socket a site left, and refuses a file that is no socket, leaving it', async () => {
    const path = join(dir, 'control.sock');
    // A site killed: its socket stays (a clean close removes it), and nothing answers.
    spawnSync(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`]);
    expect(lstatSync(path).isSocket()).toBe(true);
    server = await ControlServer.listen(path, handlers);
    expect(await controlRequest(path, 'quick')).toBe('ok');
    await server.close();
    server = undefined;
    writeFileSync(path, 'notes');
    await expect(ControlServer.listen(path, handlers)).rejects.toThrow(`${path} is there and is no socket; move it away`);
    expect(statSync(path).isFile()).toBe(true);
  });

  it('refuses a path longer than a unix socket takes, and binds nothing at the path Node would cut it to', async () => {
    const deep = join(dir, 'x'.repeat(120));
    mkdirSync(deep);
    const path = join(deep, 'control.sock');
    const err = await ControlServer.listen(path, handlers).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ControlError);
    expect((err as Error).message).toBe(`${path}: its path is ${Buffer.byteLength(path)} bytes, longer than the 107 a unix socket takes (a data directory with a shorter path has one)`);
    // Node would have bound the first 107 bytes: nothing there, nothing answering.
    const cut = Buffer.from(path).subarray(0, 107).toString();
    expect(existsSync(cut)).toBe(false);
    expect(readdirSync(deep)).toEqual([]);
    expect(await socketAnswers(path)).toBe(false);
  });
});
