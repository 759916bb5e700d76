// The agent's tunables, each with a default and a reason; `agentConfig` validates and fills them
// ("expected X, got Y" errors name the key, AgentConfigError). A site sets them in config.json's
// `agent` section (core/site/config.ts; the evidence retentions in its `evidence` section), a
// replay's rules config in its `config` (core/replay/agent-spec.ts).

import { AgentError } from './errors.ts';

export interface ReorderPolicy {
  /** Propose replenishment when on_hand − reserved + inbound falls below this. */
  readonly reorderPoint: number;
  /** …for a quantity that brings it back up to this. */
  readonly orderUpTo: number;
}

/**
 * An item's policy, and the locations of it that keep their own (a pick face, a reserve). The
 * levels are both given or both left out (an item that has only `locations`: `defaultReorder`
 * for its other locations).
 */
export interface ItemReorderPolicy extends Partial<ReorderPolicy> {
  /** Policy by location of this item; the item's own (or the default) for its other locations. */
  readonly locations?: Readonly<Record<string, ReorderPolicy>>;
}

export interface AgentConfig {
  /** How often the agent runs (`start()`); the work queue's decisions are made by the minute. */
  readonly intervalMs: number;
  /**
   * How long evidence tags of a run that made a proposal are kept: long enough for a person to
   * decide (a weekend and a holiday). A decided proposal's evidence is kept apart, for the inbox's
   * `decisionEvidenceRetentionMs` (a year); HQ keeps every tag synced to it.
   */
  readonly evidenceRetentionMs: number;
  /** How long tags of a run that made no proposal are kept (only the next run's baseline needs them). */
  readonly baselineRetentionMs: number;
  /** Estimated run time of a job by its capability; `defaultJobDurationMs` for others. */
  readonly jobDurationMsByCapability: Readonly<Record<string, number>>;
  readonly defaultJobDurationMs: number;
  /**
   * Reorder policy by item, optionally by location within an item (`locations`); `defaultReorder`
   * for other items. An item given only `locations` takes `defaultReorder` for its other locations.
   */
  readonly reorderByItem: Readonly<Record<string, ItemReorderPolicy>>;
  readonly defaultReorder: ReorderPolicy;
  /** A resource free at least this long while matching work waits is flagged as idle. */
  readonly idleMsMin: number;
  /** Replenishment quantities from this size up are medium risk. */
  readonly replenishQtyMediumMin: number;
}

/** What a caller gives `agentConfig` (config.json's `agent`, a replay's rules config): any of its keys. */
export type AgentConfigInput = Partial<AgentConfig>;

export const DEFAULT_AGENT_CONFIG: AgentConfig = {
  intervalMs: 60_000,
  evidenceRetentionMs: 7 * 24 * 3600_000,
  baselineRetentionMs: 24 * 3600_000,
  jobDurationMsByCapability: {},
  defaultJobDurationMs: 3600_000,
  reorderByItem: {},
  defaultReorder: { reorderPoint: 5, orderUpTo: 20 },
  idleMsMin: 15 * 60_000,
  replenishQtyMediumMin: 100,
};

/** Every key of AgentConfig, in the order its docs list them. */
export const AGENT_CONFIG_KEYS = [
  'intervalMs',
  'evidenceRetentionMs',
  'baselineRetentionMs',
  'jobDurationMsByCapability',
  'defaultJobDurationMs',
  'reorderByItem',
  'defaultReorder',
  'idleMsMin',
  'replenishQtyMediumMin',
] as const satisfies readonly (keyof AgentConfig)[];

/**
 * A config value that is not what a key expects. `key` is the key's path inside the agent config
 * (`reorderByItem.ITEM-007.orderUpTo`), so a file that nests the agent config (a site's
 * config.json `agent`, a replay's rules config `config`) can name it from its own top.
 */
export class AgentConfigError extends AgentError {
  readonly key: string;
  /** What was expected and what was got, without the key. */
  readonly problem: string;
  constructor(key: string, problem: string) {
    super('InvalidArgument', `agent config ${key}: ${problem}`);
    this.key = key;
    this.problem = problem;
  }
}

const describe = (v: unknown): string => (v === undefined ? 'nothing' : Array.isArray(v) ? 'an array' : v !== null && typeof v === 'object' ? 'an object' : JSON.stringify(v));
const positive = (key: string, v: unknown): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new AgentConfigError(key, `expected an integer ≥ 1, got ${describe(v)}`);
  return v;
};
const nonNegative = (key: string, v: unknown): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new AgentConfigError(key, `expected an integer ≥ 0, got ${describe(v)}`);
  return v;
};
const record = (key: string, v: unknown, expected: string): Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new AgentConfigError(key, `expected an object ${expected}, got ${describe(v)}`);
  return v as Record<string, unknown>;
};
const policy = (key: string, p: unknown): ReorderPolicy => {
  const o = record(key, p, '{reorderPoint, orderUpTo}');
  for (const k of Object.keys(o)) if (k !== 'reorderPoint' && k !== 'orderUpTo') throw new AgentConfigError(`${key}.${k}`, 'unknown key (expected reorderPoint, orderUpTo)');
  return levels(key, o);
};
const levels = (key: string, o: Record<string, unknown>): ReorderPolicy => {
  const reorderPoint = nonNegative(`${key}.reorderPoint`, o.reorderPoint);
  const orderUpTo = positive(`${key}.orderUpTo`, o.orderUpTo);
  if (orderUpTo <= reorderPoint) throw new AgentConfigError(key, `expected orderUpTo > reorderPoint, got ${orderUpTo} ≤ ${reorderPoint}`);
  return Object.freeze({ reorderPoint, orderUpTo });
};
/** Item ids, locations and capabilities are the modules' codes: any non-empty name without control characters. */
const nameKey = (key: string, name: string, what = 'an item id or capability'): void => {
  if (name.length === 0 || name.length > 256 || /[\u0000-\u001f\u007f]/.test(name)) throw new AgentConfigError(key, `expected ${what} of 1 to 256 characters without control characters, got ${JSON.stringify(name)}`);
};
/** An item's entry: its own levels, and/or `locations` (then its levels may be left out). */
const itemPolicy = (key: string, p: unknown): ItemReorderPolicy => {
  const o = record(key, p, '{reorderPoint, orderUpTo, locations}');
  for (const k of Object.keys(o)) {
    if (k !== 'reorderPoint' && k !== 'orderUpTo' && k !== 'locations') throw new AgentConfigError(`${key}.${k}`, 'unknown key (expected reorderPoint, orderUpTo, locations)');
  }
  if (!Object.hasOwn(o, 'locations')) return levels(key, o);
  const own = o.reorderPoint === undefined && o.orderUpTo === undefined ? undefined : levels(key, o);
  const given = record(`${key}.locations`, o.locations, 'of location → {reorderPoint, orderUpTo}');
  // fromEntries makes own properties of every name ('__proto__' included), where assignment would not.
  const locations = Object.fromEntries(
    Object.entries(given).map(([location, lp]) => {
      nameKey(`${key}.locations.${location}`, location, 'a location');
      return [location, policy(`${key}.locations.${location}`, lp)];
    }),
  );
  return Object.freeze({ ...own, locations: Object.freeze(locations) });
};

/** Validates every key of a (partial) agent config and fills the rest from DEFAULT_AGENT_CONFIG. */
export function agentConfig(partial: AgentConfigInput = {}): AgentConfig {
  const given = record('(top level)', partial, 'of agent config keys');
  for (const k of Object.keys(given)) {
    if (!(AGENT_CONFIG_KEYS as readonly string[]).includes(k)) throw new AgentConfigError(k, `unknown key (expected one of ${AGENT_CONFIG_KEYS.join(', ')})`);
  }
  const c = { ...DEFAULT_AGENT_CONFIG, ...partial };
  for (const k of ['intervalMs', 'evidenceRetentionMs', 'baselineRetentionMs', 'defaultJobDurationMs', 'replenishQtyMediumMin'] as const) positive(k, c[k]);
  nonNegative('idleMsMin', c.idleMsMin);
  const durations = record('jobDurationMsByCapability', c.jobDurationMsByCapability, 'of capability → ms');
  for (const [cap, ms] of Object.entries(durations)) {
    nameKey(`jobDurationMsByCapability.${cap}`, cap);
    positive(`jobDurationMsByCapability.${cap}`, ms);
  }
  const defaultReorder = policy('defaultReorder', c.defaultReorder);
  const items = record('reorderByItem', c.reorderByItem, 'of item → {reorderPoint, orderUpTo, locations}');
  // fromEntries makes own properties of every name ('__proto__' included), where assignment would not.
  const reorderByItem: Record<string, ItemReorderPolicy> = Object.fromEntries(
    Object.entries(items).map(([item, p]) => {
      nameKey(`reorderByItem.${item}`, item);
      return [item, itemPolicy(`reorderByItem.${item}`, p)];
    }),
  );
  return Object.freeze({
    ...c,
    jobDurationMsByCapability: Object.freeze(Object.fromEntries(Object.entries(durations)) as Record<string, number>),
    reorderByItem: Object.freeze(reorderByItem),
    defaultReorder,
  });
}

// Own keys only: an item or capability named like an Object.prototype member ('constructor') is
// the modules' data, not a lookup of the prototype.
/**
 * The policy of an item at a location and where it comes from: the location's own, else the
 * item's, else the default. Without a location (a whole item's stock, summed over its locations)
 * the item's, else the default.
 */
export const reorderLookup = (c: AgentConfig, item: string, location?: string): { policy: ReorderPolicy; scope: 'location' | 'item' | 'default' } => {
  if (!Object.hasOwn(c.reorderByItem, item)) return { policy: c.defaultReorder, scope: 'default' };
  const p = c.reorderByItem[item]!;
  if (location !== undefined && p.locations !== undefined && Object.hasOwn(p.locations, location)) return { policy: p.locations[location]!, scope: 'location' };
  if (p.reorderPoint === undefined || p.orderUpTo === undefined) return { policy: c.defaultReorder, scope: 'default' };
  return { policy: p.locations === undefined ? (p as ReorderPolicy) : { reorderPoint: p.reorderPoint, orderUpTo: p.orderUpTo }, scope: 'item' };
};
/** The policy of an item at a location (`reorderLookup`). */
export const reorderPolicy = (c: AgentConfig, item: string, location?: string): ReorderPolicy => reorderLookup(c, item, location).policy;
/** Where an item's policy at a location comes from: the location's own, the item's, or the default (`reorderLookup`). */
export const reorderScope = (c: AgentConfig, item: string, location?: string): 'location' | 'item' | 'default' => reorderLookup(c, item, location).scope;
export const jobDurationMs = (c: AgentConfig, capability: string | null): number =>
  capability !== null && Object.hasOwn(c.jobDurationMsByCapability, capability) ? c.jobDurationMsByCapability[capability]! : c.defaultJobDurationMs;
