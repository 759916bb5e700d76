// repeatedStopSignals (common.ts): the stop signals after the first are said and ignored while a
// command stops (`tilstand start`, `tilstand demo`), and for a second after it ended: a stop
// quicker than the gap between the two copies of one Ctrl-C under npm (the terminal's and npm's
// forwarded one) left the second to Node's default, exit 130 after a clean stop.
import { PassThrough } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import { nextSignal, repeatedStopSignals } from './common.ts';

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
