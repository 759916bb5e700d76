// A draft's strings go into the inbox's table rows, and core/lsm's writers refuse a string with a
// lone surrogate (half of a UTF-16 pair: the files would hold U+FFFD in its place). Such a draft
// met the refusal inside the inbox's submit, and the whole run failed with it: no rule's proposals
// went in. It is now the rule's error, as a draft whose texts cannot be made.
import { afterEach, expect, it } from 'vitest';
import type { Rule, ProposalDraft } from './rule.ts';
import { HOLDS } from './rule.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

const LONE = 'J\ud800';

/** One draft per job; `tear` puts a lone surrogate in one place of the draft. */
function rule(id: string, tear?: (d: ProposalDraft) => ProposalDraft): Rule {
  return {
    id,
    version: '1',
    description: id,
    messages: { [`${id}.x`]: { en: 'job {job}', nb: 'jobb {job}', de: 'Auftrag {job}' } },
    evaluate: (ctx) =>
      ctx.tables.work_queue.scan().map((r) => {
        const d: ProposalDraft = {
          action: 'look',
          module: 'operations',
          params: { job_id: String(r.job_id) },
          keyParams: ['job_id'],
          risk: 'low',
          riskReason: { id: `${id}.x`, params: { job: String(r.job_id) } },
          explanation: { id: `${id}.x`, params: { job: String(r.job_id) } },
          evidence: [{ table: 'work_queue', rows: [r] }],
        };
        return tear ? tear(d) : d;
      }),
    recheck: () => HOLDS,
    effectSeen: () => false,
  };
}

it.each<[string, (d: ProposalDraft) => ProposalDraft]>([
  ['the explanation', (d) => ({ ...d, explanation: { ...d.explanation, params: { job: LONE } } })],
  ['the risk reason', (d) => ({ ...d, riskReason: { ...d.riskReason, params: { job: LONE } } })],
  ['the action', (d) => ({ ...d, action: `look${LONE}` })],
  ['the module', (d) => ({ ...d, module: `operations${LONE}` })],
])('a draft with a lone surrogate in %s fails its rule; the other rules are proposed', (_, tear) => {
  site = new TestSite();
  site.job({ job_id: 'J-1' });
  site.commit();
  const { agent, inbox } = site.agentAndInbox({ agent: { rules: [rule('clean'), rule('torn', tear)] } });
  const r = agent.run();
  expect(r.ruleErrors).toEqual([{ ruleId: 'torn', message: expect.stringMatching(/^rule torn: .* is not valid Unicode text \(a lone surrogate/) }]);
  expect(r.created.map((p) => p.ruleId)).toEqual(['clean']);
  expect(inbox.openProposals().map((p) => p.ruleId)).toEqual(['clean']);
});

// Params and evidence are stored as JSON, whose escapes (\ud800) keep any string: not refused,
// and read back as drafted.
it('a lone surrogate in params or evidence rows is kept as drafted', () => {
  site = new TestSite();
  site.job({ job_id: 'J-1' });
  site.commit();
  const torn = rule('torn', (d) => ({ ...d, params: { ...d.params, note: LONE }, evidence: [{ table: 'work_queue', rows: d.evidence[0]!.rows.map((r) => ({ ...r, note: LONE })) }] }));
  const { agent, inbox } = site.agentAndInbox({ agent: { rules: [torn] } });
  expect(agent.run().ruleErrors).toEqual([]);
  const [p] = inbox.openProposals();
  expect(p!.params.note).toBe(LONE);
  expect(p!.evidence[0]!.rows[0]!.values.note).toBe(LONE);
});

// The same for a re-check's reason: the withdrawal stored it as text. The re-check fails as a
// throwing one does (the proposal stays, a warning says why); the other rules' withdrawals go in.
it('a re-check whose reason holds a lone surrogate withdraws nothing of its rule; the other rules withdraw', () => {
  site = new TestSite();
  site.job({ job_id: 'J-1' });
  site.commit();
  let holds = true;
  const withReason = (r: Rule, job: string): Rule => ({ ...r, recheck: () => (holds ? HOLDS : { holds: false, reason: { id: `${r.id}.x`, params: { job } } }) });
  const warnings: string[] = [];
  const rules = [withReason(rule('clean'), 'J-1'), withReason(rule('torn'), LONE)];
  const { agent, inbox } = site.agentAndInbox({ agent: { rules, onWarning: (m) => warnings.push(m) } });
  const first = agent.run().created;
  expect(first.map((p) => p.ruleId)).toEqual(['clean', 'torn']);
  holds = false;
  site.nowMs += 60_000;
  const r = agent.run();
  expect(r.withdrawn.map((p) => p.id)).toEqual([first[0]!.id]);
  expect(inbox.openProposals().map((p) => p.id)).toContain(first[1]!.id);
  expect(warnings).toEqual([expect.stringMatching(/^recheck of .* by torn failed: rule torn: message 'recheck.withdrawn' is not valid Unicode text/)]);
});
