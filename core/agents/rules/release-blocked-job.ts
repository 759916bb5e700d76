// Rule: release a job blocked on material once the stock covers it: the item's available
// quantity (on_hand − reserved, summed over locations) is at least the job's material_qty.
// Only jobs blocked for material: no reason, or a reason whose words name material (v8,
// `materialReason`: material, stock, stockout; short, shortage, shortfall unless it names people —
// v7 matched "short" anywhere, so a job blocked "short-staffed" was offered a release).
// Command: operations `release_job {job_id}`. Medium risk when releasing would take a location of
// the item below its reorder point: stock-reorder compares each (item, location) row's position
// with that location's point (its own, else the item's, else the default), so the release counts
// what each location holds above its point (`spare`: at most its available quantity) and is medium
// when the jobs ahead and this one need more than all of it — whichever locations the material
// comes from, one of them then falls below its point, and stock-reorder orders. (v3 compared the
// item's total with one location's point: three locations at 15 under a point of 40 were 45 ≥ 40,
// low risk, while each was already being reordered.)
//
// Jobs waiting for the same item share its stock: the blocked jobs of an item are served in
// queue order (priority, then due time, then id), each from what the jobs before it left, and a
// job the rest does not cover is skipped (a smaller one after it may still fit) — as assign-job
// offers each free resource once. So the open proposals of one item never promise more than it
// has, and recheck applies the same allocation: a job that moves ahead in the queue takes its
// share first, and a proposal it crowds out is withdrawn.
//
// A job whose release the inbox would suppress now (RuleContext.quiet: rejected, or approved and
// its command timed out unanswered, within resuggestAfterDecisionMs) is not proposed and takes no
// share: its material goes to the next job of the item in the same run. v5 let it take its share,
// so a rejected release held the item's stock for a job nobody releases, and the jobs behind it
// waited as long as the decision kept it quiet (8 h by default) — as assign-job v3 did with a
// resource.
//
// A job whose release a person approved and whose command is on its way to the module
// (RuleContext.underway) has been promised its material: while it is still blocked here, it
// takes its quantity before every job in the queue (whatever the stock now says: the module will
// release it), and it is not proposed again.
//
// So does a job released and not yet started (status `released`), whoever released it: it takes
// its material from the shelf when it starts, so until then on_hand still counts it, and v6
// offered it to the next blocked job of the item — the hold above ended the moment the module's
// release arrived, and two releases promised the same stock. A job in progress has taken its
// material (on_hand shows it) and holds none here. (A site whose operations module reserves a
// released job's material in `stock.reserved` would count it twice: the seed tables' `reserved` is
// commerce's orders'.)
//
// Effect (v5): the job is no longer blocked, or one of its versions since the approval's check
// shows it released (blocked again or removed since); a job gone from the queue whose versions
// cannot tell counts when the module acknowledged the command. (v4 counted any job gone as
// released: one deleted before the module acted was marked applied while the module refused it.)
//
// v9: a job whose release was applied and that is blocked again is a new occurrence
// (`newOccurrence`): proposed as soon as its material covers it, not after the approval's quiet
// (resuggestAfterDecisionMs, 8 h), as v8 did.

import { reorderPolicy, type AgentConfig } from '../config.ts';
import { available, byQueueOrder, exact, job, position, stockOf, type Job } from '../rows.ts';
import { situationKey, type Json } from '../../inbox/index.ts';
import { jobStatus, msg } from '../messages.ts';
import { gone, HOLDS, moduleAcknowledged, type Rule, type RuleContext } from '../rule.ts';
import type { Row } from '../read-only-table.ts';

/**
 * Whether a blocked reason names material. operations.jobs has no reason codes (`blocked_reason`
 * is free text), so the reason is read as words — letters and digits; hyphens, underscores, colons
 * and spaces part them ("out-of-stock", "MATERIAL_SHORT", "short: BOLT"), and so does a capital
 * after a small letter, a reason code in camel case ("MaterialShortage", "OutOfStock") — not after
 * a word's Gaelic "Mc"/"Mac", a surname ("waiting for McStock" names no stock):
 * - `material(s)`, `stock`, `stockout(s)` name material, and so does any word that begins with
 *   `material` (Norwegian `materiale(r)`, German `Materialmangel`, `Materialien`) but the verb
 *   `materialise`/`materialize` and its kin (`materialised view`, `materialisere`,
 *   `Materialisierung`: to appear, no material);
 * - `short`, `shortage(s)`, `shortfall` do too, unless the reason names people (`staff`, `staffed`,
 *   `handed`, `crew`, `drivers`, …): "short-staffed", "staff shortage", "short of drivers" are no
 *   material.
 * v7 matched /material|stock|short/ anywhere in the text, so "short-staffed", "shortlisted" and
 * "restock area" were material blocks, and such a job was offered a release once its item's stock
 * covered it (blocked-reason.test.ts).
 */
export function materialReason(reason: string): boolean {
  // Camel case parts words too: a reason code "MaterialShortage", "OutOfStock" or "noStock" (read
  // as one unknown word, such a job was never proposed, though v7 found them).
  // Not after a word's Gaelic "Mc"/"Mac" (McStock, MacShort: a surname, one word, no material).
  const words = reason
    .replace(/(?<!(?:^|[^\p{L}\p{N}])(?:Mc|Mac))(?<=\p{Ll})(?=\p{Lu})/gu, ' ')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u);
  // A word made with "material" names material: Norwegian materiale(r), German Materialmangel,
  // Materialien — the floor's own language, which v7 matched inside the word. Not the verb
  // "materialise" (to appear; materialisere, materialisieren): "Materialised view not refreshed",
  // "driver has not materialised" name no material.
  if (words.some((w) => MATERIAL_WORDS.has(w) || (w.startsWith('material') && !MATERIALISE.test(w)))) return true;
  return words.some((w) => SHORT_WORDS.has(w)) && !words.some((w) => PEOPLE_WORDS.has(w));
}
const MATERIAL_WORDS = new Set(['material', 'materials', 'stock', 'stockout', 'stockouts']);
/** The verb "materialise" and its kin in en/nb/de (materialized, materialisere, Materialisierung): no material. */
const MATERIALISE = /^materiali[sz]/;
const SHORT_WORDS = new Set(['short', 'shortage', 'shortages', 'shortfall']);
const PEOPLE_WORDS = new Set(['staff', 'staffed', 'staffing', 'understaffed', 'handed', 'hands', 'people', 'crew', 'personnel', 'labour', 'labor', 'operator', 'operators', 'driver', 'drivers', 'worker', 'workers', 'picker', 'pickers']);
/** Jobs ahead in the queue cited as evidence beside the job itself. */
const EVIDENCE_AHEAD_MAX = 10;

/** A blocked job's share of its item, or why it has none. */
interface Share {
  /** The item's available quantity (all locations) and its stock rows. */
  available: number;
  rows: Row[];
  /** What the jobs ahead of this one (same item, queue order) took, and their rows. */
  ahead: number;
  aheadRows: readonly Row[];
  /** Whether the rest covers this job. */
  covered: boolean;
  /** Whether this job's own release is approved and on its way (it is not proposed again). */
  promised: boolean;
  /** Whether the inbox would suppress this job's release now (it takes no share, and is not proposed). */
  quiet: boolean;
  /** Whether a job ahead took its share as an approved release on its way (not by queue order). */
  promisedAhead: boolean;
  /** Whether a job released and not yet started took its share ahead of this one. */
  releasedAhead: boolean;
  /** What the item's locations hold above their own reorder points (before any job), and those points. */
  spare: number;
  points: Json;
}

function needsMaterial(j: Job): boolean {
  return j.material_item !== null && j.material_qty !== null && j.material_qty > 0;
}

function blockedOnMaterial(j: Job): boolean {
  if (j.status !== 'blocked' || !needsMaterial(j)) return false;
  return j.blocked_reason === null || materialReason(j.blocked_reason);
}

/** Released, not yet started: its material is still on the shelf, and it will take it. */
const holdsMaterial = (j: Job): boolean => j.status === 'released' && needsMaterial(j);

/** Which jobs took a share before this one, as its messages' ids end: released ones, approved releases on their way, or the queue alone. */
const heldBy = (c: Share): string => (c.releasedAhead ? 'Released' : c.promisedAhead ? 'Promised' : '');

/** Job ids of the approved releases on their way to the module (RuleContext.underway). */
function promisedJobs(ctx: RuleContext): Set<string> {
  return new Set(ctx.underway.filter((p) => p.action === 'release_job' && p.ruleId === releaseBlockedJob.id).map((p) => String(p.params.job_id)));
}

/** Per context (its `underway` list is its own) and work-queue scan: the blocked jobs' releases the inbox would suppress now. */
const quietOf = new WeakMap<readonly unknown[], { wq: readonly Row[]; ids: Set<string> }>();

function quietJobs(ctx: RuleContext, wq: readonly Row[]): Set<string> {
  const cached = quietOf.get(ctx.underway);
  if (cached && cached.wq === wq) return cached.ids;
  const ids = new Set<string>();
  for (const r of wq) {
    const j = job(r);
    if (blockedOnMaterial(j) && ctx.quiet(situationKey(releaseBlockedJob.id, 'release_job', { job_id: j.job_id }))) ids.add(j.job_id);
  }
  quietOf.set(ctx.underway, { wq, ids });
  return ids;
}

/**
 * Per snapshot pair (work_queue scan, stock scan), the promised and the quiet jobs (their ids
 * joined) and the config (its reorder points make `spare`; `reconfigure` replaces the object): every blocked job's
 * share, by job id.
 */
const shares = new WeakMap<readonly Row[], WeakMap<readonly Row[], { promised: string; config: AgentConfig; out: Map<string, Share> }>>();

function allocate(ctx: RuleContext): Map<string, Share> {
  const wq = ctx.tables.work_queue.scan();
  const stockRows = ctx.tables.stock.scan();
  const promised = promisedJobs(ctx);
  const quiet = quietJobs(ctx, wq);
  const promisedKey = `${[...promised].sort().join('\n')}\u0000${[...quiet].sort().join('\n')}`;
  let byStock = shares.get(wq);
  if (!byStock) shares.set(wq, (byStock = new WeakMap()));
  const cached = byStock.get(stockRows);
  if (cached && cached.promised === promisedKey && cached.config === ctx.config) return cached.out;
  const out = new Map<string, Share>();
  const viewed = wq.map((r) => ({ r, j: job(r), promised: false }));
  const jobs = viewed.filter((x) => blockedOnMaterial(x.j));
  for (const x of jobs) x.promised = promised.has(x.j.job_id);
  jobs.sort((a, b) => Number(b.promised) - Number(a.promised) || byQueueOrder(a.j, b.j));
  const left = new Map<string, { available: number; rows: Row[]; taken: number; takers: Row[]; promised: boolean; released: boolean; spare: number; points: Json }>();
  const itemLeft = (item: string) => {
    let s = left.get(item);
    if (!s) {
      const rows = stockOf(ctx.tables.stock, item);
      const { spare, points } = spareOf(ctx, item, rows);
      // exact: decimal quantities (rows.ts) summed in doubles fall short (0.3 + 0.35 + 0.35 < 1).
      left.set(item, (s = { available: exact(rows.reduce((sum, r) => sum + available(r), 0)), rows, taken: 0, takers: [], promised: false, released: false, spare, points }));
    }
    return s;
  };
  // The released jobs not yet started take theirs first, covered or not: they will take it from the shelf.
  for (const { r, j } of viewed.filter((x) => holdsMaterial(x.j)).sort((a, b) => byQueueOrder(a.j, b.j))) {
    const s = itemLeft(j.material_item!);
    s.taken = exact(s.taken + j.material_qty!);
    s.takers.push(r);
    s.released = true;
  }
  for (const { r, j, promised: isPromised } of jobs) {
    const s = itemLeft(j.material_item!);
    const covered = exact(s.available - s.taken) >= j.material_qty!;
    // The takers so far, without a copy per job: the list only grows, so a view of its head.
    const takers = s.takers;
    const n = takers.length;
    const isQuiet = !isPromised && quiet.has(j.job_id);
    out.set(j.job_id, { available: s.available, rows: s.rows, ahead: s.taken, get aheadRows() { return takers.slice(0, n); }, covered, promised: isPromised, quiet: isQuiet, promisedAhead: s.promised, releasedAhead: s.released, spare: s.spare, points: s.points });
    // A promised job takes its quantity even when the stock no longer covers it: the module
    // releases it all the same. A quiet one takes none: no release of it is on its way or proposed.
    if ((covered && !isQuiet) || isPromised) {
      s.taken = exact(s.taken + j.material_qty!);
      takers.push(r);
      s.promised ||= isPromised;
    }
  }
  byStock.set(stockRows, { promised: promisedKey, config: ctx.config, out });
  return out;
}

/**
 * What an item's locations hold above their own reorder points, as stock-reorder sees them: per
 * row, position (available + inbound) − the location's point, but no more than the row's available
 * quantity (inbound is not on the shelf yet) and no less than 0 (a location already under its
 * point gives nothing). And the points by location, for the risk reason.
 */
function spareOf(ctx: RuleContext, item: string, rows: readonly Row[]): { spare: number; points: Json } {
  let spare = 0;
  // Each a message, so its number is in the language's format like the numbers around it.
  const points: Json[] = [];
  for (const r of rows) {
    const location = String(r.location);
    const point = reorderPolicy(ctx.config, item, location).reorderPoint;
    spare += Math.max(0, Math.min(available(r), position(r) - point));
    points.push(msg('release-blocked-job.point', { location, point }));
  }
  return { spare: exact(spare), points: points.length <= 3 ? points : msg('list.more', { ids: points.slice(0, 3), n: points.length - 3 }) };
}

/** The first three jobs of a list by id, and how many more (a message parameter). */
function jobList(rows: readonly Row[]): Json {
  const ids = rows.map((r) => job(r).job_id);
  return ids.length <= 3 ? ids : msg('list.more', { ids: ids.slice(0, 3), n: ids.length - 3 });
}

export const releaseBlockedJob: Rule = {
  id: 'release-blocked-job',
  version: '9',
  description:
    'Release a job blocked on material once available stock (on_hand − reserved) covers its material quantity; jobs waiting for the same item are served in queue order, after the jobs released and not yet started and those an approved release promised it to (a job whose release the inbox would suppress takes none); medium risk when it takes a location below its own reorder point.',
  messages: {
    'release-blocked-job.explanation': {
      en: 'Job {job} is blocked ({reason:data}) but {available} {item} are now available (needs {qty}{share}). Release it.',
      nb: 'Jobb {job} er blokkert ({reason:data}), men nå er {available} {item} tilgjengelig (trenger {qty}{share}). Frigi den.',
      de: 'Auftrag {job} ist blockiert ({reason:data}), aber jetzt sind {available} {item} verfügbar (benötigt {qty}{share}). Freigeben.',
    },
    // A leading space: it follows the quantity, and is empty when no job is ahead.
    'release-blocked-job.share': {
      en: ' after {ahead} for {jobs} ahead of it in the queue',
      nb: ' etter {ahead} til {jobs} foran den i køen',
      de: ' nach {ahead} für {jobs}, die in der Warteschlange vor ihm stehen',
    },
    'release-blocked-job.sharePromised': {
      en: ' after {ahead} for {jobs}, approved for release or ahead of it in the queue',
      nb: ' etter {ahead} til {jobs}, godkjent for frigivelse eller foran den i køen',
      de: ' nach {ahead} für {jobs}, zur Freigabe genehmigt oder in der Warteschlange vor ihm',
    },
    'release-blocked-job.shareReleased': {
      en: ' after {ahead} for {jobs}, released but not started, approved for release or ahead of it in the queue',
      nb: ' etter {ahead} til {jobs}, frigitt men ikke startet, godkjent for frigivelse eller foran den i køen',
      de: ' nach {ahead} für {jobs}, freigegeben, aber nicht begonnen, zur Freigabe genehmigt oder in der Warteschlange vor ihm',
    },
    'release-blocked-job.riskBelowLocationPoint': {
      en: 'the job uses {qty} of {rest} available {item}{share}; only {spare} can be taken without a location falling below its reorder point ({points})',
      nb: 'jobben bruker {qty} av {rest} tilgjengelige {item}{share}; bare {spare} kan tas uten at en lagerplass faller under bestillingspunktet sitt ({points})',
      de: 'der Auftrag verbraucht {qty} von {rest} verfügbaren {item}{share}; nur {spare} lassen sich entnehmen, ohne dass ein Lagerort unter seinen Meldebestand fällt ({points})',
    },
    // A location's reorder point in riskBelowLocationPoint's `points` (a plain "A: 5" before).
    'release-blocked-job.point': { en: '{location}: {point}', nb: '{location}: {point}', de: '{location}: {point}' },
    // v3's (the item's total against one point): kept so that proposals stored by v3 still translate.
    'release-blocked-job.riskBelowReorder': {
      en: 'the job uses {qty} of {rest} available {item}{share}, leaving {left}, below the reorder point {reorderPoint}',
      nb: 'jobben bruker {qty} av {rest} tilgjengelige {item}{share}, og {left} blir igjen, under bestillingspunktet {reorderPoint}',
      de: 'der Auftrag verbraucht {qty} von {rest} verfügbaren {item}{share}; übrig bleiben {left}, unter dem Meldebestand {reorderPoint}',
    },
    'release-blocked-job.riskLow': {
      en: '{left} {item} stay available after the job takes {qty}{share}',
      nb: '{left} {item} er fortsatt tilgjengelig etter at jobben tar {qty}{share}',
      de: '{left} {item} bleiben verfügbar, nachdem der Auftrag {qty} genommen hat{share}',
    },
    'release-blocked-job.recheckNoMaterial': { en: 'job {job} no longer names its material', nb: 'jobb {job} oppgir ikke lenger materialet sitt', de: 'Auftrag {job} nennt sein Material nicht mehr' },
    'release-blocked-job.recheckNotMaterial': {
      en: 'job {job} is no longer blocked for material',
      nb: 'jobb {job} er ikke lenger blokkert av materiale',
      de: 'Auftrag {job} ist nicht mehr wegen Material blockiert',
    },
    'release-blocked-job.recheckNotMaterialReason': {
      en: 'job {job} is no longer blocked for material ({reason:data})',
      nb: 'jobb {job} er ikke lenger blokkert av materiale ({reason:data})',
      de: 'Auftrag {job} ist nicht mehr wegen Material blockiert ({reason:data})',
    },
    'release-blocked-job.recheckShort': {
      en: 'only {available} {item} available now; the job needs {qty}',
      nb: 'bare {available} {item} er tilgjengelig nå; jobben trenger {qty}',
      de: 'jetzt sind nur {available} {item} verfügbar; der Auftrag benötigt {qty}',
    },
    'release-blocked-job.recheckCrowded': {
      en: '{ahead} of the {available} available {item} go to {jobs}, ahead in the queue; {rest} do not cover the {qty} the job needs',
      nb: '{ahead} av de {available} tilgjengelige {item} går til {jobs}, foran i køen; {rest} dekker ikke de {qty} jobben trenger',
      de: '{ahead} der {available} verfügbaren {item} gehen an {jobs}, die in der Warteschlange vorne stehen; {rest} decken die {qty} nicht, die der Auftrag benötigt',
    },
    'release-blocked-job.recheckCrowdedPromised': {
      en: '{ahead} of the {available} available {item} go to {jobs}, approved for release or ahead in the queue; {rest} do not cover the {qty} the job needs',
      nb: '{ahead} av de {available} tilgjengelige {item} går til {jobs}, godkjent for frigivelse eller foran i køen; {rest} dekker ikke de {qty} jobben trenger',
      de: '{ahead} der {available} verfügbaren {item} gehen an {jobs}, zur Freigabe genehmigt oder in der Warteschlange vorne; {rest} decken die {qty} nicht, die der Auftrag benötigt',
    },
    'release-blocked-job.recheckCrowdedReleased': {
      en: '{ahead} of the {available} available {item} go to {jobs}, released but not started, approved for release or ahead in the queue; {rest} do not cover the {qty} the job needs',
      nb: '{ahead} av de {available} tilgjengelige {item} går til {jobs}, frigitt men ikke startet, godkjent for frigivelse eller foran i køen; {rest} dekker ikke de {qty} jobben trenger',
      de: '{ahead} der {available} verfügbaren {item} gehen an {jobs}, freigegeben, aber nicht begonnen, zur Freigabe genehmigt oder in der Warteschlange vorne; {rest} decken die {qty} nicht, die der Auftrag benötigt',
    },
  },

  evaluate(ctx) {
    const all = allocate(ctx);
    const drafts = [];
    for (const r of ctx.tables.work_queue.scan()) {
      const j = job(r);
      const c = all.get(j.job_id);
      if (!c?.covered || c.promised || c.quiet) continue;
      const rest = exact(c.available - c.ahead);
      const left = exact(rest - j.material_qty!);
      // What stays above the locations' points for this job, after the jobs ahead took theirs.
      const spare = Math.max(0, exact(c.spare - c.ahead));
      const belowPoint = j.material_qty! > spare;
      const share = c.ahead > 0 ? msg(`release-blocked-job.share${heldBy(c)}`, { ahead: c.ahead, jobs: jobList(c.aheadRows) }) : '';
      const item = j.material_item!;
      const qty = j.material_qty!;
      drafts.push({
        action: 'release_job',
        module: 'operations',
        params: { job_id: j.job_id, material_item: j.material_item, material_qty: j.material_qty },
        keyParams: ['job_id'],
        risk: belowPoint ? ('medium' as const) : ('low' as const),
        riskReason: belowPoint
          ? msg('release-blocked-job.riskBelowLocationPoint', { qty, rest, item, share, spare: Math.min(spare, rest), points: c.points })
          : msg('release-blocked-job.riskLow', { left, item, qty, share }),
        explanation: msg('release-blocked-job.explanation', { job: j.job_id, reason: j.blocked_reason ?? msg('reason.notGiven'), available: c.available, item, qty, share }),
        evidence: [
          // The jobs ahead that share the item explain the share: the first few are cited (the
          // run's tag keeps the rest readable), so a long queue does not bloat every proposal.
          { table: 'work_queue' as const, rows: [r, ...c.aheadRows.slice(0, EVIDENCE_AHEAD_MAX)] },
          { table: 'stock' as const, rows: c.rows },
        ],
      });
    }
    return drafts;
  },

  recheck(ctx, p) {
    const jr = ctx.tables.work_queue.get({ job_id: p.params.job_id! });
    if (!jr) return gone(msg('recheck.jobGone', { job: p.params.job_id! }));
    const j = job(jr);
    if (j.status !== 'blocked') return gone(msg('recheck.jobNow', { job: j.job_id, status: jobStatus(j.status) }));
    if (j.material_item === null || j.material_qty === null) return gone(msg('release-blocked-job.recheckNoMaterial', { job: j.job_id }));
    const c = allocate(ctx).get(j.job_id);
    if (!c) {
      return gone(
        j.blocked_reason === null
          ? msg('release-blocked-job.recheckNotMaterial', { job: j.job_id })
          : msg('release-blocked-job.recheckNotMaterialReason', { job: j.job_id, reason: j.blocked_reason }),
      );
    }
    if (c.available < j.material_qty) return gone(msg('release-blocked-job.recheckShort', { available: c.available, item: j.material_item, qty: j.material_qty }));
    if (!c.covered) {
      return gone(
        msg(`release-blocked-job.recheckCrowded${heldBy(c)}`, { ahead: c.ahead, available: c.available, item: j.material_item, jobs: jobList(c.aheadRows), rest: exact(c.available - c.ahead), qty: j.material_qty }),
      );
    }
    return HOLDS;
  },

  effectSeen(ctx, p) {
    const wq = ctx.tables.work_queue;
    const key = { job_id: p.params.job_id! };
    const jr = wq.get(key);
    if (jr !== undefined && job(jr).status !== 'blocked') return true;
    // Blocked, or gone from the queue (v4 called that released: a job deleted before the module
    // acted was marked applied, and the module's refusal, "no such job", came too late to count).
    // Released if a version since the snapshot the approval checked (where the job was blocked:
    // the recheck held only there) shows it not blocked — released, then blocked again or removed
    // before the write-back looked…
    const checked = p.decision?.snapshots.checked.work_queue;
    const versions = typeof checked === 'number' ? wq.versionsSince(checked, key) : undefined;
    if (versions !== undefined) {
      for (const c of versions) if ((c.kind === '+I' || c.kind === '+U') && job(c.row).status !== 'blocked') return true;
    }
    // …or, for a job gone, where the tables cannot tell (released and removed in one commit, or a
    // commit of the range expired), the module's ok ack: it released it. A refusal is a failed ack
    // instead. A job still blocked waits for its release to show.
    return jr === undefined && moduleAcknowledged(p);
  },

  // Applied (v9) means the job was seen not blocked after the approval, or gone from the queue
  // (then the module's ok ack): blocked now, it has ended and begun again. Where the versions since
  // the checked snapshot can be read, one of them must show it so (not blocked, or removed): a
  // context on a state older than the one the effect was seen on is not taken for a new occurrence.
  newOccurrence(ctx, p) {
    const wq = ctx.tables.work_queue;
    const key = { job_id: p.params.job_id! };
    const jr = wq.get(key);
    if (jr === undefined || job(jr).status !== 'blocked') return false;
    const checked = p.decision?.snapshots.checked.work_queue;
    if (typeof checked !== 'number') return false;
    const versions = wq.versionsSince(checked, key);
    return versions === undefined || versions.some((c) => c.kind === '-D' || ((c.kind === '+I' || c.kind === '+U') && job(c.row).status !== 'blocked'));
  },
};
