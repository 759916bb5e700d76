// The decision half of a running site: the approval inbox, the work-queue agent and the
// write-back, wired the way core/agents' full-loop test wires them:
//   Inbox     freshen = ingestor.commitAll (the compare-and-set re-checks committed state),
//             recheck = agent.recheck, reevaluate = one agent run;
//   Agent     every `intervalMs` (and on demand: the control op `agent.run`), running the
//             installed rules with the site's rule files' (config `agent.ruleFiles`, loaded at start),
//             which may read the site's own tables (config `tables` with columns, `siteTables`);
//             a run withdraws the open proposals of a rule not among them (`withdrawNotInstalled`);
//             `agentStatus` says when its last run finished (the Agent's `sinceLastRunMs`: a run
//             with nothing new commits nothing, so the inbox's last commit is not the last run);
//   WriteBack publishes commands through the site's internal MQTT client (QoS 1) and reads the
//             modules' acks from `tilstand/<site>/acks/+` on the same client.
//
// Session tickets: the Inbox verifies the decider itself (`users.verifyPin`). A person signed in
// to the UI has proven who they are already, so the site API hands the Inbox a one-time ticket
// instead of the PIN (`SessionTickets.issue`); the ticket is good for one verification of that
// name within `TICKET_TTL_MS`, and the user must still exist, be enabled and not locked. Every
// other caller (the CLI) goes through the UserStore's PIN check unchanged.
//
// Concurrency: single-threaded; one per Site. Invariant: nothing here writes a state table —
// the agent writes tags and proposals, the inbox its own two tables.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { Agent, type AgentConfig, type AgentConfigInput, type Rule } from '../agents/index.ts';
import { Inbox, WriteBack, type SignInResult, type UserStore, type WriteBackOptions } from '../inbox/index.ts';
import type { Ingestor } from '../ingest/ingestor.ts';
import type { Catalog } from '../lsm/index.ts';
import type { AgentStatus } from './api.ts';

const TICKET_TTL_MS = 30_000;

/** One-time proofs that a signed-in session may act as a user (see the file header). */
export class SessionTickets {
  private readonly tickets = new Map<string, { name: string; untilMs: number }>();

  constructor(private readonly users: UserStore) {}

  issue(name: string): string {
    const now = Date.now();
    for (const [t, v] of this.tickets) if (v.untilMs < now) this.tickets.delete(t);
    const token = `ticket:${randomBytes(24).toString('base64url')}`;
    this.tickets.set(token, { name, untilMs: now + TICKET_TTL_MS });
    return token;
  }

  /** The Inbox's `users`: a ticket for the name, else the UserStore's PIN check. */
  async verifyPin(name: string, pin: string): Promise<SignInResult> {
    const t = this.tickets.get(pin);
    if (t === undefined) return this.users.verifyPin(name, pin);
    this.tickets.delete(pin);
    const same = Buffer.from(t.name).length === Buffer.from(name).length && timingSafeEqual(Buffer.from(t.name), Buffer.from(name));
    if (!same || t.untilMs < Date.now()) return { ok: false, reason: 'wrong' };
    const u = this.users.get(name);
    if (!u) return { ok: false, reason: 'unknown' };
    if (u.disabled) return { ok: false, reason: 'disabled' };
    if (u.lockedUntilMs !== null) return { ok: false, reason: 'locked', lockedUntilMs: u.lockedUntilMs };
    return { ok: true, user: u };
  }
}

export interface DecisionsOptions {
  site: string;
  catalog: Catalog;
  database: string;
  users: UserStore;
  /** What the inbox's compare-and-set commits first; the site's current Ingestor (one resumed in place replaces it). */
  ingestor: Pick<Ingestor, 'commitAll'>;
  internal: MqttClient;
  agent?: AgentConfigInput;
  /**
   * The rules the agent runs: the installed ones with the site's rule files' in force (config
   * `agent.ruleFiles`, core/agents `rulesInForce`). Default: the installed rules.
   */
  rules?: readonly Rule[];
  /**
   * The site's own tables (config `tables` entries with columns, `siteTableNames`): what its rules
   * may read besides the state tables (core/agents `Rule.reads`). Default: none.
   */
  siteTables?: readonly string[];
  /** Inbox `decisionEvidenceRetentionMs` (config `evidence.decisionsMs`). */
  decisionEvidenceRetentionMs?: number;
  /** Start the agent's timer (false: runs only on demand). Default true. */
  agentTimer?: boolean;
  /** The agent's first run evaluates every row (its thresholds changed while the site was stopped). */
  reevaluateAll?: boolean;
  /** When `tilstand restore` rebuilt this site from HQ and what its inbox held then (restored-proposals.ts), for the write-back (`WriteBackOptions.restored`). */
  restored?: WriteBackOptions['restored'];
  log: (line: string) => void;
}

export class Decisions {
  readonly inbox: Inbox;
  readonly agent: Agent;
  readonly writeBack: WriteBack;
  readonly tickets: SessionTickets;
  private closed = false;
  /** Whether the agent's timers run (a site started with --no-agent-timer runs it only when asked). */
  private readonly timer: boolean;

  constructor(o: DecisionsOptions) {
    this.tickets = new SessionTickets(o.users);
    this.timer = o.agentTimer !== false;
    let agent: Agent | undefined;
    this.inbox = Inbox.open({
      catalog: o.catalog,
      database: o.database,
      users: this.tickets,
      freshen: () => o.ingestor.commitAll(),
      recheck: (p) => agent!.recheck(p),
      reevaluate: () => void this.runAgent(),
      // A decision returns without waiting for a compaction of the inbox's tables; they compact in
      // slices on the event loop after it (core/inbox DESIGN.md).
      compaction: 'deferred',
      ...(o.decisionEvidenceRetentionMs !== undefined ? { decisionEvidenceRetentionMs: o.decisionEvidenceRetentionMs } : {}),
      onWarning: (m) => o.log(`inbox: ${m}`),
    });
    try {
      // The rules are every rule the site runs (a rule file that fails to load stops the start):
      // open proposals of any other rule — a file taken out of agent.ruleFiles, a rule renamed —
      // are withdrawn by the next run (core/agents DESIGN.md, "A rule no longer installed").
      agent = new Agent({ catalog: o.catalog, database: o.database, inbox: this.inbox, ...(o.agent ? { config: o.agent } : {}), ...(o.rules ? { rules: o.rules } : {}), ...(o.siteTables ? { siteTables: o.siteTables } : {}), withdrawNotInstalled: true, onWarning: (m) => o.log(`agent: ${m}`) });
      this.agent = agent;
      const ackTopic = `tilstand/${o.site}/acks/+`;
      o.internal.subscribe(ackTopic, { qos: 1 }, (e) => {
        if (e) o.log(`write-back: cannot subscribe to ${ackTopic}: ${e.message}`);
      });
      // mqtt.js re-subscribes after a reconnect (resubscribe: true by default).
      this.writeBack = new WriteBack({
        inbox: this.inbox,
        publish: async (topic, payload) => void (await o.internal.publishAsync(topic, payload, { qos: 1 })),
        onAck: (h) => {
          o.internal.on('message', h);
          return () => o.internal.off('message', h);
        },
        effectSeen: (p) => agent!.effectSeen(p),
        ...(o.restored !== undefined ? { restored: o.restored } : {}),
        onWarning: (m) => o.log(`write-back: ${m}`),
      });
    } catch (e) {
      this.inbox.close();
      throw e;
    }
    this.writeBack.start();
    if (o.reevaluateAll) this.agent.reevaluateAll();
    if (this.timer) this.agent.start();
  }

  /**
   * How often the agent looks (config `agent.intervalMs` in force: a config reload changes it),
   * whether its timers run, and when its last run finished as the wall clock reads `nowMs`. Cheap:
   * the site's status asks it every few seconds.
   */
  agentStatus(nowMs: number): AgentStatus {
    const since = this.agent.sinceLastRunMs();
    return { intervalMs: this.agent.config.intervalMs, timer: this.timer, lastRunMs: since === null ? null : nowMs - Math.round(since) };
  }

  /** One agent run now; errors are returned as a message, never thrown. */
  runAgent(): { ok: true; runId: string; created: number; withdrawn: number } | { ok: false; message: string } {
    if (this.closed) return { ok: false, message: 'the site is stopping' };
    try {
      const r = this.agent.run();
      return { ok: true, runId: r.runId, created: r.created.length, withdrawn: r.withdrawn.length };
    } catch (e) {
      return { ok: false, message: (e as Error).message };
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.agent.stop();
    this.writeBack.stop();
    this.inbox.close();
  }
}
