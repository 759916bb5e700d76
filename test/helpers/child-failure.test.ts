import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ChildFailure, childFailure } from './child-failure.ts';

describe('childFailure', () => {
  it('turns a binary that is not there into a rejection naming it, not an unhandled error', async () => {
    const bin = join(tmpdir(), 'tilstand-no-such-binary', 'mosquitto');
    const c = spawn(bin, ['-v'], { stdio: 'ignore' });
    const watched = childFailure(c, `mosquitto at ${bin}`);
    const e = await watched.failed.then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ChildFailure);
    expect((e as ChildFailure).message).toBe(`could not start mosquitto at ${bin}: ENOENT`);
    expect((e as ChildFailure).started).toBe(false);
    expect(((e as ChildFailure).cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(watched.error()).toBe(e);
  });

  it('stays quiet for a child that starts and ends', async () => {
    const c = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const watched = childFailure(c, 'node');
    const code = await new Promise((r) => c.once('close', r));
    expect(code).toBe(0);
    expect(watched.error()).toBeUndefined();
    // `failed` still pending: the first to settle is the timer.
    expect(await Promise.race([watched.failed, new Promise((r) => setTimeout(() => r('pending'), 50))])).toBe('pending');
  });
});
