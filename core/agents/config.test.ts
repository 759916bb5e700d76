// agentConfig: every key validated and named in its error (AgentConfigError.key), the rest filled
// from the defaults; the policy lookups read own keys only.

import { describe, expect, it } from 'vitest';
import { AgentConfigError, agentConfig, DEFAULT_AGENT_CONFIG, jobDurationMs, reorderPolicy, reorderScope } from './config.ts';

const refused = (partial: unknown): AgentConfigError => {
  try {
    agentConfig(partial as never);
  } catch (e) {
    expect(e).toBeInstanceOf(AgentConfigError);
    return e as AgentConfigError;
  }
  throw new Error(`accepted ${JSON.stringify(partial)}`);
};

describe('agentConfig', () => {
  it('fills what is not given from the defaults and keeps what is', () => {
    const c = agentConfig({ idleMsMin: 0, reorderByItem: { 'ITEM-007': { reorderPoint: 10, orderUpTo: 40 } }, jobDurationMsByCapability: { pack: 1_800_000 } });
    expect(c.idleMsMin).toBe(0);
    expect(c.intervalMs).toBe(DEFAULT_AGENT_CONFIG.intervalMs);
    expect(reorderPolicy(c, 'ITEM-007')).toEqual({ reorderPoint: 10, orderUpTo: 40 });
    expect(reorderPolicy(c, 'ITEM-008')).toEqual(DEFAULT_AGENT_CONFIG.defaultReorder);
    expect(jobDurationMs(c, 'pack')).toBe(1_800_000);
    expect(jobDurationMs(c, 'weld')).toBe(DEFAULT_AGENT_CONFIG.defaultJobDurationMs);
    expect(jobDurationMs(c, null)).toBe(DEFAULT_AGENT_CONFIG.defaultJobDurationMs);
    expect(Object.isFrozen(c.reorderByItem) && Object.isFrozen(c.jobDurationMsByCapability)).toBe(true);
  });

  it('names the key and what it expected for each kind of bad value', () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ intervalMs: 0 }, 'intervalMs', /expected an integer ≥ 1, got 0/],
      [{ idleMsMin: -1 }, 'idleMsMin', /≥ 0, got -1/],
      [{ replenishQtyMediumMin: '100' }, 'replenishQtyMediumMin', /got "100"/],
      [{ reorderPoint: 5 }, 'reorderPoint', /unknown key \(expected one of intervalMs, .*replenishQtyMediumMin\)/],
      [{ defaultReorder: { reorderPoint: 20, orderUpTo: 20 } }, 'defaultReorder', /orderUpTo > reorderPoint, got 20 ≤ 20/],
      [{ defaultReorder: 5 }, 'defaultReorder', /expected an object \{reorderPoint, orderUpTo\}, got 5/],
      [{ reorderByItem: { BOLT: { reorderpoint: 3, orderUpTo: 9 } } }, 'reorderByItem.BOLT.reorderpoint', /unknown key \(expected reorderPoint, orderUpTo, locations\)/],
      [{ reorderByItem: { BOLT: { orderUpTo: 9 } } }, 'reorderByItem.BOLT.reorderPoint', /≥ 0, got nothing/],
      [{ reorderByItem: [] }, 'reorderByItem', /expected an object of item → \{reorderPoint, orderUpTo, locations\}, got an array/],
      [{ reorderByItem: { BOLT: { locations: { 'A-01': { reorderPoint: 9, orderUpTo: 9 } } } } }, 'reorderByItem.BOLT.locations.A-01', /orderUpTo > reorderPoint, got 9 ≤ 9/],
      [{ reorderByItem: { BOLT: { locations: { 'A-01': { reorderPoint: 1, orderUpTo: 2, locations: {} } } } } }, 'reorderByItem.BOLT.locations.A-01.locations', /unknown key \(expected reorderPoint, orderUpTo\)/],
      [{ reorderByItem: { BOLT: { locations: ['A-01'] } } }, 'reorderByItem.BOLT.locations', /expected an object of location → \{reorderPoint, orderUpTo\}, got an array/],
      [{ reorderByItem: { BOLT: { locations: { 'A\n01': { reorderPoint: 1, orderUpTo: 2 } } } } }, 'reorderByItem.BOLT.locations.A\n01', /expected a location of 1 to 256 characters/],
      // Levels beside `locations` are the item's own, so both or neither.
      [{ reorderByItem: { BOLT: { orderUpTo: 9, locations: {} } } }, 'reorderByItem.BOLT.reorderPoint', /≥ 0, got nothing/],
      [{ reorderByItem: { '': { reorderPoint: 1, orderUpTo: 2 } } }, 'reorderByItem.', /1 to 256 characters/],
      [{ jobDurationMsByCapability: { pack: 0 } }, 'jobDurationMsByCapability.pack', /≥ 1, got 0/],
      [{ jobDurationMsByCapability: 3600 }, 'jobDurationMsByCapability', /expected an object of capability → ms, got 3600/],
      [null, '(top level)', /got null/],
    ];
    for (const [partial, key, problem] of cases) {
      const e = refused(partial);
      expect(e.key, JSON.stringify(partial)).toBe(key);
      expect(e.problem).toMatch(problem);
      expect(e.message).toBe(`agent config ${key}: ${e.problem}`);
    }
  });

  it('gives a location of an item its own policy, the item its own elsewhere, and other items the default', () => {
    const c = agentConfig({
      defaultReorder: { reorderPoint: 4, orderUpTo: 16 },
      reorderByItem: {
        // A pick face refilled from the reserve in small amounts; the item's other locations order more.
        'ITEM-001': { reorderPoint: 40, orderUpTo: 150, locations: { 'A-01': { reorderPoint: 10, orderUpTo: 30 } } },
        // Only a location given: the item's other locations take the default.
        'ITEM-002': { locations: { DOCK: { reorderPoint: 0, orderUpTo: 5 } } },
      },
    });
    expect(reorderPolicy(c, 'ITEM-001', 'A-01')).toEqual({ reorderPoint: 10, orderUpTo: 30 });
    expect(reorderPolicy(c, 'ITEM-001', 'B-01')).toEqual({ reorderPoint: 40, orderUpTo: 150 });
    // The whole item (a job's material, counted over every location) has the item's own.
    expect(reorderPolicy(c, 'ITEM-001')).toEqual({ reorderPoint: 40, orderUpTo: 150 });
    expect(reorderPolicy(c, 'ITEM-002', 'DOCK')).toEqual({ reorderPoint: 0, orderUpTo: 5 });
    expect(reorderPolicy(c, 'ITEM-002', 'A-01')).toEqual({ reorderPoint: 4, orderUpTo: 16 });
    expect([reorderScope(c, 'ITEM-001', 'A-01'), reorderScope(c, 'ITEM-001', 'B-01'), reorderScope(c, 'ITEM-002', 'DOCK'), reorderScope(c, 'ITEM-002', 'A-01'), reorderScope(c, 'ITEM-003')]).toEqual([
      'location',
      'item',
      'location',
      'default', // ITEM-002 has no levels of its own: its other locations are the default's, and say so
      'default',
    ]);
    // …and follow the default when it changes.
    expect(reorderPolicy(agentConfig({ ...c, defaultReorder: { reorderPoint: 7, orderUpTo: 70 } }), 'ITEM-002', 'A-01')).toEqual({ reorderPoint: 7, orderUpTo: 70 });
    expect(reorderPolicy(c, 'ITEM-003', 'A-01')).toEqual({ reorderPoint: 4, orderUpTo: 16 });
    // Locations too are data: own keys only.
    expect(reorderPolicy(c, 'ITEM-001', 'constructor')).toEqual({ reorderPoint: 40, orderUpTo: 150 });
    expect(Object.isFrozen(c.reorderByItem['ITEM-001']!.locations)).toBe(true);
  });

  it('looks items and capabilities up among the configured ones only, not on the prototype', () => {
    const c = agentConfig({});
    // Module codes are data: an item called 'constructor' has the default policy, not a function.
    expect(reorderPolicy(c, 'constructor')).toEqual(DEFAULT_AGENT_CONFIG.defaultReorder);
    expect(jobDurationMs(c, 'toString')).toBe(DEFAULT_AGENT_CONFIG.defaultJobDurationMs);
    const d = agentConfig({ reorderByItem: { constructor: { reorderPoint: 1, orderUpTo: 2 } } });
    expect(reorderPolicy(d, 'constructor')).toEqual({ reorderPoint: 1, orderUpTo: 2 });
    // As read from config.json: '__proto__' is an own key there, and stays one.
    const e = agentConfig(JSON.parse('{"reorderByItem": {"__proto__": {"reorderPoint": 3, "orderUpTo": 9}}, "jobDurationMsByCapability": {"__proto__": 60000}}'));
    expect(reorderPolicy(e, '__proto__')).toEqual({ reorderPoint: 3, orderUpTo: 9 });
    expect(jobDurationMs(e, '__proto__')).toBe(60_000);
  });
});
