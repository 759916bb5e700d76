// `appliedQuiet` and `SubmitBatch.newOccurrences`: an approval whose command was applied keeps its
// situation quiet for resuggestAfterDecisionMs unless the agent says the situation began anew
// (core/agents Rule.newOccurrence, quiet-after-applied.test.ts). The inbox does not judge that; it
// lets only that approval's quiet go, and only once its command is applied — a rejection, a command
// still on its way, a later decision or failures quiet the situation as before.
import { describe, expect, it } from 'vitest';
import { inboxTest, proposalInput } from './test-support.ts';

const t = inboxTest('tilstand-inbox-applied-quiet-');
const MIN = 60_000;
const LENA = { user: 'lena', pin: '1111' };

describe('appliedQuiet and newOccurrences', () => {
  it('lets only an applied approval\'s quiet go, when the agent names it; also after a restart', async () => {
    const inbox = t.open();
    const [a, b] = inbox.submit({ runId: 'r1', proposals: [proposalInput('J-1'), proposalInput('J-2')], withdrawals: [] }).created;
    await inbox.decide(a!.id, 'approve', LENA);
    await inbox.decide(b!.id, 'reject', LENA);
    inbox.markCommand(a!.id, 'sent');
    // On its way: not applied, so no new occurrence can end its quiet.
    expect(inbox.appliedQuiet(a!.situationKey)).toBeUndefined();
    const early = inbox.submit({ runId: 'r2', proposals: [proposalInput('J-1', 'r2')], withdrawals: [], newOccurrences: [{ situationKey: a!.situationKey, after: a!.id }] });
    expect(early.suppressed).toEqual([a!.situationKey]);
    inbox.markCommand(a!.id, 'applied', null, 'state');
    expect(inbox.appliedQuiet(a!.situationKey)?.id).toBe(a!.id);
    expect(inbox.appliedQuiet(b!.situationKey)).toBeUndefined(); // rejected
    expect(inbox.isQuiet(a!.situationKey)).toBe(true);
    t.now += 30 * MIN;
    // Not named (the rule saw no new occurrence), or named after another proposal: quiet.
    const notNamed = inbox.submit({ runId: 'r3', proposals: [proposalInput('J-1', 'r3'), proposalInput('J-2', 'r3')], withdrawals: [], newOccurrences: [{ situationKey: b!.situationKey, after: b!.id }, { situationKey: a!.situationKey, after: 'P-other-1' }] });
    expect(notNamed.created).toEqual([]);
    expect(notNamed.suppressed).toEqual([a!.situationKey, b!.situationKey]);
    inbox.close();

    const again = t.open();
    expect(again.appliedQuiet(a!.situationKey)?.id).toBe(a!.id);
    const named = again.submit({ runId: 'r4', proposals: [proposalInput('J-1', 'r4')], withdrawals: [], newOccurrences: [{ situationKey: a!.situationKey, after: a!.id }] });
    expect(named.created.map((p) => p.situationKey)).toEqual([a!.situationKey]);
    expect(named.suppressed).toEqual([]);
  });
});
