// Rule: release a job blocked on material once the stock covers it: the item's available
// quantity (on_hand − reserved, summed over locations) is at least the job's material_qty.
// Only jobs blocked for material (no reason, or a reason that names material/stock/short).
// Command: operations `release_job {job_id}`. Medium risk when releasing would take the item
// below its reorder point.

import { reorderPolicy } from '../config.ts';
import { available, job, stockOf } from '../rows.ts';
import { gone, HOLDS, type Rule, type RuleContext } from '../rule.ts';
import type { Row } from '../read-only-table.ts';

const MATERIAL_REASON = /material|stock|short/i;

function coverage(ctx: RuleContext, item: string): { rows: Row[]; available: number } {
  const rows = stockOf(ctx.tables.stock, item);
  return { rows, available: rows.reduce((s, r) => s + available(r), 0) };
}

export const releaseBlockedJob: Rule = {
  id: 'release-blocked-job',
  version: '1',
  description: 'Release a job blocked on material once available stock (on_hand − reserved) covers its material quantity.',

  evaluate(ctx) {
    const drafts = [];
    for (const r of ctx.tables.work_queue.scan()) {
      const j = job(r);
      if (j.status !== 'blocked' || j.material_item === null || j.material_qty === null || j.material_qty <= 0) continue;
      if (j.blocked_reason !== null && !MATERIAL_REASON.test(j.blocked_reason)) continue;
      const c = coverage(ctx, j.material_item);
      if (c.available < j.material_qty) continue;
      const left = c.available - j.material_qty;
      const rp = reorderPolicy(ctx.config, j.material_item).reorderPoint;
      drafts.push({
        action: 'release_job',
        module: 'operations',
        params: { job_id: j.job_id, material_item: j.material_item, material_qty: j.material_qty },
        keyParams: ['job_id'],
        risk: left < rp ? ('medium' as const) : ('low' as const),
        riskReason:
          left < rp
            ? `the job uses ${j.material_qty} of ${c.available} available ${j.material_item}, leaving ${left}, below the reorder point ${rp}`
            : `${left} ${j.material_item} stay available after the job takes ${j.material_qty}`,
        explanation: `Job ${j.job_id} is blocked (${j.blocked_reason ?? 'no reason given'}) but ${c.available} ${j.material_item} are now available (needs ${j.material_qty}). Release it.`,
        evidence: [
          { table: 'work_queue' as const, rows: [r] },
          { table: 'stock' as const, rows: c.rows },
        ],
      });
    }
    return drafts;
  },

  recheck(ctx, p) {
    const jr = ctx.tables.work_queue.get({ job_id: p.params.job_id! });
    if (!jr) return gone(`job ${p.params.job_id} is no longer in the queue`);
    const j = job(jr);
    if (j.status !== 'blocked') return gone(`job ${j.job_id} is now ${j.status}`);
    if (j.material_item === null || j.material_qty === null) return gone(`job ${j.job_id} no longer names its material`);
    const c = coverage(ctx, j.material_item);
    if (c.available < j.material_qty) return gone(`only ${c.available} ${j.material_item} available now; the job needs ${j.material_qty}`);
    return HOLDS;
  },

  effectSeen(ctx, p) {
    const jr = ctx.tables.work_queue.get({ job_id: p.params.job_id! });
    return jr === undefined || job(jr).status !== 'blocked';
  },
};
