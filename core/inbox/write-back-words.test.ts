// Write-back's own details (a command not applied in time, one not sent within the window after
// its approval) as a code and its numbers, read back from the English the log keeps, so the floor
// UI words them in nb and de: they showed in English in every language. What a module said is no
// such detail, and stays as it came.
import { describe, expect, it } from 'vitest';
import { notSentDetail, timedOutDetail, writeBackWords } from './proposal.ts';

describe("write-back's own details as a code", () => {
  it('reads back every detail the builders write (the stored English, old entries and new)', () => {
    expect(writeBackWords(timedOutDetail(60_400, 'sent'))).toEqual({ code: 'command.notApplied', params: { seconds: 60, lastState: 'sent' } });
    expect(writeBackWords(timedOutDetail(601_000, 'acknowledged'))).toEqual({ code: 'command.notApplied', params: { seconds: 601, lastState: 'acknowledged' } });
    expect(writeBackWords(notSentDetail(60_000, 61_600))).toEqual({ code: 'command.notSent', params: { windowSeconds: 60, agoSeconds: 62 } });
    // As a log entry written before this change holds it.
    expect(writeBackWords('not sent within 600 s of the approval (4000 s ago): nothing was done; decide again if it still holds')).toEqual({
      code: 'command.notSent',
      params: { windowSeconds: 600, agoSeconds: 4000 },
    });
  });

  it('gives no code for what a module said, nor for a text that only starts like one', () => {
    expect(writeBackWords(null)).toBeNull();
    expect(writeBackWords('refused by the module: not now')).toBeNull();
    expect(writeBackWords('{"job_id":"J-1"}')).toBeNull();
    expect(writeBackWords(`${timedOutDetail(60_000, 'sent')} and more`)).toBeNull();
    expect(writeBackWords('not applied soon')).toBeNull();
  });
});
