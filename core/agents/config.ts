// The agent's tunables, each with a default and a reason; `agentConfig` validates and fills them
// ("expected X, got Y" errors name the key).

import { AgentError } from './errors.ts';

export interface ReorderPolicy {
  /** Propose replenishment when on_hand − reserved + inbound falls below this. */
  readonly reorderPoint: number;
  /** …for a quantity that brings it back up to this. */
  readonly orderUpTo: number;
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
  /** Reorder policy by item; `defaultReorder` for others. */
  readonly reorderByItem: Readonly<Record<string, ReorderPolicy>>;
  readonly defaultReorder: ReorderPolicy;
  /** A resource free at least this long while matching work waits is flagged as idle. */
  readonly idleMsMin: number;
  /** Replenishment quantities from this size up are medium risk. */
  readonly replenishQtyMediumMin: number;
}

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

const positive = (key: string, v: unknown): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new AgentError('InvalidArgument', `agent config ${key}: expected an integer ≥ 1, got ${JSON.stringify(v)}`);
  return v;
};
const nonNegative = (key: string, v: unknown): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new AgentError('InvalidArgument', `agent config ${key}: expected an integer ≥ 0, got ${JSON.stringify(v)}`);
  return v;
};
const policy = (key: string, p: ReorderPolicy): ReorderPolicy => {
  const reorderPoint = nonNegative(`${key}.reorderPoint`, p?.reorderPoint);
  const orderUpTo = positive(`${key}.orderUpTo`, p?.orderUpTo);
  if (orderUpTo <= reorderPoint) throw new AgentError('InvalidArgument', `agent config ${key}: expected orderUpTo > reorderPoint, got ${orderUpTo} ≤ ${reorderPoint}`);
  return { reorderPoint, orderUpTo };
};

export function agentConfig(partial: Partial<AgentConfig> = {}): AgentConfig {
  const c = { ...DEFAULT_AGENT_CONFIG, ...partial };
  for (const k of ['intervalMs', 'evidenceRetentionMs', 'baselineRetentionMs', 'defaultJobDurationMs', 'replenishQtyMediumMin'] as const) positive(k, c[k]);
  nonNegative('idleMsMin', c.idleMsMin);
  for (const [cap, ms] of Object.entries(c.jobDurationMsByCapability)) positive(`jobDurationMsByCapability.${cap}`, ms);
  const reorderByItem = Object.fromEntries(Object.entries(c.reorderByItem).map(([item, p]) => [item, policy(`reorderByItem.${item}`, p)]));
  return Object.freeze({ ...c, reorderByItem, defaultReorder: policy('defaultReorder', c.defaultReorder) });
}

export const reorderPolicy = (c: AgentConfig, item: string): ReorderPolicy => c.reorderByItem[item] ?? c.defaultReorder;
export const jobDurationMs = (c: AgentConfig, capability: string | null): number => (capability !== null && c.jobDurationMsByCapability[capability]) || c.defaultJobDurationMs;
