// The agents' sentences in nb and de as a shift lead reads them: numbers in the language's own
// format (as the floor UI writes every other number), a value of the site's own data (a
// capability, a blocked reason, a status the catalog has no word for) marked as data — quoted in
// the language's quotation marks — and never made into a word of the sentence. English is the
// stored record (DESIGN.md "Messages"): it stays the text it always was.
import { afterEach, describe, expect, it } from 'vitest';
import { MESSAGE_LANGS, messageCatalog, msg, placeholders, renderMessage, translations } from './messages.ts';
import { DEFAULT_RULES } from './rules/index.ts';
import { T0, TestSite } from './test-support.ts';

const CATALOG = messageCatalog(DEFAULT_RULES);
const say = (lang: (typeof MESSAGE_LANGS)[number], id: string, params: Parameters<typeof msg>[1]) => renderMessage(msg(id, params), CATALOG, lang);
const NBSP = '\u00a0';

describe('numbers in a sentence', () => {
  const reorder = { item: 'BOLT', location: 'A', onHand: 1234.5, reserved: 0, inbound: 0, position: -18, was: msg('stock-reorder.was', { was: -3 }), reorderPoint: 5, qty: 38, orderUpTo: 20 };

  it("are written in the language's format: grouping, decimal comma, minus sign (English, the record, as stored before)", () => {
    expect(say('nb', 'stock-reorder.explanation', reorder)).toBe(
      `BOLT på A: på lager 1${NBSP}234,5, reservert 0, innkommende 0 → posisjon −18 (var −3), under bestillingspunktet 5. Bestill 38 for å komme opp i 20.`,
    );
    expect(say('de', 'stock-reorder.explanation', reorder)).toBe('BOLT in A: vorrätig 1.234,5, reserviert 0, im Zulauf 0 → Bestand -18 (vorher -3), unter dem Meldebestand 5. 38 bestellen, um auf 20 zu kommen.');
    expect(say('en', 'stock-reorder.explanation', reorder)).toBe('BOLT at A: on hand 1234.5, reserved 0, inbound 0 → position -18 (was -3), below the reorder point 5. Order 38 to bring it to 20.');
  });

  it('keep every digit they have, none rounded (a quantity summed exactly), and one no format writes exactly stays as written', () => {
    expect(say('nb', 'stock-reorder.riskRoutine', { qty: 1.23456 })).toBe('en rutinebestilling på 1,23456 enheter');
    expect(say('de', 'stock-reorder.riskRoutine', { qty: 12345678.125 })).toBe('eine Routinebestellung über 12.345.678,125 Einheiten');
    expect(say('de', 'stock-reorder.riskRoutine', { qty: 1e21 })).toBe('eine Routinebestellung über 1e+21 Einheiten');
    // A text parameter is not a number, whatever its digits (an id).
    expect(say('nb', 'recheck.jobGone', { job: '-1234' })).toBe('jobb -1234 er ikke lenger i køen');
  });

  // A release's risk reason names each location's reorder point ("A: 5"): in the same format as
  // the numbers around it, not a text with the number written in.
  // A site's own rule file may pass an id as a number (a door, an order number from an INT
  // column); under `{name:data}` it is the site's data, as stored: "20 261 207" was no order's id.
  it('a number under a data mark is the value as stored, quoted as data, never grouped or given a decimal comma', () => {
    const templates = { ...CATALOG, 'mine.order': { en: 'order {order:data} for {qty}', nb: 'ordre {order:data} for {qty}', de: 'Auftrag {order:data} für {qty}' } };
    const order = (lang: (typeof MESSAGE_LANGS)[number]) => renderMessage(msg('mine.order', { order: 20261207, qty: 1234.5 }), templates, lang);
    expect(order('nb')).toBe(`ordre «20261207» for 1${NBSP}234,5`);
    expect(order('de')).toBe('Auftrag „20261207“ für 1.234,5');
    expect(order('en')).toBe('order 20261207 for 1234.5');
    expect(renderMessage(msg('mine.order', { order: [1207, 3.5], qty: 1 }), templates, 'de')).toBe('Auftrag „1207“, „3.5“ für 1');
  });

  it("in a release's reorder points by location too", () => {
    const site = new TestSite();
    try {
      site.job({ job_id: 'J-1', status: 'blocked', blocked_reason: 'material short', material_item: 'BOLT', material_qty: 1000 });
      site.stock('BOLT', 'A', { on_hand: 2000, reserved: 0 });
      site.commit();
      const { agent } = site.agentAndInbox({ agent: { config: { reorderByItem: { BOLT: { reorderPoint: 1500, orderUpTo: 3000 } } } } });
      const p = agent.run().created.find((x) => x.ruleId === 'release-blocked-job')!;
      expect(p.riskReason).toBe('the job uses 1000 of 2000 available BOLT; only 500 can be taken without a location falling below its reorder point (A: 1500)');
      expect(translations(p, agent.messages).nb!.riskReason).toBe(
        `jobben bruker 1${NBSP}000 av 2${NBSP}000 tilgjengelige BOLT; bare 500 kan tas uten at en lagerplass faller under bestillingspunktet sitt (A: 1${NBSP}500)`,
      );
      expect(translations(p, agent.messages).de!.riskReason).toBe(
        'der Auftrag verbraucht 1.000 von 2.000 verfügbaren BOLT; nur 500 lassen sich entnehmen, ohne dass ein Lagerort unter seinen Meldebestand fällt (A: 1.500)',
      );
    } finally {
      site.close();
    }
  });

  it('in a stored stock-reorder proposal translate so', () => {
    const site = new TestSite();
    try {
      site.stock('BOLT', 'A', { on_hand: 2, reserved: 20 });
      site.commit();
      const { agent } = site.agentAndInbox();
      const p = agent.run().created.find((x) => x.ruleId === 'stock-reorder')!;
      expect(p.explanation).toContain('position -18');
      expect(translations(p, agent.messages).nb!.explanation).toContain('posisjon −18');
      expect(translations(p, agent.messages).de!.explanation).toContain('Bestand -18');
    } finally {
      site.close();
    }
  });
});

describe("a value of the site's own data", () => {
  it('is quoted in nb and de, never a verb of the sentence; English, the record, as before', () => {
    const p = { job: 'J-1', priority: 1, resource: 'PICK-B', capability: 'pick' };
    expect(say('nb', 'assign-job.explanation', p)).toBe('Jobb J-1 (prioritet 1) er frigitt og venter; PICK-B er ledig og har ferdigheten «pick». Start den der.');
    expect(say('de', 'assign-job.explanation', p)).toBe('Auftrag J-1 (Priorität 1) ist freigegeben und wartet; PICK-B ist frei und hat die Fähigkeit „pick“. Dort starten.');
    expect(say('en', 'assign-job.explanation', p)).toBe('Job J-1 (priority 1) is released and waiting; PICK-B is free and can pick. Start it there.');
    expect(say('nb', 'assign-job.recheckCapability', { resource: 'M-1', capability: 'pick/pack/forklift' })).toBe('ressurs M-1 har ikke lenger ferdigheten «pick/pack/forklift»');
    expect(say('de', 'assign-job.recheckCapability', { resource: 'M-1', capability: 'pick/pack/forklift' })).toBe('Ressource M-1 hat die Fähigkeit „pick/pack/forklift“ nicht mehr');
    expect(say('en', 'assign-job.recheckCapability', { resource: 'M-1', capability: 'pick' })).toBe('resource M-1 can no longer pick');
  });

  it('in every sentence that names one, and a value the catalog knows (or a stand-in for none) in words, unquoted', () => {
    const idle = { resource: 'M-1', kind: 'crane', capability: 'pick', minutes: 12, count: 2, jobs: ['J-1', 'J-2'] };
    expect(say('nb', 'idle-resource.explanation', idle)).toBe('M-1 («crane», «pick») har vært ledig i 12 min mens 2 jobb(er) som trenger «pick» venter: J-1, J-2.');
    expect(say('de', 'idle-resource.explanation', { ...idle, kind: msg('resource.kind.machine') })).toBe('M-1 (Maschine, „pick“) ist seit 12 Min. frei, während 2 Auftrag/Aufträge mit Bedarf an „pick“ warten: J-1, J-2.');
    expect(say('en', 'idle-resource.explanation', idle)).toBe('M-1 (crane, pick) has been free for 12 min while 2 job(s) needing pick wait: J-1, J-2.');
    expect(say('nb', 'idle-resource.recheckNoWork', { capability: 'pick' })).toBe('ingen jobb som trenger «pick» venter lenger');
    expect(say('nb', 'job.blocked', { reason: 'material short: ITEM-003' })).toBe('blokkert («material short: ITEM-003»)');
    expect(say('de', 'job.blocked', { reason: msg('reason.none') })).toBe('blockiert (kein Grund)');
    expect(say('en', 'job.blocked', { reason: 'material short' })).toBe('blocked (material short)');
    expect(say('de', 'release-blocked-job.recheckNotMaterialReason', { job: 'J-1', reason: 'tool broken' })).toBe('Auftrag J-1 ist nicht mehr wegen Material blockiert („tool broken“)');
    // A status or state the seed tables do not know stays its code: shown as data.
    expect(say('nb', 'recheck.jobNow', { job: 'J-1', status: 'paused' })).toBe('jobb J-1 er nå «paused»');
    expect(say('nb', 'recheck.jobNow', { job: 'J-1', status: msg('job.status.in_progress') })).toBe('jobb J-1 er nå i gang');
    expect(say('de', 'recheck.resourceNow', { resource: 'M-1', state: 'maintenance' })).toBe('Ressource M-1 ist jetzt „maintenance“');
    expect(say('de', 'idle-resource.recheckState', { resource: 'M-1', state: 'maintenance', since: '?' })).toBe('Ressource M-1 ist jetzt „maintenance“ (seit ?)');
    expect(say('nb', 'assign-job.recheckAssigned', { job: 'J-1', status: 'paused', resource: 'M-1' })).toBe('jobb J-1 er nå «paused» på M-1');
    const late = { job: 'J-1', state: msg('job.status.released'), due: '2026-12-01T10:00:00.000Z', minutes: 60, late: msg('escalate-late-job.lateMinutes', { n: 5 }), priority: 3 };
    expect(say('nb', 'escalate-late-job.explanation', { ...late, capability: 'weld' })).toContain('ca. 60 min («weld»)');
    expect(say('nb', 'escalate-late-job.explanation', { ...late, capability: msg('capability.unknown') })).toContain('ca. 60 min (ukjent ferdighet)');
  });

  it("is marked so in every language's template of every message that has one (the English marks render as nothing: the record)", () => {
    const DATA = new Set(['capability', 'reason', 'status', 'state', 'kind']);
    // Parameters of these names that are always a message of the catalog (a rule's reason, a job's state in words).
    const WORDS = new Set(['recheck.withdrawn reason', 'recheck.withdrawnChanged reason', 'escalate-late-job.explanation state']);
    for (const [id, t] of Object.entries(CATALOG)) {
      for (const lang of MESSAGE_LANGS) {
        for (const p of placeholders(t[lang])) if (DATA.has(p) && !WORDS.has(`${id} ${p}`)) expect.fail(`${id} ${lang}: {${p}} is a value of the site's data: {${p}:data}`);
      }
    }
    expect(placeholders('{a:data} and {b} and {a:data}')).toEqual(['a:data', 'b']);
  });

  it('a run stores a capability the English way and translates it as data', () => {
    const site = new TestSite();
    try {
      site.job({ job_id: 'J-1', capability: 'forklift' });
      site.resource('FL-1', 'forklift', 'free', T0 - 40 * 60_000);
      site.commit();
      const { agent } = site.agentAndInbox();
      const p = agent.run().created.find((x) => x.ruleId === 'assign-job')!;
      expect(p.explanation).toBe('Job J-1 (priority 1) is released and waiting; FL-1 is free and can forklift. Start it there.');
      expect(translations(p, agent.messages).nb!.explanation).toContain('FL-1 er ledig og har ferdigheten «forklift»');
    } finally {
      site.close();
    }
  });
});

describe('an approved proposal named by its id', () => {
  it('is said with its noun in nb and de', () => {
    const p = { resource: 'M-1', job: 'J-1', proposal: 'P-20261201-120000-000-1' };
    expect(say('nb', 'assign-job.recheckPromised', p)).toBe('ressurs M-1 er lovet bort til jobb J-1 av det godkjente forslaget P-20261201-120000-000-1');
    expect(say('de', 'idle-resource.recheckPromised', p)).toBe('Ressource M-1 ist Auftrag J-1 durch den genehmigten Vorschlag P-20261201-120000-000-1 zugesagt');
    expect(say('en', 'idle-resource.recheckPromised', p)).toBe('resource M-1 is promised to job J-1 by the approved P-20261201-120000-000-1');
  });
});
