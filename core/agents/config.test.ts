// agentConfig: every key validated and named in its error (AgentConfigError.key), the rest filled
// from the defaults; the policy lookups read own keys only.

import { describe, expect, it } from 'vitest';
import { AgentConfigError, agentConfig, DEFAULT_AGENT_CONFIG, jobDurationMs, reorderPolicy } from './config.ts';

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
      [{ reorderByItem: { BOLT: { reorderpoint: 3, orderUpTo: 9 } } }, 'reorderByItem.BOLT.reorderpoint', /unknown key \(expected reorderPoint, orderUpTo\)/],
      [{ reorderByItem: { BOLT: { orderUpTo: 9 } } }, 'reorderByItem.BOLT.reorderPoint', /≥ 0, got nothing/],
      [{ reorderByItem: [] }, 'reorderByItem', /expected an object of item → \{reorderPoint, orderUpTo\}, got an array/],
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
