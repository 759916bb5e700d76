// Site.stop waits for the API calls in flight (service.ts STOP_CALLS_WAIT_MS), but not for the
// floor UI's replay or dismissal of a flood of dead letters: they work in slices whose every commit
// stands (as the control socket's `deadletters.replay` / `deadletters.dismiss`, which say so with
// ControlWork.interruptible). Waited for, a SIGTERM or the window closing during a flood's replay
// took the whole 10 s more, and the log called the replay stuck ("still running after 10 s").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { SessionContext, SessionUser } from './api.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-stop-replay-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function session(): SessionContext {
  const s: SessionContext = {
    user: null,
    setUser: (u: SessionUser | null) => {
      s.user = u;
    },
  };
  return s;
}

const settle = <T>(p: Promise<T>) => p.then((value) => ({ ok: true as const, value }), (error: { kind?: string; code?: string; message?: string }) => ({ ok: false as const, error }));

for (const method of ['replayDeadLetters', 'dismissDeadLetters'] as const) {
  it(`does not wait for the floor UI's ${method} of a flood, and answers it that the site stopped`, { timeout: 60_000 }, async () => {
    const data = join(dir, 'data');
    await initDataDir({ data, site: 'flood', admin: { name: 'boss', pin: '246810' } });
    const lines: string[] = [];
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) });
    const admin = session();
    await site.service.call('signIn', { user: 'boss', secret: '246810' }, admin);
    // A flood's slices: still going when the stop begins; they fail on the closed tables after it.
    let fail!: (e: Error) => void;
    let entered!: () => void;
    const working = new Promise<void>((r) => (entered = r));
    const slice = () => (entered(), new Promise<never>((_r, reject) => (fail = reject)));
    const ingestor = site.ingestor as unknown as Record<string, unknown>;
    ingestor.replayDeadLetters = slice;
    ingestor.deadLetterSlices = async function* () {
      yield await slice();
    };
    const req = method === 'replayDeadLetters' ? {} : { ids: ['1'], note: 'a door state the contract lacks' };
    const call = settle(site.service.call(method, req as never, admin));
    await working;
    const started = performance.now();
    await site.stop();
    expect(performance.now() - started, 'the stop did not wait for the slices').toBeLessThan(5_000);
    expect(lines.filter((l) => /still running/.test(l))).toEqual([]);
    fail(new TypeError('the table is closed'));
    const r = await call;
    expect(r).toMatchObject({ ok: false, error: { kind: 'conflict' } });
    expect(r.ok === false && r.error.message).toMatch(/the site stopped before this call finished/);
  });
}
