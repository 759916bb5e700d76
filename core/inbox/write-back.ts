// Write-back: an approved proposal becomes a command to the module that carries it out, and its
// progress is tracked until the state tables show the effect.
//
//   send     publishes `{command_id: <proposal id>, action, ...params, proposal_id, requested_by,
//            approved_at_ms, comment, ts_ms, expires_at_ms}` (QoS 1, through the injected `publish`) on
//            `tilstand/<site>/commands/<module>`, then marks the command `sent`. The proposal id
//            is the idempotency key: the module client answers a redelivered id with its stored
//            ack and never runs the handler twice (core/ingest/module-client).
//   acks     `{command_id, module, ok, result | error, ts_ms}` on `tilstand/<site>/acks/<module>`:
//            ok → `acknowledged`, not ok → `failed` (the module's error kept as the detail); an
//            ack of a command still `pending` (the module answered before the PUBACK) marks it
//            `sent` first. On a site restored from HQ (`restored`), an ack of a proposal of
//            ours the restored inbox held, without a command (its approval lost with the old PC),
//            is recorded as an approval not on record, then as any ack
//            (`Inbox.approvalNotOnRecord`), with a warning; elsewhere it is warned of and ignored
//            (and where the restored inbox could not be read, the warning says it cannot tell).
//            Within the week after a restore, an ack of an id this inbox does not know is warned
//            of too (elsewhere it is another Tilstand's, or a module's own test: ignored).
//            Every warning of a single ack goes through one limiter per module (`warnAck`): the
//            first of each kind (of a refused proposal, of each reason and proposal) at once,
//            then at most one line a minute, with the counts of those not said and the first
//            unknown ids held; what is held back is said once the minute is over, and at the stop.
//   applied  `poll()` asks `effectSeen(proposal)` (the agent's rule, against the latest state)
//            whether the module's next event has reached the tables; yes → `applied`.
//   timeout  not applied `appliedTimeoutMs` after it was sent → `timed_out`. A late effect or
//            refusal still moves it on, see proposal.ts; a late first ok ack is logged and
//            leaves it timed out as acknowledged (its effect awaited, no second timeout). The command says
//            when that is (`expires_at_ms` = first send + appliedTimeoutMs), and the module
//            client refuses one that arrives later (a module back after hours must not act on
//            a decision the floor has moved on from): its `failed` ack says `expired`.
// A publish that fails, or that the broker has not taken (PUBACK) within `publishTimeoutMs`,
// leaves the command `pending` (so an approval never waits longer for its publish); `resume()`
// (at start) and every poll send pending commands again — with the same command_id, so a module
// never acts twice. Only within `appliedTimeoutMs` of the approval, though: a command still
// pending then (the broker down for longer, a site that crashed before the publish and started
// again hours later) is `failed`, not sent — the decision was made on a floor that has moved on;
// the situation is proposed again if it still holds. A copy published while pending expires
// (`expires_at_ms`) at that same moment, so the module refuses one the broker delivers later.
// A command the broker took (PUBACK) but the module has not acknowledged is published again every
// `resendAfterMs` until it is acknowledged, applied or timed out: a broker can drop a queued
// message (mosquitto does when another client takes the module's session, or past its queue
// limit), and the same command_id makes the copy harmless. The first send's time still counts for
// the timeout.
//
// Concurrency: single-threaded; `poll` and ack handling are synchronous, `send` awaits only the
// publish. An inbox commit that fails under an ack, a send given up, a send the broker took (its
// warning says the command was sent: no "not sent") or a poll's applied / timed_out is a warning,
// not an exception (nothing awaits them: it ended the process, or the poll stopped at it); the
// write is committed with the next.
// Limits: acks larger than `ackBytesMax` are ignored; at most `pollBatchMax` commands are
// examined per poll.

import type { Table } from '../lsm/index.ts';
import { InboxError } from './errors.ts';
import type { Inbox } from './inbox.ts';
import { commandInFlight, isActive, notSentDetail, timedOutDetail, wellFormedPrefix, type Proposal } from './proposal.ts';

export interface WriteBackOptions {
  inbox: Inbox;
  /** Publishes QoS 1; resolves on PUBACK. */
  publish: (topic: string, payload: string) => Promise<void>;
  /** Subscribes the handler to `tilstand/<site>/acks/+`; may return an unsubscribe function. */
  onAck: (handler: (topic: string, payload: Buffer) => void) => (() => void) | void;
  /** True when the latest state shows the proposal's effect (the site: `agent.effectSeen`). */
  effectSeen: (p: Proposal) => boolean;
  clock?: () => number;
  /**
   * A clock that never steps (default `performance.now`): the timeout and the resend count by it
   * as well as by the wall clock, so a wall clock stepped back (NTP correcting a PC that ran ahead)
   * does not hold a command in `sent` for the length of the step. Across a restart only the wall
   * clock (the stored `sentAtMs`) counts.
   */
  monotonic?: () => number;
  /** Sent but not applied after this long → timed_out. Default 10 minutes. */
  appliedTimeoutMs?: number;
  /** A publish not taken by the broker (PUBACK) within this long counts as failed: the command stays pending. Default 10 s. */
  publishTimeoutMs?: number;
  /** Sent but not acknowledged after this long → published again (same command_id). Default 1 minute. */
  resendAfterMs?: number;
  /** How often `start()` polls. Default 1000 ms. */
  pollMs?: number;
  ackBytesMax?: number;
  pollBatchMax?: number;
  /**
   * When this site was rebuilt from HQ by `tilstand restore` (`atMs`: its restore note's
   * `restoredAtMs`, no later than the site's start), and the proposals its approval_inbox held
   * open or deferred without a command as restored (`proposals`: at the snapshot the note names,
   * `proposalsWithoutCommandAt`); undefined when it never was. Only then can an ack of one of those
   * proposals, which this inbox never approved, be its approval lost with the old PC
   * (`Inbox.approvalNotOnRecord`); on any other site, and of any other proposal, such an ack is
   * warned of and ignored — a module's ack alone does not decide a proposal. By the restored
   * state, not by the proposal's `createdAtMs` against `atMs`: a wall clock stepped back while the
   * site runs (NTP) made the site's own new proposals older than the restore. `proposals`
   * 'unreadable': the inbox as restored could not be read (its snapshot expired, nothing kept from
   * it): an ack approves nothing, and its warning says whether the approval was lost cannot be told
   * (not that the proposal was made after the restore, which it may not have been).
   */
  restored?: { atMs: number; proposals: ReadonlySet<string> | 'unreadable' };
  onWarning?: (message: string) => void;
}

interface Ack {
  command_id: string;
  module: string;
  ok: boolean;
  result?: unknown;
  error?: string;
}

/** The most of what a module says in an ack (its result or error) kept as the command's detail. */
const ACK_DETAIL_CHARS_MAX = 2000;
/** The most of an unknown ack's command_id a warning shows (an ack may be up to `ackBytesMax`). */
const ACK_ID_SHOWN_CHARS_MAX = 200;
/** The most unknown ids a line of held-back ack warnings names (`warnAck`): the first ones held, distinct. */
const ACK_HELD_IDS_SHOWN_MAX = 10;

/** After the first of each kind, at most one warning of a single ack per module this often (`warnAck`). */
export const ACK_WARNING_EVERY_MS = 60_000;
/** Modules whose ack warnings are limited and counted apart; the ones past it share a limit and counts. */
const ACK_WARNING_MODULES_MAX = 1_000;

/** The kinds of warning of a single ack (`warnAck`), each with the words its count is said in. */
const ACK_WARNING_KINDS = {
  tooLarge: 'above ackBytesMax',
  notJson: 'not JSON',
  malformed: 'without command_id/ok',
  unknownId: 'of an unknown id',
  otherModule: "of another module's proposal",
  withoutCommand: 'of a proposal without a command',
  decidedHere: 'of a proposal decided here',
} as const;
type AckWarningKind = keyof typeof ACK_WARNING_KINDS;

/**
 * How long after a restore a module's ack can still be the answer to a command approved on the old
 * PC (`restored.atMs`): a module holds its answer until it reaches the new broker, which takes its
 * installer's new password — hours, a few days. Past a week none is still waiting, and a module's
 * ack alone does not decide a proposal (the restore note is kept for good).
 */
export const LOST_APPROVAL_ACK_WINDOW_MS = 7 * 24 * 3_600_000;

/**
 * The proposals of approval_inbox at snapshot `snapshotId` that were open or deferred then, without
 * a command: the only ones a module's ack can be the answer to an approval lost with the old PC of
 * (`WriteBackOptions.restored`). One with a command keeps it, so its acks are taken as any; one
 * withdrawn, rejected or stale at the snapshot could not be approved on the old PC after it (each is
 * final: `Inbox.decide` refuses it), so an ack of it approves nothing. Reads the snapshot in the
 * columns it needs; NotFound (core/lsm) when it has expired.
 */
export function proposalsWithoutCommandAt(inboxTable: Table, snapshotId: number): string[] {
  const out: string[] = [];
  const projection = ['proposal_id', 'command_state', 'agent_status', 'decision'];
  for (const [id, command, agentStatus, decision] of inboxTable.scanRows({ snapshotId }, { projection, fillCache: false })) {
    if (command !== null && command !== undefined) continue;
    if (agentStatus === 'withdrawn' || (decision !== null && decision !== undefined && decision !== 'deferred')) continue;
    out.push(String(id));
  }
  return out;
}

/** What `warnAck` keeps of one module's ack warnings (`WriteBack.ackWarnings`). */
interface AckWarnings {
  atMs: number;
  said: Set<string>;
  held: Map<AckWarningKind, number>;
  heldIds: Set<string>;
}

const DEFAULTS = { appliedTimeoutMs: 10 * 60_000, publishTimeoutMs: 10_000, resendAfterMs: 60_000, pollMs: 1000, ackBytesMax: 64 * 1024, pollBatchMax: 1000 };

export class WriteBack {
  private readonly o: WriteBackOptions;
  private readonly clock: () => number;
  private readonly limits: typeof DEFAULTS;
  private readonly warn: (m: string) => void;
  private readonly ackPrefix: string;
  private readonly unsubscribe: (() => void) | void;
  private readonly sending = new Set<string>();
  private readonly mono: () => number;
  /**
   * When each command was last published by this process, by both clocks, and (when this process
   * sent it first) its first send by the monotonic one. After a restart: `sentAtMs` only.
   */
  private readonly published = new Map<string, { wallMs: number; monoMs: number; firstMonoMs: number | undefined }>();
  private timer: NodeJS.Timeout | undefined;
  /**
   * Per module (undefined: those past ACK_WARNING_MODULES_MAX), when its last ack warning was said,
   * which kinds it has said (`warnAck`'s `first`), the counts of those not said since, by kind, and
   * the first unknown ids among them (at most ACK_HELD_IDS_SHOWN_MAX, as shown).
   */
  private readonly ackWarnings = new Map<string | undefined, AckWarnings>();

  constructor(o: WriteBackOptions) {
    this.o = o;
    this.clock = o.clock ?? Date.now;
    this.mono = o.monotonic ?? (() => performance.now());
    this.limits = {
      appliedTimeoutMs: o.appliedTimeoutMs ?? DEFAULTS.appliedTimeoutMs,
      publishTimeoutMs: o.publishTimeoutMs ?? DEFAULTS.publishTimeoutMs,
      resendAfterMs: o.resendAfterMs ?? DEFAULTS.resendAfterMs,
      pollMs: o.pollMs ?? DEFAULTS.pollMs,
      ackBytesMax: o.ackBytesMax ?? DEFAULTS.ackBytesMax,
      pollBatchMax: o.pollBatchMax ?? DEFAULTS.pollBatchMax,
    };
    for (const [k, v] of Object.entries(this.limits)) {
      if (!Number.isSafeInteger(v) || v < 1) throw new InboxError('InvalidArgument', `${k}: expected an integer ≥ 1, got ${String(v)}`);
    }
    this.warn = o.onWarning ?? ((m) => console.warn(`write-back: ${m}`));
    this.ackPrefix = `tilstand/${o.inbox.site}/acks/`;
    o.inbox.onApproved((p) => this.send(p));
    this.unsubscribe = o.onAck((topic, payload) => this.handleAck(topic, payload));
  }

  /**
   * The command message of an approved proposal (exported for the module's tests and docs).
   * `expiresAtMs`: when this write-back stops waiting (the first send + appliedTimeoutMs); the
   * module client refuses the command after it.
   */
  static commandOf(p: Proposal, nowMs: number, expiresAtMs: number): Record<string, unknown> {
    if (p.module === null || p.decision?.kind !== 'approved') throw new InboxError('InvalidArgument', `proposal ${p.id} has no command to send (${p.module === null ? 'a notice' : p.status})`);
    return {
      ...p.params,
      command_id: p.id,
      action: p.action,
      proposal_id: p.id,
      requested_by: p.decision.by,
      approved_at_ms: p.decision.atMs,
      ...(p.decision.comment ? { comment: p.decision.comment } : {}),
      ts_ms: nowMs,
      expires_at_ms: expiresAtMs,
    };
  }

  /**
   * Publishes the command of an approved proposal and marks it sent; one still pending
   * appliedTimeoutMs after its approval is marked failed instead (see the file header).
   */
  async send(p: Proposal): Promise<void> {
    if (p.module === null || p.command?.state !== 'pending' || this.sending.has(p.id)) return;
    const sinceApproval = this.clock() - p.decision!.atMs;
    if (sinceApproval >= this.limits.appliedTimeoutMs) {
      this.mark(p.id, 'failed', notSentDetail(this.limits.appliedTimeoutMs, sinceApproval));
      return;
    }
    // An approval whose commit failed (a full disk) waits for the inbox's next commit: sent before
    // it, a restart in between forgot the approval and its log entry, and the module acted on a
    // decision nobody could find.
    if (!this.o.inbox.isCommitted(p.id)) return;
    await this.publish(p, 'not sent (stays pending, retried on the next poll)', () => this.mark(p.id, 'sent', null));
  }

  /**
   * Publishes p's command (one publish per proposal at a time) and notes when; `then` runs after
   * the broker took it, `failed` names the outcome in the warning when it did not.
   */
  private async publish(p: Proposal, failed: string, then?: () => void): Promise<void> {
    if (p.command === null || this.sending.has(p.id)) return;
    this.sending.add(p.id);
    const now = this.clock();
    const monoMs = this.mono();
    const firstMonoMs = p.command.sentAtMs === null ? monoMs : this.published.get(p.id)?.firstMonoMs;
    this.published.set(p.id, { wallMs: now, monoMs, firstMonoMs });
    // The timeout counts from the first send (a resend keeps its expiry); a command not sent yet
    // expires when send() would stop trying, appliedTimeoutMs after the approval.
    const expiresAtMs = (p.command.sentAtMs ?? Math.min(now, p.decision!.atMs)) + this.limits.appliedTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      const unanswered = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the broker did not take it (no PUBACK) within ${this.limits.publishTimeoutMs} ms`)), this.limits.publishTimeoutMs);
      });
      await Promise.race([this.o.publish(p.command.topic, JSON.stringify(WriteBack.commandOf(p, now, expiresAtMs))), unanswered]);
    } catch (e) {
      this.warn(`command for ${p.id} ${failed}: ${(e as Error).message}`);
      return;
    } finally {
      clearTimeout(timer);
      this.sending.delete(p.id);
    }
    // Outside the try: the broker took it, so a commit failing under `then` (mark's warning) is no
    // "not sent" — the command went out, and the inbox holds `sent` for its next commit.
    then?.();
  }

  /** Sends every command still pending (after a restart, or a failed publish). */
  async resume(): Promise<void> {
    for (const listed of this.o.inbox.commandsInFlight()) {
      if (listed.command?.state !== 'pending') continue;
      // Read again: while an earlier send awaited its publish, poll() may have sent this one; the
      // listed copy still says pending, and would publish it again with an expiry counted anew.
      const p = this.o.inbox.get(listed.id);
      if (p) await this.send(p);
    }
  }

  handleAck(topic: string, payload: Buffer): void {
    if (!topic.startsWith(this.ackPrefix)) return;
    const module = topic.slice(this.ackPrefix.length);
    if (payload.length > this.limits.ackBytesMax) return this.warnAck(module, 'tooLarge', `ack of ${payload.length} bytes on ${topic} is above ackBytesMax ${this.limits.ackBytesMax}; ignored`);
    let ack: Ack;
    try {
      ack = JSON.parse(payload.toString('utf8')) as Ack;
    } catch {
      return this.warnAck(module, 'notJson', `ack on ${topic} is not JSON; ignored`);
    }
    if (!ack || typeof ack !== 'object' || typeof ack.command_id !== 'string' || typeof ack.ok !== 'boolean') return this.warnAck(module, 'malformed', `ack on ${topic} has no command_id/ok; ignored`);
    let p = this.o.inbox.get(ack.command_id);
    if (!p) {
      // Not ours (another Tilstand, or a module's own test) — or, within the week after a restore,
      // a proposal the restored inbox does not have (made after the tag it was restored at), or an
      // id a client made up to probe what an ack decides here: said, so it leaves a trace.
      const r = this.o.restored;
      if (r !== undefined && this.clock() - r.atMs < LOST_APPROVAL_ACK_WINDOW_MS) {
        const shown = JSON.stringify(ack.command_id.slice(0, ACK_ID_SHOWN_CHARS_MAX));
        this.warnAck(module, 'unknownId', `ack of ${shown} from ${module}: no proposal of this inbox has that id (this site was restored from HQ within the week); ignored`, 'unknownId', shown);
      }
      return;
    }
    if (p.module === null) return; // a notice: no command, nothing to acknowledge
    if (p.module !== module) return this.warnAck(module, 'otherModule', `ack for ${p.id} came from ${module}, but ${p.command === null ? 'the proposal is for' : 'the command went to'} ${p.module}; ignored`);
    if (p.command === null) {
      // Our proposal, never approved here, and its module answers its command: on a site restored
      // from HQ, of a proposal made before the restore, the approval was lost with the old PC.
      // Dropped, the proposal stayed open for a second approval of a command already carried out
      // (or refused for good). Anywhere else no approval can have been lost: a module's ack does
      // not decide a proposal.
      const refusal = refusalWithoutCommand(p, this.o.restored, this.clock(), ack.ok);
      // The first of each reason and proposal said at once: after a restore a module sends its held
      // answers in a burst, and its operators are asked about each proposal. Bounded by the
      // proposals: the ack's module is the proposal's (above), so each is keyed under one module.
      if (refusal !== undefined) return this.warnAck(module, 'withoutCommand', `ack of ${p.id} from ${module}, which is ${p.status} without a command and ${refusal.why}`, `without a command: ${refusal.reason}: ${p.id}`);
      let recorded: Proposal | undefined;
      try {
        recorded = this.o.inbox.approvalNotOnRecord(p.id, module);
      } catch (e) {
        // A commit that failed (as in mark): the inbox holds the write for its next commit.
        this.warn(`the approval of ${p.id} not on record failed to be recorded (a write the inbox holds goes with its next commit): ${(e as Error).message}`);
        recorded = this.o.inbox.get(p.id);
      }
      if (recorded?.command == null) {
        // Rejected or found stale here by a named person before the ack came: that record stands (an
        // ack does not overwrite a person's decision), but what the module did is said — "ignored"
        // alone hid a command carried out under a proposal the floor sees as rejected.
        const d = (recorded ?? p).decision;
        if (d && (d.kind === 'rejected' || d.kind === 'stale')) {
          // The first of each proposal at once (its module's operators are asked about each); a
          // repeat of it is counted.
          return this.warnAck(
            module,
            'decidedHere',
            `ack of ${p.id} from ${module}: the module ${ack.ok ? 'carried out' : 'refused'} its command, approved before the restore (its approval lost with the site PC), but ${p.id} is ${d.kind} here (by ${d.by}); left as it is — check with the module's operators what was done`,
            `decided here: ${p.id}`,
          );
        }
        return this.warnAck(module, 'withoutCommand', `ack of ${p.id} from ${module}, which is ${p.status} without a command; ignored`, `without a command: ${p.id}`);
      }
      this.warn(
        `ack of ${p.id} from ${module}: its approval is not on record (lost with the site PC: restored from an earlier state of HQ), but the module ${ack.ok ? 'carried out' : 'refused'} its command; recorded as approved by "?" — find out who approved it`,
      );
      p = recorded;
    }
    // Well-formed: the table refuses a lone surrogate (a JSON escape, or a cut inside a pair).
    const detail = ack.ok ? (ack.result === undefined ? null : wellFormedPrefix(JSON.stringify(ack.result), ACK_DETAIL_CHARS_MAX)) : wellFormedPrefix(String(ack.error ?? 'failed'), ACK_DETAIL_CHARS_MAX);
    // The module answered before the publish returned (its ack handled ahead of the PUBACK), or
    // answers a publish a restart forgot to mark: it was sent. Still `pending`, an ok ack would
    // find no transition (pending → acknowledged is none) and be lost; a refusal would go
    // pending → failed as one never sent, which says nothing of the module and does not count
    // toward FAILURES_TO_QUIET: a module refusing again and again was asked every minute.
    if (p.command?.state === 'pending') this.mark(p.id, 'sent', null);
    this.mark(p.id, ack.ok ? 'acknowledged' : 'failed', detail, module);
  }

  /**
   * A warning of a single ack from `module`: the first of its kind (`first`, the kind by default;
   * a refusal of a known proposal passes its reason and id) at once, an operator must see it; after that at most one line per module every
   * `ACK_WARNING_EVERY_MS` by the write-back's clock (one going back ends the wait), the next one
   * saying how many of each kind were not said. A module (or a client) sending thousands wrote a
   * line each — 20,000 acks, 7 MB of site.log, its rotated copy gone with what it held; proposal
   * ids are guessable, so acks of known ids are as cheap to send as made-up ones. What is held back
   * is said by the poll once the minute is over, and by the stop (`sayHeld`). Past
   * `ACK_WARNING_MODULES_MAX` modules the others share one limit. `unknownId`: the id as shown, the
   * first ACK_HELD_IDS_SHOWN_MAX distinct ones held named with the count. Not limited: the warnings said at
   * most once a proposal (an approval recorded as not on record, or its commit failing) and a
   * commit failing under a mark (as under a poll's).
   */
  private warnAck(module: string, kind: AckWarningKind, message: string, first: string = kind, unknownId?: string): void {
    const now = this.clock();
    const key = this.ackWarnings.has(module) || this.ackWarnings.size < ACK_WARNING_MODULES_MAX ? module : undefined;
    let w = this.ackWarnings.get(key);
    if (w === undefined) {
      w = { atMs: now, said: new Set(), held: new Map(), heldIds: new Set() };
      this.ackWarnings.set(key, w);
    }
    if (w.said.has(first) && now >= w.atMs && now - w.atMs < ACK_WARNING_EVERY_MS) {
      w.held.set(kind, (w.held.get(kind) ?? 0) + 1);
      if (unknownId !== undefined && w.heldIds.size < ACK_HELD_IDS_SHOWN_MAX) w.heldIds.add(unknownId);
      return;
    }
    w.said.add(first);
    w.atMs = now;
    const held = heldCounts(w);
    this.warn(held === '' ? message : `${message} (since the last warning of acks from ${key ?? 'other modules'}, not said: ${held})`);
  }

  /** Says, a line per module, the ack warnings held back (`warnAck`): those whose minute is over, or all when `stopping`. */
  private sayHeld(stopping: boolean): void {
    const now = this.clock();
    for (const [key, w] of this.ackWarnings) {
      if (w.held.size === 0 || (!stopping && now >= w.atMs && now - w.atMs < ACK_WARNING_EVERY_MS)) continue;
      w.atMs = now;
      this.warn(`acks from ${key ?? 'other modules'}, not said since the last warning of them${stopping ? ' (the write-back stopped)' : ''}: ${heldCounts(w)}`);
    }
  }

  /**
   * markCommand where nothing awaits the outcome: an ack (handled inside the MQTT client's packet
   * handling, where an exception is uncaught) and a send given up (poll and start do not await
   * send: a rejection is unhandled). Either ended the process; a commit that fails (a full disk)
   * is a warning instead. The inbox keeps the write in memory and in its writer, and commits it
   * with its next commit.
   */
  private mark(...args: Parameters<Inbox['markCommand']>): void {
    try {
      this.o.inbox.markCommand(...args);
    } catch (e) {
      // Mostly the commit after the write (the next commit takes the write); a write refused
      // itself is lost with this warning, as an exception here lost it with the process.
      this.warn(`command ${args[1]} of ${args[0]} failed to be recorded (a write the inbox holds goes with its next commit): ${(e as Error).message}`);
    }
  }

  /** Marks applied what the state shows, timed_out what waited too long; resends pending ones. */
  poll(): void {
    this.sayHeld(false);
    const now = this.clock();
    const monoNow = this.mono();
    const list = this.o.inbox.commandsInFlight().slice(0, this.limits.pollBatchMax);
    for (const p of list) {
      const c = p.command!;
      if (c.state === 'pending') {
        void this.send(p);
        continue;
      }
      const seen = this.effectSeen(p);
      // Elapsed by the wall clock, or by the monotonic one where this process knows it: the larger.
      const pub = this.published.get(p.id);
      const sinceSent = c.sentAtMs === null ? 0 : Math.max(now - c.sentAtMs, pub?.firstMonoMs === undefined ? -Infinity : monoNow - pub.firstMonoMs);
      const sincePublished = pub ? Math.max(now - pub.wallMs, monoNow - pub.monoMs) : now - (c.sentAtMs ?? now);
      // Through mark: a commit failing under one is a warning naming it, and the poll goes on
      // (thrown, the commands after it in the list waited for the next poll, one more a poll).
      if (seen) this.mark(p.id, 'applied', c.detail, 'state');
      else if (c.sentAtMs !== null && sinceSent > this.limits.appliedTimeoutMs) {
        this.mark(p.id, 'timed_out', timedOutDetail(sinceSent, c.state));
      } else if (c.state === 'sent' && sincePublished >= this.limits.resendAfterMs) {
        // Published again; the state stays `sent`.
        void this.publish(p, 'not published again (tried again later)');
      }
    }
    // Timed out after the module acknowledged them: their effect may still come, and ends the wait.
    for (const p of this.o.inbox.commandsAwaitingEffect().slice(0, this.limits.pollBatchMax)) {
      if (this.effectSeen(p)) this.mark(p.id, 'applied', p.command!.detail, 'state');
    }
    for (const id of this.published.keys()) if (!commandInFlight(this.o.inbox.get(id)?.command ?? null)) this.published.delete(id);
  }

  /** Whether the state shows the proposal's effect; a failing check is warned of and counts as not yet. */
  private effectSeen(p: Proposal): boolean {
    try {
      return this.o.effectSeen(p);
    } catch (e) {
      this.warn(`effect check of ${p.id}: ${(e as Error).message}`);
      return false;
    }
  }

  start(): void {
    if (this.timer) return;
    void this.resume();
    this.timer = setInterval(() => {
      try {
        this.poll();
      } catch (e) {
        this.warn(`poll: ${(e as Error).message}`);
      }
    }, this.limits.pollMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (typeof this.unsubscribe === 'function') this.unsubscribe();
    this.sayHeld(true);
  }
}

/**
 * Why an ack of p (ours, for its module, without a command) approves nothing, said after "which is
 * <status> without a command and"; `reason` keys its first warning (`warnAck`). Undefined: it is
 * an approval lost with the old PC (`WriteBackOptions.restored`).
 */
function refusalWithoutCommand(p: Proposal, restored: WriteBackOptions['restored'], nowMs: number, ok: boolean): { reason: string; why: string } | undefined {
  if (restored === undefined) return { reason: 'not restored', why: 'this site was not restored from HQ; ignored' };
  if (nowMs - restored.atMs >= LOST_APPROVAL_ACK_WINDOW_MS) return { reason: 'past the week', why: 'the restore was more than a week ago; ignored' };
  if (restored.proposals === 'unreadable') {
    // Said with what the module did: its operators are asked about it.
    const did = ok ? 'carried out' : 'refused';
    return {
      reason: 'unreadable',
      why: `the inbox as restored could not be read (the site's log says why, at its start): the module ${did} its command, but whether its approval was lost with the old PC cannot be told; ignored — check with the module's operators what was done`,
    };
  }
  if (restored.proposals.has(p.id)) return undefined;
  // Open or deferred now and not in the set: made after the restore (a withdrawal or a decision is
  // final). Otherwise it may also have been withdrawn, rejected or found stale before the snapshot
  // HQ had, and so never approved on the old PC.
  return isActive(p) ? { reason: 'made after', why: 'was made after the restore; ignored' } : { reason: 'not as restored', why: 'was not open or deferred in the inbox as restored; ignored' };
}

/**
 * `4999 not JSON, 12 of an unknown id (first held: "a", "b", …)`: the counts of ack warnings held
 * back, by kind, and the first unknown ids held (the rest "…"); empties them.
 */
function heldCounts(w: AckWarnings): string {
  const text = [...w.held]
    .map(([kind, n]) => {
      const ids = kind === 'unknownId' && w.heldIds.size > 0 ? ` (first held: ${[...w.heldIds].join(', ')}${n > w.heldIds.size ? ', …' : ''})` : '';
      return `${n} ${ACK_WARNING_KINDS[kind]}${ids}`;
    })
    .join(', ');
  w.held.clear();
  w.heldIds.clear();
  return text;
}
