// The control socket's idle limit: a connection with no request is closed after idleMs, while
// one whose request is still being answered (a long sync.now or agent.run) keeps its answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlError, ControlServer, controlRequest, type ControlHandler } from './control.ts';

let dir: string | undefined;
let server: ControlServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Resolves the pending `never` requests (the test's own cleanup). */
let release: (() => void)[] = [];
afterEach(() => {
  for (const r of release.splice(0)) r();
});

async function listen(idleMs: number): Promise<string> {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-control-'));
  const path = join(dir, 'control.sock');
  const handlers = new Map<string, ControlHandler>([
    ['slow', async (a: Record<string, unknown>) => (await new Promise((r) => setTimeout(r, Number(a.ms))), { waited: a.ms })],
    ['quick', () => 'ok'],
    ['never', () => new Promise((r) => release.push(() => r('late')))],
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

/** What `controlRequest` rejected with. */
async function refusal(p: Promise<unknown>): Promise<ControlError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ControlError);
    return e as ControlError;
  }
  throw new Error('expected a refusal');
}

/** Every line a raw connection gets for one request line, until the site's answer (ok set). */
function rawLines(path: string, request: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    const lines: Record<string, unknown>[] = [];
    let buffer = '';
    s.setEncoding('utf8');
    s.once('connect', () => s.write(`${JSON.stringify(request)}\n`));
    s.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        if ('ok' in line) {
          s.destroy();
          resolve(lines);
        }
      }
    });
    s.once('error', reject);
  });
}

describe('control socket heartbeats (a long op: a dead-letter replay of a flood)', () => {
  it('waits past timeoutMs while heartbeats come: timeoutMs bounds the silence, not the wait', async () => {
    const path = await listen(60_000);
    const beats: number[] = [];
    // Without heartbeats the same wait is a Timeout, though the site goes on and finishes the op.
    expect((await refusal(controlRequest(path, 'slow', { ms: 900 }, 300))).kind).toBe('Timeout');
    expect(await controlRequest(path, 'slow', { ms: 900 }, 300, { heartbeatMs: 100, onWorking: (ms) => beats.push(ms) })).toEqual({ waited: 900 });
    expect(beats.length).toBeGreaterThanOrEqual(5);
    expect(beats).toEqual([...beats].sort((a, b) => a - b));
    expect(beats[beats.length - 1]).toBeGreaterThanOrEqual(500);
  });

  it('sends heartbeats only to a request that asks, and refuses a period out of range naming heartbeatMs', async () => {
    const path = await listen(60_000);
    expect(await rawLines(path, { id: 7, op: 'slow', args: { ms: 350 } })).toEqual([{ id: 7, ok: true, value: { waited: 350 } }]);
    const lines = await rawLines(path, { id: 8, op: 'slow', args: { ms: 350 }, heartbeatMs: 100 });
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.slice(0, -1).every((l) => l.id === 8 && l.working === true && typeof l.elapsedMs === 'number')).toBe(true);
    expect(lines[lines.length - 1]).toEqual({ id: 8, ok: true, value: { waited: 350 } });
    for (const bad of [5, 60_001, 1.5, '1000']) {
      expect(await rawLines(path, { id: 9, op: 'quick', heartbeatMs: bad })).toEqual([
        { id: 9, ok: false, error: { kind: 'InvalidArgument', message: `heartbeatMs: expected an integer from 100 to 60000 (ms), got ${JSON.stringify(bad)}` } },
      ]);
    }
    expect(() => controlRequest(path, 'quick', {}, 10_000, { heartbeatMs: 50 })).toThrow('heartbeatMs: expected an integer from 100 to 60000 (ms), got 50');
    expect(() => controlRequest(path, 'quick', {}, 100, { heartbeatMs: 100 })).toThrow('timeoutMs: expected more than heartbeatMs (100), got 100');
  });

  it('fails when the site goes away while it works on the request (Disconnected), and when it goes silent (Timeout, the result unknown)', async () => {
    const path = await listen(60_000);
    const pending = controlRequest(path, 'never', {}, 5_000, { heartbeatMs: 100 });
    await new Promise((r) => setTimeout(r, 300));
    await server!.close();
    server = undefined;
    const gone = await refusal(pending);
    expect([gone.kind, gone.message]).toEqual(['Disconnected', `${path} closed the connection without an answer to 'never' (the site stopped?)`]);

    // A site whose event loop stopped: one heartbeat, then nothing (and the connection stays).
    const quiet = join(dir!, 'quiet.sock');
    const held: Socket[] = [];
    const raw = createServer((c) => {
      held.push(c);
      c.once('data', () => c.write(`${JSON.stringify({ id: 1, working: true, elapsedMs: 100 })}\n`));
    });
    await new Promise<void>((r) => raw.listen(quiet, r));
    try {
      const t0 = Date.now();
      const silent = await refusal(controlRequest(quiet, 'never', {}, 400, { heartbeatMs: 100 }));
      expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
      expect([silent.kind, silent.message]).toEqual(['Timeout', `the site on ${quiet} went silent for 400 ms while it worked on 'never'; it may still be working on it or have finished it (its result is unknown)`]);
    } finally {
      for (const c of held) c.destroy();
      await new Promise((r) => raw.close(r));
    }
  });
});
