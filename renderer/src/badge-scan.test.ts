// A badge scan told from typing by its pace (badge-scan.ts): the rules the sign-in screen relies on
// (SignInScanAfterRefusal.test.ts drives the screen).
import { describe, expect, it } from 'vitest';
import { runAfter, SCAN_CHARS_MIN, SCAN_KEY_GAP_MS_MAX, SCAN_KEY_MEAN_MS_MAX, scanEndedBy, type KeyRun } from './badge-scan.ts';

/** The run after `keys` typed into `field` (holding `before` first) `gapsMs` apart (the last repeated), from 0; and when the next key comes. */
function typed(keys: string[], gapsMs: number | number[], o: { field?: string; before?: string; repeat?: boolean } = {}): { run: KeyRun | null; nextMs: number } {
  const gaps = Array.isArray(gapsMs) ? gapsMs : [gapsMs];
  let run: KeyRun | null = null;
  let value = o.before ?? '';
  let at = 0;
  keys.forEach((key, i) => {
    run = runAfter(run, { key, timeStamp: at, repeat: o.repeat ?? false, target: { name: o.field ?? 'secret', value } });
    if (key.length === 1) value += key;
    at += gaps[Math.min(i, gaps.length - 1)]!;
  });
  return { run, nextMs: at };
}

describe('a badge scan told from typing', () => {
  it('is a run of at least SCAN_CHARS_MIN characters ended by Enter at a reader’s pace', () => {
    const { run, nextMs } = typed([...'00421234'], 5, { before: '12' });
    expect(scanEndedBy(run, nextMs)).toEqual({ chars: '00421234', firstMs: 0, lastMs: 35, field: 'secret', before: '12' });
    const slowest = typed([...'0042'], SCAN_KEY_MEAN_MS_MAX);
    expect(scanEndedBy(slowest.run, slowest.nextMs)).not.toBeNull();
  });

  it('is one still with a late key in it: the mean pace decides, not each key’s', () => {
    // The late one as chromium driven by playwright gave it: 58 ms after the first of ten.
    const { run, nextMs } = typed([...'BADGE-7781'], [58, 3]);
    expect(scanEndedBy(run, nextMs)?.chars).toBe('BADGE-7781');
  });

  it('is not one typed by hand, however quick, one too short, nor one that paused before the Enter', () => {
    const quickHand = typed([...'1234'], 60);
    expect(quickHand.run?.chars).toBe('1234'); // a run: no key paused past SCAN_KEY_GAP_MS_MAX
    expect(scanEndedBy(quickHand.run, quickHand.nextMs)).toBeNull();
    const justSlower = typed([...'1234'], SCAN_KEY_MEAN_MS_MAX + 1);
    expect(scanEndedBy(justSlower.run, justSlower.nextMs)).toBeNull();
    const short = typed([...'00421234'.slice(0, SCAN_CHARS_MIN - 1)], 5);
    expect(scanEndedBy(short.run, short.nextMs)).toBeNull();
    const { run } = typed([...'00421234'], 5);
    expect(scanEndedBy(run, 35 + SCAN_KEY_GAP_MS_MAX + 1)).toBeNull();
    expect(scanEndedBy(null, 0)).toBeNull();
  });

  it('is only the keys since the last pause: what was typed before stays in the field', () => {
    let run = runAfter(null, { key: '1', timeStamp: 0, target: { name: 'secret', value: '' } });
    run = runAfter(run, { key: '0', timeStamp: 500, target: { name: 'secret', value: '1' } });
    for (const [i, key] of [...'042'].entries()) run = runAfter(run, { key, timeStamp: 505 + 5 * i, target: { name: 'secret', value: `10${'042'.slice(0, i)}` } });
    expect(scanEndedBy(run, 520)).toMatchObject({ chars: '0042', before: '1' });
  });

  it('keeps its run through Shift (a capital), and ends on a key held down or any other key', () => {
    let run = typed(['B', 'A', 'Shift', 'D', 'G'], 5).run;
    expect(run?.chars).toBe('BADG');
    // A key held down repeats as quick as a reader types.
    expect(typed([...'1111'], 30, { repeat: true }).run).toBeNull();
    run = runAfter(run, { key: 'Backspace', timeStamp: 25, target: { name: 'secret', value: 'BADG' } });
    expect(run).toBeNull();
  });

  it('starts again when the keys go to another place; a place without a name (the button) is one too', () => {
    let run = typed([...'0042'], 5, { field: 'user' }).run;
    run = runAfter(run, { key: '1', timeStamp: 20, target: { name: 'secret', value: '' } });
    expect(run).toMatchObject({ chars: '1', field: 'secret' });
    run = runAfter(null, { key: '7', timeStamp: 0, target: {} });
    expect(run).toMatchObject({ chars: '7', field: null, before: '' });
  });

  it('is not a run that began right after another key or keys into another place: a password manager typing name, Tab, password and Enter (auto-type)', () => {
    // Auto-type: a key every 10 ms, as quick as a reader, but from one field into the next.
    let run: KeyRun | null = null;
    let other: number | null = null;
    let at = 0;
    const key = (key: string, name: string, value: string) => {
      if (key.length === 1) run = runAfter(run, { key, timeStamp: at, target: { name, value } }, other);
      else ((run = runAfter(run, { key, timeStamp: at, target: { name, value } }, other)), (other = at));
      at += 10;
    };
    [...'Kari'].forEach((k, i) => key(k, 'user', 'Kari'.slice(0, i)));
    key('Tab', 'user', 'Kari');
    [...'2580'].forEach((k, i) => key(k, 'secret', '2580'.slice(0, i)));
    expect(run).toMatchObject({ chars: '2580', field: 'secret' });
    expect(scanEndedBy(run, at)).toBeNull();
    // The same keys into the password field from a pause (a reader after a refused PIN): a scan.
    const alone = typed([...'2580'], 10);
    expect(scanEndedBy(alone.run, alone.nextMs)?.chars).toBe('2580');
    // A key long before the run does not count.
    const late = runAfter(null, { key: '2', timeStamp: 1_000, target: { name: 'secret', value: '' } }, 1_000 - SCAN_KEY_GAP_MS_MAX - 1);
    expect(late?.led).toBeFalsy();
  });
});
