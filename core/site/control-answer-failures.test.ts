// The control socket answers every request, also one whose handler throws what is no Error (null)
// or returns what JSON cannot carry (a cycle): the answer was built or written outside any catch,
// so the request went unanswered, every later one on its connection too, and the rejection nobody
// handled ends a Node 20 process — the site.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ControlServer, controlRequest, type ControlHandler } from './control.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-control-answers-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a control request whose answer cannot be made', () => {
  it('is answered Failed, and the process sees no unhandled rejection', async () => {
    const path = join(dir, 'control.sock');
    const cyclic = (): unknown => {
      const o: Record<string, unknown> = { site: 'north' };
      o.self = o;
      return o;
    };
    const handlers = new Map<string, ControlHandler>([
      ['throws-null', () => Promise.reject(null)],
      ['throws-string', () => Promise.reject('out of disk')],
      ['cyclic', cyclic],
      ['status', () => 'running'],
    ]);
    const cs = await ControlServer.listen(path, handlers);
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      await expect(controlRequest(path, 'throws-null', {}, 5_000)).rejects.toMatchObject({ kind: 'Failed', message: 'null' });
      await expect(controlRequest(path, 'throws-string', {}, 5_000)).rejects.toMatchObject({ kind: 'Failed', message: 'out of disk' });
      await expect(controlRequest(path, 'cyclic', {}, 5_000)).rejects.toMatchObject({ kind: 'Failed', message: expect.stringMatching(/^the answer to 'cyclic' cannot be sent: .*circular/) });
      await expect(controlRequest(path, 'status', {}, 5_000)).resolves.toBe('running');
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled.map(String)).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await cs.close();
    }
  }, 30_000);
});
