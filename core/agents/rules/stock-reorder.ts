// Rule (changelog-triggered): stock falling below its reorder point → propose a replenishment.
// It reads only what changed in `stock` between the previous run's tag and this run's snapshot
// (ReadOnlyTable.changesSince → Table.changes, mode diff), so a quiet table costs nothing. A row
// triggers when its position (on_hand − reserved + inbound) is below the reorder point of the item
// at that location (config `reorderByItem`, a location's own under `locations`, else the item's,
// else `defaultReorder`) and was not before (or is new). The first run (no previous tag) sees every row as new.
// Command: procurement `replenish {item, location, qty}` for qty = orderUpTo − position.
// Effect: the position rose by qty, or — when orders reserved more meanwhile, which lowers the
// position by as much — the row's inbound rose by qty over the proposal's evidence row; or either
// rose by qty over the row at the snapshot the approval checked (v3). The recheck holds for any
// position below the point, so the state may have moved between the proposal and the approval: a
// delivery (inbound down, on_hand up) and a pick after it left the order's effect short of both
// v2 baselines, and its command timed out. v4: moves after the approval (a delivery and a pick
// between the approval and procurement's order) hid it from all of those; procurement's own
// versions of the row since the checked snapshot show the order as a step of inbound by qty. Where
// the tables cannot tell (the checked snapshot or a commit since expired), the module's ok ack
// counts. Still hidden: a delivery and the order in one commit (a net step short of qty).
// v5: a row deleted (it cannot show the order any more) is applied when procurement's versions of
// it show the order, else on the module's ok ack; v4 answered "not yet" until the write-back gave up.
// v6: a row whose proposal the checks between runs withdrew (it recovered) and that fell below its
// point again before the next run is proposed (RuleContext.withdrawnBetweenRuns): its baseline and
// its state now were both below, so v5 saw no crossing and left it below, unproposed, for good.
// v7: a row whose approved replenishment procurement refused (a failed command: the inbox lets
// the situation come back at once, core/inbox markCommand) and that is still below its point is
// proposed again (RuleContext.failedCommands); v6 saw no crossing and never proposed it again.
// v8: a row whose situation's quiet ended since the baseline (RuleContext.quietEnded: a reorder
// rejected, or approved and its command timed out, resuggestAfterDecisionMs ago) and that is still
// below its point, not underway, is proposed again — as the rules that look at every row each run
// do when the quiet ends. v7 drafted only rows that changed: one that stayed below through the
// quiet (a delivery due that never came) was never proposed again until it moved.
// v9: a row whose on_hand inventory has not sent (partial updates: commerce's reservation or
// procurement's inbound made the row first) is not evaluated — the run's notes say so
// (RuleContext.note) — and inventory's first count is the row's first state (no baseline: a count
// below the point is a crossing). v8 read the missing on_hand as 0, so such a row's position was
// −reserved and it was proposed, an order of orderUpTo + reserved for stock nobody had counted; and
// when the count came, its baseline "was below" and a count below the point was never proposed. A
// missing reserved or inbound still counts as 0 (commerce and procurement send rows only for items
// with reservations or open orders: missing is none). And an open proposal holds until the position
// is at or above the point by `withdrawMargin` — a tenth of the band between the point and the
// order-up-to level —, not at the point: v8 withdrew and proposed anew on every swing of a level
// between 4 and 5 (point 5). A row is proposed, as before, only below the point.
// v10: a row whose approved order was applied and that is below its point again is a new
// occurrence (`newOccurrence`), proposed at once instead of after the approval's quiet
// (resuggestAfterDecisionMs, 8 h): the order's inbound shows in the row now, or the row was at or
// above its point plus the margin (recovered, where the recheck withdraws) after the snapshot the
// approval checked — at the rule's baseline (a later snapshot), or in its versions since that
// snapshot. Never the dip the order was for: procurement's ack can mark the order applied before
// its inbound shows (the checked snapshot expired, the row deleted), and the row still low from
// before — or swung to the point and back — is read by nothing above as a recovery.

import type { Json } from '../../inbox/index.ts';
import { reorderPolicy } from '../config.ts';
import type { ReadOnlyTable, Row } from '../read-only-table.ts';
import { exact, inbound, n, position, reserved } from '../rows.ts';
import type { AgentConfig } from '../config.ts';
import { msg } from '../messages.ts';
import { gone, HOLDS, moduleAcknowledged, type ProposalDraft, type Rule, type RuleContext } from '../rule.ts';

export const stockReorder: Rule = {
  id: 'stock-reorder',
  version: '10',
  description: 'When stock falls below its reorder point (on_hand − reserved + inbound), propose a replenishment up to the order-up-to level.',
  messages: {
    'stock-reorder.explanation': {
      en: '{item} at {location}: on hand {onHand}, reserved {reserved}, inbound {inbound} → position {position}{was}, below the reorder point {reorderPoint}. Order {qty} to bring it to {orderUpTo}.',
      nb: '{item} på {location}: på lager {onHand}, reservert {reserved}, innkommende {inbound} → posisjon {position}{was}, under bestillingspunktet {reorderPoint}. Bestill {qty} for å komme opp i {orderUpTo}.',
      de: '{item} in {location}: vorrätig {onHand}, reserviert {reserved}, im Zulauf {inbound} → Bestand {position}{was}, unter dem Meldebestand {reorderPoint}. {qty} bestellen, um auf {orderUpTo} zu kommen.',
    },
    // A leading space: it follows the position, and is empty for a new row.
    'stock-reorder.was': { en: ' (was {was})', nb: ' (var {was})', de: ' (vorher {was})' },
    'stock-reorder.riskLarge': {
      en: 'a large order: {qty} units (medium from {mediumFrom})',
      nb: 'en stor bestilling: {qty} enheter (middels fra {mediumFrom})',
      de: 'eine große Bestellung: {qty} Einheiten (mittel ab {mediumFrom})',
    },
    'stock-reorder.riskRoutine': { en: 'a routine order of {qty} units', nb: 'en rutinebestilling på {qty} enheter', de: 'eine Routinebestellung über {qty} Einheiten' },
    // v9: a run's note (RuleContext.note) of the rows it did not evaluate, and their names in it.
    'stock-reorder.noteOnHandUnknown': {
      en: 'not evaluated, on hand not known yet (no count from inventory): {rows}',
      nb: 'ikke vurdert, beholdningen er ikke kjent ennå (ingen telling fra lageret): {rows}',
      de: 'nicht geprüft, Bestand noch nicht bekannt (keine Zählung aus der Lagerverwaltung): {rows}',
    },
    'stock-reorder.at': { en: '{item} at {location}', nb: '{item} på {location}', de: '{item} in {location}' },
    'stock-reorder.recheckOnHandUnknown': {
      en: '{item} at {location} has no on-hand count (inventory has not sent one)',
      nb: '{item} på {location} har ingen telling av beholdningen (lageret har ikke sendt en)',
      de: '{item} in {location} hat keine Bestandszählung (die Lagerverwaltung hat keine gesendet)',
    },
    'stock-reorder.recheckGone': { en: '{item} at {location} is no longer stocked', nb: '{item} på {location} føres ikke lenger på lager', de: '{item} in {location} wird nicht mehr geführt' },
    'stock-reorder.recheckRecovered': {
      en: '{item} at {location} is at {position} now, not below the reorder point {reorderPoint}',
      nb: '{item} på {location} står nå på {position}, ikke under bestillingspunktet {reorderPoint}',
      de: '{item} in {location} steht jetzt bei {position}, nicht unter dem Meldebestand {reorderPoint}',
    },
  },

  evaluate(ctx) {
    const stock = ctx.tables.stock;
    const changes = stock.changesSince(ctx.previousTags?.stock ?? null);
    // A row without a count at the baseline has no position there: its first count is its first state.
    const before = new Map<string, number>();
    for (const c of changes) if (c.kind === '-U' && counted(c.row)) before.set(keyText(c.row), position(c.row));
    const drafts = [];
    const drafted = new Set<string>();
    const uncounted: Row[] = [];
    for (const c of changes) {
      if (c.kind !== '+I' && c.kind !== '+U') continue;
      if (!counted(c.row)) {
        uncounted.push(c.row);
        continue;
      }
      const was = before.get(keyText(c.row));
      const { reorderPoint } = reorderPolicy(ctx.config, String(c.row.item), String(c.row.location));
      if (position(c.row) >= reorderPoint || (was !== undefined && was < reorderPoint)) continue;
      drafts.push(draft(ctx, c.row, was));
      drafted.add(keyText(c.row));
    }
    // A proposal the checks between runs withdrew (the row recovered, or was deleted) whose row is
    // below its point again: it fell below after that commit. The baseline still shows it below,
    // so the comparison above takes it for a row that stayed there, and it went unproposed for good.
    // An approved replenishment procurement refused (v7, RuleContext.failedCommands): the inbox
    // lets it come back at once, but the row was below at the baseline too, so nothing crossed.
    // A reorder rejected, or approved and timed out, whose quiet ended since the baseline (v8,
    // RuleContext.quietEnded): a row that stayed below through it crossed nothing either.
    // Not while another approval of the row is on its way (it will order).
    const onItsWay = new Set(ctx.underway.filter((p) => p.ruleId === stockReorder.id).map((p) => p.situationKey));
    const ended = [...ctx.failedCommands, ...ctx.quietEnded].filter((p) => !onItsWay.has(p.situationKey));
    for (const p of [...ctx.withdrawnBetweenRuns, ...ended]) {
      if (p.ruleId !== stockReorder.id || p.action !== 'replenish') continue;
      const r = stock.get({ item: p.params.item!, location: p.params.location! });
      if (r === undefined || drafted.has(keyText(r)) || !counted(r)) continue;
      if (position(r) >= reorderPolicy(ctx.config, String(r.item), String(r.location)).reorderPoint) continue;
      drafts.push(draft(ctx, r, undefined));
      drafted.add(keyText(r));
    }
    if (uncounted.length > 0) {
      const rows: Json[] = uncounted.slice(0, 3).map((r) => msg('stock-reorder.at', { item: String(r.item), location: String(r.location) }));
      ctx.note?.(msg('stock-reorder.noteOnHandUnknown', { rows: uncounted.length <= 3 ? rows : msg('list.more', { ids: rows, n: uncounted.length - 3 }) }));
    }
    return drafts;
  },

  recheck(ctx, p) {
    const r = ctx.tables.stock.get({ item: p.params.item!, location: p.params.location! });
    if (!r) return gone(msg('stock-reorder.recheckGone', { item: String(p.params.item), location: String(p.params.location) }));
    if (!counted(r)) return gone(msg('stock-reorder.recheckOnHandUnknown', { item: String(p.params.item), location: String(p.params.location) }));
    const { reorderPoint } = reorderPolicy(ctx.config, String(p.params.item), String(p.params.location));
    const now = position(r);
    // Held near the point (v9): withdrawn from the point + the margin up, so a level swinging around
    // the point keeps its one proposal.
    if (now >= exact(reorderPoint + withdrawMargin(ctx.config, String(p.params.item), String(p.params.location)))) return gone(msg('stock-reorder.recheckRecovered', { item: String(p.params.item), location: String(p.params.location), position: now, reorderPoint }));
    return HOLDS;
  },

  effectSeen(ctx, p) {
    const stock = ctx.tables.stock;
    const key = { item: p.params.item!, location: p.params.location! };
    const qty = Number(p.params.qty);
    const checked = p.decision?.snapshots.checked.stock;
    const readable = typeof checked === 'number' && stock.snapshotId !== null && checked <= stock.snapshotId;
    const r = stock.get(key);
    if (r === undefined) {
      // The row deleted (v5): it can no longer show the order, and "not yet" held until the
      // write-back gave up. Procurement's versions of it may (ordered, then removed); else the
      // module's word decides, as for a job gone from the queue.
      if (!readable) return moduleAcknowledged(p);
      const c = stock.getAt(checked, key);
      return (c !== null && orderInVersions(stock, checked, c, key, qty) === true) || moduleAcknowledged(p);
    }
    if (position(r) >= exact(Number(p.params.position_before) + qty)) return true;
    const seen = p.evidence.find((e) => e.table === 'stock')?.rows.find((e) => e.key.item === p.params.item && e.key.location === p.params.location);
    if (seen !== undefined && inbound(r) >= exact(inbound(seen.values) + qty)) return true;
    // The row the approval's recheck accepted (any position below the point holds): a delivery
    // that lowered inbound and a pick that lowered the position before it leave both comparisons
    // with the proposal's row short of qty (v2 timed such a command out).
    if (!readable) return false;
    const c = stock.getAt(checked, key);
    // That snapshot expired (a command awaited long after its timeout): the tables cannot tell,
    // the module's ok ack does (v4).
    if (c === null) return moduleAcknowledged(p);
    if (c !== undefined && (position(r) >= exact(position(c) + qty) || inbound(r) >= exact(inbound(c) + qty))) return true;
    return orderInVersions(stock, checked, c, key, qty) ?? moduleAcknowledged(p);
  },

  newOccurrence(ctx, p) {
    const stock = ctx.tables.stock;
    const key = { item: p.params.item!, location: p.params.location! };
    const r = stock.get(key);
    if (r === undefined || !counted(r)) return false;
    const { reorderPoint } = reorderPolicy(ctx.config, String(p.params.item), String(p.params.location));
    if (position(r) >= reorderPoint) return false;
    const checked = p.decision?.snapshots.checked.stock;
    if (typeof checked !== 'number' || stock.snapshotId === null || checked >= stock.snapshotId) return false;
    const qty = Number(p.params.qty);
    const c = stock.getAt(checked, key);
    // The order's inbound is in the row now (over the proposal's row or the checked one, as
    // effectSeen compares): its position counts the order, and is below the point all the same.
    const seen = p.evidence.find((e) => e.table === 'stock')?.rows.find((e) => e.key.item === p.params.item && e.key.location === p.params.location);
    if ((seen !== undefined && inbound(r) >= exact(inbound(seen.values) + qty)) || (c != null && inbound(r) >= exact(inbound(c) + qty))) return true;
    // Recovered as an open proposal is withdrawn (v9): at the point plus the margin. A swing to the
    // point and back (a recount, a return) is the same dip, its order still on its way.
    const recoveredAt = exact(reorderPoint + withdrawMargin(ctx.config, String(p.params.item), String(p.params.location)));
    const recovered = (row: Row | Record<string, Json> | undefined): boolean => row !== undefined && counted(row) && position(row) >= recoveredAt;
    // At or above it at the rule's baseline, a snapshot after the one the approval checked.
    const base = ctx.previousTags?.stock;
    const baseId = base === undefined ? undefined : stock.tagSnapshotId(base);
    if (base !== undefined && baseId !== undefined && baseId > checked) {
      const was = baselineRows(stock, base).get(keyText(r));
      if (was !== undefined && recovered(was)) return true;
    }
    // At or above it in one of the row's versions since that snapshot (each holds the columns its
    // commit wrote: laid over the checked row in order). Unreadable: nothing shows a recovery.
    if (c === null) return false;
    const versions = stock.versionsSince(checked, key);
    if (versions === undefined) return false;
    let row: Record<string, Json> | undefined = c === undefined ? undefined : { ...c };
    for (const v of versions) {
      if (v.kind === '-U') continue;
      if (v.kind === '-D') {
        row = undefined;
        continue;
      }
      row = { ...row };
      for (const [k, value] of Object.entries(v.row)) if (value !== null) row[k] = value;
      if (recovered(row)) return true;
    }
    return false;
  },
};

const keyText = (r: Record<string, unknown>): string => `${String(r.item)}\u0000${String(r.location)}`;

/**
 * The rows as they were at `base` of the keys changed since (their -U/-D), by keyText: read once
 * per table state and baseline, not per call — `newOccurrence` is asked for every row quiet by an
 * applied order that crossed the point in a run, and a diff per call cost ≈ 0.7 ms on 1,000 rows
 * (1,000 such rows: 714 ms of a 989 ms run).
 */
const baselineCache = new WeakMap<ReadOnlyTable, { base: string; snapshotId: number | null; rows: Map<string, Row> }>();
function baselineRows(stock: ReadOnlyTable, base: string): Map<string, Row> {
  const hit = baselineCache.get(stock);
  if (hit !== undefined && hit.base === base && hit.snapshotId === stock.snapshotId) return hit.rows;
  const rows = new Map<string, Row>();
  for (const x of stock.changesSince(base)) if ((x.kind === '-U' || x.kind === '-D') && !rows.has(keyText(x.row))) rows.set(keyText(x.row), x.row);
  baselineCache.set(stock, { base, snapshotId: stock.snapshotId, rows });
  return rows;
}

/** Whether inventory has counted the row (v9): a row made by a reservation or an order alone has no on_hand. */
const counted = (r: Record<string, unknown>): boolean => n(r.on_hand) !== null;

/**
 * How far above its reorder point a row's position must be before its open proposal is withdrawn
 * (v9): a tenth of the band between the point and the order-up-to level (5 → 20: 1.5). Small
 * beside the order (which brings the row to orderUpTo, computed from the position it was proposed
 * at: approved at a higher position — below the point, or now within the margin — it brings the
 * row above orderUpTo by that rise, at most the margin more than v8 allowed), and it scales with
 * the item's quantities, whole or decimal.
 */
export function withdrawMargin(config: AgentConfig, item: string, location: string): number {
  const { reorderPoint, orderUpTo } = reorderPolicy(config, item, location);
  return exact((orderUpTo - reorderPoint) / 10);
}

/** The replenishment of a row below its point (`was`: its position at the baseline, if it had one). */
function draft(ctx: RuleContext, row: Row, was: number | undefined): ProposalDraft {
  const item = String(row.item);
  const location = String(row.location);
  const { reorderPoint, orderUpTo } = reorderPolicy(ctx.config, item, location);
  const now = position(row);
  const qty = exact(orderUpTo - now);
  return {
    action: 'replenish',
    module: 'procurement',
    params: { item, location, qty, position_before: now },
    keyParams: ['item', 'location'],
    risk: qty >= ctx.config.replenishQtyMediumMin ? 'medium' : 'low',
    riskReason: qty >= ctx.config.replenishQtyMediumMin ? msg('stock-reorder.riskLarge', { qty, mediumFrom: ctx.config.replenishQtyMediumMin }) : msg('stock-reorder.riskRoutine', { qty }),
    explanation: msg('stock-reorder.explanation', {
      item,
      location,
      // The quantities the position is made of (rows.ts: a negative reserved or inbound
      // counts as 0), so the sentence adds up: "reserved -4, inbound -30 → position 2" did not.
      onHand: n(row.on_hand) ?? 0,
      reserved: reserved(row),
      inbound: inbound(row),
      position: now,
      was: was === undefined ? '' : msg('stock-reorder.was', { was }),
      reorderPoint,
      qty,
      orderUpTo,
    }),
    evidence: [{ table: 'stock', rows: [row] }],
  };
}

/**
 * Whether procurement's versions of the row since the snapshot the approval checked (`c`, its row
 * there) show its order; undefined when a commit of the range expired and they cannot tell.
 * Moves after the approval (v4): a delivery of an earlier order lowers inbound as much as it raises
 * on_hand, and a pick lowers the position, so neither the row now nor the checked row shows the
 * order. Procurement's own writes do: its order is a step of inbound by qty from one of its
 * versions to the next. On this partial-update table a commit's version holds only the columns its
 * events wrote; a null inbound is no procurement write (a DECIMAL one is text: `n`, which only a
 * JSON number passed before).
 */
function orderInVersions(stock: ReadOnlyTable, checked: number, c: Row | undefined, key: Readonly<Record<string, Json>>, qty: number): boolean | undefined {
  const versions = stock.versionsSince(checked, key);
  if (versions === undefined) return undefined;
  let before = c === undefined ? null : inbound(c);
  for (const v of versions) {
    if (v.kind === '-U' || v.kind === '-D' || n(v.row.inbound) === null) continue;
    const now = inbound(v.row);
    if (before !== null && now >= exact(before + qty)) return true;
    before = now;
  }
  return false;
}
