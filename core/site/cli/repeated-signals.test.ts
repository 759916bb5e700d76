// repeatedStopSignals (common.ts): the stop signals after the first are said and ignored while a
// command stops (`tilstand start`, `tilstand demo`), and for a second after it ended: a stop
// quicker than the gap between the two copies of one Ctrl-C under npm (the terminal's and npm's
// forwarded one) left the second to Node's default, exit 130 after a clean stop.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import { RESTORE_UNFINISHED } from '../../sync/restore.ts';
import { initDataDir } from '../init.ts';
import { nextSignal, repeatedStopSignals } from './common.ts';
import { runMain } from './test-support.ts';

afterEach(() => vi.useRealTimers());

it('says a second SIGINT or SIGTERM, and keeps taking them for a second after the command ended', async () => {
  vi.useFakeTimers();
  const stderr = new PassThrough();
  let said = '';
  stderr.on('data', (d) => (said += d));
  const before = process.listenerCount('SIGINT');
  const first = nextSignal();
  const again = repeatedStopSignals({ stderr });
  process.emit('SIGINT', 'SIGINT');
  expect(await first).toBe('SIGINT');
  process.emit('SIGTERM', 'SIGTERM');
  expect(said).toBe('tilstand: received SIGTERM again; a clean stop is under way (SIGKILL ends the process at once, without one)\n');
  again.close();
  // Still there just after the command: a signal now is not Node's default (the process ending).
  expect(process.listenerCount('SIGINT')).toBe(before + 1);
  vi.advanceTimersByTime(1_000);
  expect(process.listenerCount('SIGINT')).toBe(before);
});

it('a command that ends without a signal leaves no listener of its own (nextSignal cancelled)', () => {
  const before = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
  const waits = Array.from({ length: 5 }, () => nextSignal());
  expect(process.listenerCount('SIGTERM')).toBe(before[1]! + 5);
  for (const w of waits) w.cancel();
  expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(before);
});

it('`tilstand start` that fails leaves no signal listener behind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tilstand-start-listeners-'));
  try {
    const data = join(dir, 'data');
    await initDataDir({ data, site: 'north', scrypt: { N: 1024, r: 8, p: 1 } });
    // Refused at once (a restore that did not finish), after the command began waiting for a signal.
    writeFileSync(join(data, RESTORE_UNFINISHED), JSON.stringify({ site: 'north', hq: 'hq', startedAtMs: 0 }));
    const before = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
    for (let i = 0; i < 3; i++) {
      const r = await runMain(['start', '--headless', '--data', data, '--mqtt-port', '0', '--http-port', '0']);
      expect(r.code).not.toBe(0);
    }
    // repeatedStopSignals keeps its own for a second after the command (the test above): wait it out.
    await new Promise((r) => setTimeout(r, 1_100));
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(before);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
