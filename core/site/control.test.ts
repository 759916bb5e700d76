// The control socket's idle limit: a connection with no request is closed after idleMs, while
// one whose request is still being answered (a long sync.now or agent.run) keeps its answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlServer, controlRequest, type ControlHandler } from './control.ts';

let dir: string | undefined;
let server: ControlServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function listen(idleMs: number): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-control-'));
  const path = join(dir, 'control.sock');
  const handlers = new Map<string, ControlHandler>([
    ['slow', async (a: Record<string, unknown>) => (await new Promise((r) => setTimeout(r, Number(a.ms))), { waited: a.ms })],
    ['quick', () => 'ok'],
  ]);
  server = await ControlServer.listen(path, handlers, { idleMs });
  return path;
}

describe('control socket idle limit', () => {
  it('answers a request that takes longer than idleMs', async () => {
    const path = await listen(100);
    expect(await controlRequest(path, 'slow', { ms: 400 }, 5_000)).toEqual({ waited: 400 });
    expect(await controlRequest(path, 'quick')).toBe('ok');
  });

  it('still closes a connection that sends nothing, and one that went quiet after its answer', async () => {
    const path = await listen(100);
    const closedAfter = (send?: string) =>
      new Promise<number>((resolve, reject) => {
        const t0 = Date.now();
        const s = connect(path);
        if (send) s.once('connect', () => s.write(send));
        s.on('data', () => undefined);
        s.once('close', () => resolve(Date.now() - t0));
        s.once('error', reject);
        setTimeout(() => reject(new Error('not closed within 3 s')), 3_000).unref();
      });
    expect(await closedAfter()).toBeLessThan(2_000);
    expect(await closedAfter(`${JSON.stringify({ id: 1, op: 'slow', args: { ms: 250 } })}\n`)).toBeGreaterThanOrEqual(250);
  });
});
