// The agents' messages: rendering, the templates of every rule in every language, the English a
// run stores, and the translations of what the rules say.
import { afterEach, describe, expect, it } from 'vitest';
import { AgentError } from './errors.ts';
import { MESSAGE_LANGS, messageCatalog, msg, placeholders, renderMessage, SHARED_MESSAGES, tableList, translations, type MessageTemplates } from './messages.ts';
import type { Rule } from './rule.ts';
import { DEFAULT_RULES } from './rules/index.ts';
import { T0, TestSite } from './test-support.ts';

const H = 3600_000;
const CATALOG = messageCatalog(DEFAULT_RULES);

describe('renderMessage', () => {
  const t: MessageTemplates = {
    greet: { en: 'Hello {who}, {n} left{tail}', nb: 'Hei {who}, {n} igjen{tail}', de: 'Hallo {who}, {n} übrig{tail}' },
    tail: { en: ' ({what})', nb: ' ({what})', de: ' ({what})' },
    thing: { en: 'a thing', nb: 'en ting', de: 'ein Ding' },
  };

  it('puts the parameters in, a message parameter in the same language and a list joined', () => {
    const m = msg('greet', { who: ['A', 'B'], n: 3, tail: msg('tail', { what: msg('thing') }) });
    expect(renderMessage(m, t, 'en')).toBe('Hello A, B, 3 left (a thing)');
    expect(renderMessage(m, t, 'de')).toBe('Hallo A, B, 3 übrig (ein Ding)');
    expect(renderMessage(msg('greet', { who: 'C', n: 0, tail: '' }), t, 'nb')).toBe('Hei C, 0 igjen');
  });

  it('is undefined for an unknown id, a missing or null parameter, or one that is a plain object', () => {
    expect(renderMessage(msg('nope'), t, 'en')).toBeUndefined();
    expect(renderMessage(msg('greet', { who: 'A', n: 1 }), t, 'en')).toBeUndefined();
    expect(renderMessage(msg('greet', { who: null, n: 1, tail: '' }), t, 'en')).toBeUndefined();
    expect(renderMessage(msg('greet', { who: { x: 1 }, n: 1, tail: '' }), t, 'en')).toBeUndefined();
    expect(renderMessage(msg('greet', { who: 'A', n: 1, tail: msg('nope') }), t, 'en')).toBeUndefined();
  });

  it('gives translations only where a message renders, each text on its own', () => {
    const p = { messages: { explanation: msg('greet', { who: 'A', n: 1, tail: '' }), riskReason: msg('nope') } };
    expect(translations(p, t)).toEqual({ nb: { explanation: 'Hei A, 1 igjen' }, de: { explanation: 'Hallo A, 1 übrig' } });
    expect(translations({}, t)).toEqual({});
  });
});

describe('the templates', () => {
  it('every message of every rule and every shared fragment is in every language, with the same parameters', () => {
    const ids = Object.keys(CATALOG);
    expect(ids.length).toBeGreaterThan(Object.keys(SHARED_MESSAGES).length);
    for (const id of ids) {
      const t = CATALOG[id]!;
      expect(Object.keys(t).sort(), id).toEqual([...MESSAGE_LANGS].sort());
      for (const lang of MESSAGE_LANGS) {
        expect(t[lang].trim().length, `${id} ${lang}`).toBeGreaterThan(0);
        expect(placeholders(t[lang]), `${id} ${lang}`).toEqual(placeholders(t.en));
      }
    }
    for (const r of DEFAULT_RULES) expect(Object.keys(r.messages ?? {}).length, r.id).toBeGreaterThan(0);
  });

  // A withdrawal between runs names the tables whose commits brought it (agent.ts, `tableList`):
  // one or several. The German "als sich work_queue, resources änderte" had the verb in the
  // singular; nb and de said the tables by their names ("sett da work_queue, resources endret seg").
  it('says a withdrawal between runs right for one table and for several, in every language, the tables in words', () => {
    const said = (lang: (typeof MESSAGE_LANGS)[number], tables: string[]) => renderMessage(msg('recheck.withdrawnChanged', { reason: 'R', tables: tableList(tables) }), CATALOG, lang);
    const cases = [['resources'], ['work_queue', 'resources'], ['work_queue', 'stock', 'yard_doors']];
    // English: the text the withdrawals stored before, word for word (the record; DESIGN.md "Messages").
    expect(cases.map((c) => said('en', c))).toEqual(['R (seen when resources changed)', 'R (seen when work_queue, resources changed)', 'R (seen when work_queue, stock, yard_doors changed)']);
    expect(cases.map((c) => said('nb', c))).toEqual([
      'R (sett da ressursene endret seg)',
      'R (sett da arbeidskøen og ressursene endret seg)',
      'R (sett da arbeidskøen, lageret og yard_doors endret seg)',
    ]);
    expect(cases.map((c) => said('de', c))).toEqual([
      'R (bemerkt bei Änderungen an Ressourcen)',
      'R (bemerkt bei Änderungen an Arbeitsvorrat und Ressourcen)',
      'R (bemerkt bei Änderungen an Arbeitsvorrat, Bestand und yard_doors)',
    ]);
  });

  it('translates a withdrawal stored before its tables were a list (one string of names) as a new one', () => {
    const reason = msg('recheck.jobNow', { job: 'J-1', status: msg('job.status.in_progress') });
    const stored = (tables: string) => ({ messages: { withdrawnReason: msg('recheck.withdrawnChanged', { reason, tables }) } });
    expect(translations(stored('work_queue, resources'), CATALOG)).toEqual({
      nb: { withdrawnReason: 'jobb J-1 er nå i gang (sett da arbeidskøen og ressursene endret seg)' },
      de: { withdrawnReason: 'Auftrag J-1 ist jetzt in Arbeit (bemerkt bei Änderungen an Arbeitsvorrat und Ressourcen)' },
    });
    expect(translations(stored('yard_doors'), CATALOG).nb).toEqual({ withdrawnReason: 'jobb J-1 er nå i gang (sett da yard_doors endret seg)' });
  });

  it("a rule's message ids start with its id", () => {
    const bad: Rule = { ...DEFAULT_RULES[0]!, id: 'other', messages: { 'assign-job.x': { en: 'x', nb: 'x', de: 'x' } } };
    expect(() => messageCatalog([bad])).toThrow(AgentError);
    expect(() => messageCatalog([bad])).toThrow(/message id 'assign-job.x' must start with 'other.'/);
  });

  // The branches no test site reaches (the seed tables give every job a capability), in the
  // English the rules wrote before they kept messages.
  it('says the rarer branches in the English of before', () => {
    const en = (id: string, params: Parameters<typeof msg>[1]) => renderMessage(msg(id, params), CATALOG, 'en');
    expect(
      en('escalate-late-job.explanation', {
        job: 'J-1',
        state: msg('job.blocked', { reason: msg('reason.none') }),
        due: '2026-12-01T10:00:00.000Z',
        minutes: 60,
        capability: msg('capability.unknown'),
        late: msg('escalate-late-job.lateMinutes', { n: 5 }),
        priority: 3,
      }),
    ).toBe('Job J-1 is blocked (no reason) and due 2026-12-01T10:00:00.000Z. Started now it takes about 60 min (unknown capability), so it ends about 5 min late. Raise its priority from 3.');
    expect(en('idle-resource.explanation', { resource: 'R-1', kind: msg('idle-resource.kindUnknown'), capability: 'pick', minutes: 12, count: 1, jobs: ['J-1'] })).toBe(
      'R-1 (resource, pick) has been free for 12 min while 1 job(s) needing pick wait: J-1.',
    );
    expect(en('stock-reorder.riskLarge', { qty: 800, mediumFrom: 500 })).toBe('a large order: 800 units (medium from 500)');
    // release-blocked-job v3's risk reason: no longer said, kept for the proposals v3 stored.
    const v3 = msg('release-blocked-job.riskBelowReorder', { qty: 5, rest: 6, item: 'BOLT', share: '', left: 1, reorderPoint: 5 });
    expect(renderMessage(v3, CATALOG, 'en')).toBe('the job uses 5 of 6 available BOLT, leaving 1, below the reorder point 5');
    expect(renderMessage(v3, CATALOG, 'nb')).toBe('jobben bruker 5 av 6 tilgjengelige BOLT, og 1 blir igjen, under bestillingspunktet 5');
    expect(en('release-blocked-job.share', { ahead: 40, jobs: msg('list.more', { ids: ['J-1', 'J-2', 'J-3'], n: 2 }) })).toBe(' after 40 for J-1, J-2, J-3 and 2 more ahead of it in the queue');
  });
});

describe('what a run stores', () => {
  let site: TestSite | undefined;
  afterEach(() => site?.close());

  it("stores each proposal's English text and its messages, which translate into every language", () => {
    site = new TestSite();
    site.job({ job_id: 'J-1', capability: 'weld', due_at_ms: T0 + 2 * H, priority: 1 });
    site.job({ job_id: 'J-2', status: 'blocked', blocked_reason: null, material_item: 'BOLT', material_qty: 5, priority: 1 });
    site.job({ job_id: 'J-3', status: 'blocked', blocked_reason: 'material short', material_item: 'BOLT', material_qty: 4, priority: 2 });
    site.job({ job_id: 'J-4', capability: 'pick' });
    site.resource('M-1', 'pick', 'free', T0 - 40 * 60_000);
    site.stock('BOLT', 'A', { on_hand: 10, reserved: 0 });
    site.stock('NUT', 'A', { on_hand: 1, reserved: 0 });
    site.commit();
    const { agent, inbox } = site.agentAndInbox({ agent: { config: { jobDurationMsByCapability: { weld: 3 * H } } } });
    const created = agent.run().created;
    expect(new Set(created.map((p) => p.ruleId))).toEqual(new Set(DEFAULT_RULES.map((r) => r.id)));
    for (const p of created) {
      const stored = inbox.get(p.id)!;
      expect(stored.messages, p.id).toBeDefined();
      expect(renderMessage(stored.messages!.explanation!, agent.messages, 'en')).toBe(stored.explanation);
      expect(renderMessage(stored.messages!.riskReason!, agent.messages, 'en')).toBe(stored.riskReason);
      const t = translations(stored, agent.messages);
      for (const lang of ['nb', 'de'] as const) {
        expect(t[lang]?.explanation, `${p.id} ${lang}`).toBeDefined();
        expect(t[lang]?.riskReason, `${p.id} ${lang}`).toBeDefined();
        expect(t[lang]!.explanation).not.toBe(stored.explanation);
        expect(t[lang]!.explanation).not.toMatch(/[{}]|undefined|\[object/);
      }
    }
    // The resource's kind as the floor says it (stored as machine; the English is the code); its
    // capability, the site's own value, as data (messages-languages.test.ts).
    const idle = created.find((p) => p.ruleId === 'idle-resource')!;
    expect(idle.explanation).toMatch(/^M-1 \(machine, pick\) has been free/);
    expect(translations(idle, agent.messages).nb!.explanation).toMatch(/^M-1 \(maskin, «pick»\) har vært ledig/);
    expect(translations(idle, agent.messages).de!.explanation).toMatch(/^M-1 \(Maschine, „pick“\) ist seit/);
    // J-3 (priority 2) is ahead of J-2 in the queue for the same item.
    const release = created.find((p) => p.params.job_id === 'J-2')!;
    expect(release.explanation).toBe('Job J-2 is blocked (no reason given) but 10 BOLT are now available (needs 5 after 4 for J-3 ahead of it in the queue). Release it.');
    const t = translations(release, agent.messages);
    expect(t.nb!.explanation).toBe('Jobb J-2 er blokkert (ingen årsak oppgitt), men nå er 10 BOLT tilgjengelig (trenger 5 etter 4 til J-3 foran den i køen). Frigi den.');
    expect(release.riskReason).toBe('the job uses 5 of 6 available BOLT after 4 for J-3 ahead of it in the queue; only 1 can be taken without a location falling below its reorder point (A: 5)');
    expect(t.de!.riskReason).toBe('der Auftrag verbraucht 5 von 6 verfügbaren BOLT nach 4 für J-3, die in der Warteschlange vor ihm stehen; nur 1 lassen sich entnehmen, ohne dass ein Lagerort unter seinen Meldebestand fällt (A: 5)');
  });

  it("stores why a run withdrew a proposal and why an approval found one stale, in English and as messages that translate", async () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.job({ job_id: 'J-2' });
    site.resource('M-1', 'pick', 'free');
    site.resource('M-2', 'pick', 'free');
    site.commit();
    const { agent, inbox } = site.agentAndInbox();
    const [p1, p2] = agent.run().created.filter((p) => p.ruleId === 'assign-job');
    // J-1 is started elsewhere (the next run withdraws its proposal); M-2 breaks down (the approval finds it stale).
    site.job({ job_id: p1!.params.job_id as string, status: 'in_progress', assigned_resource: 'M-9' });
    site.commit();
    site.nowMs += 60_000;
    const run = agent.run();
    site.resource(p2!.params.resource_id as string, 'pick', 'down');
    site.commit();
    const withdrawn = inbox.get(p1!.id)!;
    expect(withdrawn.status).toBe('withdrawn');
    expect(withdrawn.withdrawnReason).toBe(`job ${p1!.params.job_id} is now in_progress on M-9 (run ${run.runId})`);
    expect(renderMessage(withdrawn.messages!.withdrawnReason!, agent.messages, 'en')).toBe(withdrawn.withdrawnReason);
    expect(translations(withdrawn, agent.messages).nb!.withdrawnReason).toBe(`jobb ${p1!.params.job_id} er nå i gang på M-9 (kjøring ${run.runId})`);
    await site.users.add({ name: 'lena', role: 'shift_lead', pin: '2580' });
    const r = await inbox.decide(p2!.id, 'approve', { user: 'lena', pin: '2580' });
    expect(r).toMatchObject({ outcome: 'stale', reason: `resource ${p2!.params.resource_id} is now down` });
    const stale = inbox.get(p2!.id)!;
    expect(renderMessage(stale.messages!.staleReason!, agent.messages, 'en')).toBe(stale.decision!.reason);
    expect(translations(stale, agent.messages).de!.staleReason).toBe(`Ressource ${p2!.params.resource_id} ist jetzt ausgefallen`);
    expect(stale.messages!.explanation).toEqual(p2!.messages!.explanation);
  });

  it('a draft whose message has no English template is the rule failing, and nothing of it is proposed', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.commit();
    const careless: Rule = {
      id: 'careless',
      version: '1',
      description: 'says what it has no words for',
      evaluate: () => [
        { action: 'note', module: null, params: { job_id: 'J-1' }, keyParams: ['job_id'], risk: 'low', riskReason: msg('careless.risk'), explanation: msg('careless.why'), evidence: [] },
      ],
      recheck: () => ({ holds: true }),
      effectSeen: () => false,
    };
    const { agent } = site.agentAndInbox({ agent: { rules: [careless] } });
    const r = agent.run();
    expect(r.created).toEqual([]);
    expect(r.ruleErrors).toEqual([{ ruleId: 'careless', message: expect.stringMatching(/rule careless: message 'careless\.(risk|why)' has no English template/) }]);
  });

  it('a rule whose second draft has no English template proposes nothing, not its first draft either, and the other rules go on', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.job({ job_id: 'J-2' });
    site.resource('M-1', 'pick', 'free');
    site.commit();
    const halfCareless: Rule = {
      id: 'half-careless',
      version: '1',
      description: 'says the first thing and not the second',
      messages: { 'half-careless.x': { en: 'job {job}', nb: 'jobb {job}', de: 'Auftrag {job}' } },
      evaluate: (ctx) =>
        ctx.tables.work_queue.scan().map((r) => ({
          action: 'note',
          module: null,
          params: { job_id: String(r.job_id) },
          keyParams: ['job_id'],
          risk: 'low' as const,
          riskReason: msg('half-careless.x', { job: String(r.job_id) }),
          explanation: msg(r.job_id === 'J-2' ? 'half-careless.missing' : 'half-careless.x', { job: String(r.job_id) }),
          evidence: [],
        })),
      recheck: () => ({ holds: true }),
      effectSeen: () => false,
    };
    const { agent } = site.agentAndInbox({ agent: { rules: [halfCareless, ...DEFAULT_RULES] } });
    const r = agent.run();
    expect(r.created.filter((p) => p.ruleId === 'half-careless')).toEqual([]);
    expect(r.created.filter((p) => p.ruleId === 'assign-job').map((p) => p.params)).toEqual([{ job_id: 'J-1', resource_id: 'M-1' }]);
    expect(r.ruleErrors).toEqual([{ ruleId: 'half-careless', message: expect.stringMatching(/message 'half-careless\.missing' has no English template/) }]);
  });
});
