// A draft's risk is one of the inbox's levels (RISK_LEVELS: low, medium, high). A rule of the
// site's own (a file, `agent.ruleFiles`, plain JavaScript or TypeScript run without a type check)
// that drafted `risk: 'High'`, `'critical'` or none had it stored as drafted: the floor UI sorts
// the inbox by risk (an unknown level compared as NaN, so the order of every proposal around it
// was whatever the sort made of it) and shows it as a badge with no word for it. It is now the
// rule's error, as a draft whose texts cannot be made; the other rules are proposed.
import { afterEach, expect, it } from 'vitest';
import type { ProposalDraft, Rule } from './rule.ts';
import { HOLDS } from './rule.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

function rule(id: string, risk: unknown): Rule {
  return {
    id,
    version: '1',
    description: id,
    messages: { [`${id}.x`]: { en: 'job {job}', nb: 'jobb {job}', de: 'Auftrag {job}' } },
    evaluate: (ctx) =>
      ctx.tables.work_queue.scan().map(
        (r) =>
          ({
            action: 'look',
            module: null,
            params: { job_id: String(r.job_id) },
            keyParams: ['job_id'],
            risk,
            riskReason: { id: `${id}.x`, params: { job: String(r.job_id) } },
            explanation: { id: `${id}.x`, params: { job: String(r.job_id) } },
            evidence: [{ table: 'work_queue', rows: [r] }],
          }) as ProposalDraft,
      ),
    recheck: () => HOLDS,
    effectSeen: () => false,
  };
}

it.each([['High'], ['critical'], [undefined], [3]])('a draft with risk %j fails its rule; the other rules are proposed', (risk) => {
  site = new TestSite();
  site.job({ job_id: 'J-1' });
  site.commit();
  const { agent, inbox } = site.agentAndInbox({ agent: { rules: [rule('clean', 'medium'), rule('odd', risk)] } });
  const r = agent.run();
  expect(r.ruleErrors).toEqual([{ ruleId: 'odd', message: `rule odd: risk: expected one of low, medium, high, got ${JSON.stringify(risk) ?? 'undefined'}` }]);
  expect(r.created.map((p) => [p.ruleId, p.risk])).toEqual([['clean', 'medium']]);
  expect(inbox.openProposals().map((p) => p.ruleId)).toEqual(['clean']);
});
