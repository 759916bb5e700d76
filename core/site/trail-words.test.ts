// The trail's and the earlier failures' write-back details carry a code and numbers (api.ts
// WRITE_BACK_CODES) beside the stored English, for the floor UI to word in nb and de; what a
// module said does not, even when it reads the same.
import { describe, expect, it } from 'vitest';
import { notSentDetail, timedOutDetail } from '../inbox/proposal.ts';
import { failedBeforeView, trailEntry } from './service.ts';

const TOPIC = 'tilstand/demo/cmd/operations';

describe("the trail's write-back details", () => {
  it('carry the code of a command not applied or not sent in time, with the English as the record', () => {
    const timedOut = timedOutDetail(60_000, 'sent');
    expect(trailEntry({ atMs: 1, event: 'command_timed_out', actor: 'write-back', detail: { topic: TOPIC, detail: timedOut } })).toEqual({
      atMs: 1,
      event: 'command_timed_out',
      user: 'write-back',
      detail: `detail: ${timedOut}`,
      fields: [{ name: 'detail', value: timedOut, code: 'command.notApplied', params: { seconds: 60, lastState: 'sent' } }],
    });
    const notSent = notSentDetail(600_000, 601_000);
    expect(trailEntry({ atMs: 2, event: 'command_failed', actor: 'write-back', detail: { topic: TOPIC, detail: notSent } }).fields).toEqual([
      { name: 'detail', value: notSent, code: 'command.notSent', params: { windowSeconds: 600, agoSeconds: 601 } },
    ]);
  });

  it("leave what a module said as it came, even a text that reads as write-back's", () => {
    const said = timedOutDetail(60_000, 'sent');
    expect(trailEntry({ atMs: 1, event: 'command_failed', actor: 'operations', detail: { topic: TOPIC, detail: said } }).fields).toEqual([{ name: 'detail', value: said }]);
    expect(trailEntry({ atMs: 1, event: 'command_applied', actor: 'state', detail: { topic: TOPIC, detail: '{"job_id":"J-1"}' } }).fields).toEqual([{ name: 'detail', value: '{"job_id":"J-1"}' }]);
  });

  it("give an earlier failure never sent write-back's code, and a module's refusal none", () => {
    const notSent = notSentDetail(600_000, 601_000);
    expect(failedBeforeView({ id: 'P-1', atMs: 5, detail: notSent, sent: false })).toEqual({ id: 'P-1', atMs: 5, detail: notSent, code: 'command.notSent', params: { windowSeconds: 600, agoSeconds: 601 } });
    expect(failedBeforeView({ id: 'P-2', atMs: 6, detail: notSent, sent: true })).toEqual({ id: 'P-2', atMs: 6, detail: notSent });
    expect(failedBeforeView({ id: 'P-3', atMs: 7, detail: null, sent: true })).toEqual({ id: 'P-3', atMs: 7, detail: null });
  });
});
