// release-blocked-job releases only jobs blocked for material. The operations contract
// (operations.jobs v1) has no reason codes: `blocked_reason` is free text. v7 took any reason that
// contained "material", "stock" or "short" anywhere, so a job blocked "short-staffed" (or "QC: in
// restock area", "shortlisted for audit") was offered a release the moment its item's stock covered
// it — the floor's block had nothing to do with material. v8 reads whole words.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { materialReason } from './rules/release-blocked-job.ts';
import { TestSite } from './test-support.ts';

let site: TestSite;
beforeEach(() => {
  site = new TestSite();
});
afterEach(() => site.close());

describe('release-blocked-job: which reasons name material', () => {
  it('proposes no release for a job blocked for staff, and one for a job short of material', () => {
    site.job({ job_id: 'J-1', status: 'blocked', blocked_reason: 'short-staffed', material_item: 'BOLT', material_qty: 5 });
    site.job({ job_id: 'J-2', status: 'blocked', blocked_reason: 'material short: BOLT', material_item: 'BOLT', material_qty: 5 });
    site.stock('BOLT', 'A', { on_hand: 100, reserved: 0, inbound: 0 });
    site.commit();
    const { agent } = site.agentAndInbox();
    const released = agent.run().created.filter((p) => p.ruleId === 'release-blocked-job');
    expect(released.map((p) => p.params.job_id)).toEqual(['J-2']);
  });

  it.each([
    ['material short: BOLT', true],
    ['no material', true],
    ['Materials missing', true],
    ['out of stock', true],
    ['out-of-stock', true],
    ['STOCKOUT', true],
    ['MATERIAL_SHORT', true],
    ['short: BOLT', true],
    ['shortage of BOLT', true],
    ['short 5 pcs', true],
    // A reason code written in camel case is words too (v7 took each of these; a first v8 read each
    // as one unknown word and proposed no release for it).
    ['MaterialShortage', true],
    ['OutOfStock', true],
    ['noStock', true],
    ['ShortStaffed', false],
    // The floor's own language: a Norwegian or German word made with "material" (materiale,
    // materialer, Materialmangel, Materialien) names material, as v7 found it inside them.
    ['mangler materiale', true],
    ['venter på materialer', true],
    ['Materialmangel', true],
    ['Materialien fehlen', true],
    // The verb "materialise" (to appear, to come about) names no material, in English, Norwegian
    // (materialisere) or German (materialisieren): the first "begins with material" took these.
    ['Materialised view not refreshed', false],
    ['waiting on materialized view', false],
    ['driver has not materialised', false],
    ['MaterializationPending', false],
    ['Materialisierung ausstehend', false],
    ['short-staffed', false],
    ['short staffed', false],
    ['short-handed', false],
    ['staff shortage', false],
    ['short of drivers', false],
    ['machine fault', false],
    ['waiting', false],
    ['QC hold: restock area', false],
    ['shortlisted for audit', false],
    ['stocktaking', false],
    // A proper name is no reason code: the Gaelic "Mc"/"Mac" before a capital is part of a
    // surname, not a word of its own ("McStock" read as "Mc Stock" was a material block).
    ['waiting for McStock', false],
    ['QC hold by J. MacShort', false],
    ['McStock: out of stock', true],
    ['MACHINE_DOWN', false],
  ])('%j names material: %s', (reason, expected) => {
    expect(materialReason(reason)).toBe(expected);
  });
});
