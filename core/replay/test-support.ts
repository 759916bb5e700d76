// A "live" site for tests and the benchmark, built from the real parts on a simulated clock:
// data directory with config.json and contracts, Journal, Ingestor (seed tables and any of the
// site's own, bindings, budgets), Inbox and Agent wired as core/site wires them (freshen =
// commitAll, recheck = agent.recheck, reevaluate = one run). `advance(untilMs)` moves time in
// steps of the site's ingest tick (250 ms): events received in the step are accepted, then the
// tick, then the people's decisions for that instant, then the agent when its minute has come.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, type AgentConfig, type RunResult } from '../agents/index.ts';
import { Inbox, type SignInResult } from '../inbox/index.ts';
import type { Binding } from '../ingest/binding.ts';
import { ContractRegistry, type Contract } from '../ingest/contracts.ts';
import { budgetOf, type TableBudget } from '../ingest/freshness.ts';
import { Ingestor } from '../ingest/ingestor.ts';
import { Journal } from '../ingest/journal.ts';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { SEED_CONTRACTS } from '../ingest/seed-contracts.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { tableDefinitionsIn } from '../ingest/site-tables.ts';
import { CliError } from '../lsm/cli/args.ts';
import { Catalog } from '../lsm/index.ts';
import { runCli, type CliRun } from '../lsm/testing/cli.ts';
import { runReplayCli } from './cli.ts';
import type { DemoEvent } from './demo-events.ts';
import { committedSnapshots, defaultScratchParent, DEFAULT_TICK_MS } from './replay.ts';

export const T0 = Date.UTC(2026, 10, 30, 6, 0, 0);

/** The demo site's budgets (core/site/demo/site.ts): short, so commits happen within seconds. */
export const DEMO_BUDGETS = [
  { table: 'work_queue', budgetMs: 5_000, decision: 'demo', confirmedBy: 'test' },
  { table: 'resources', budgetMs: 5_000, decision: 'demo', confirmedBy: 'test' },
  { table: 'stock', budgetMs: 15_000, decision: 'demo', confirmedBy: 'test' },
  { table: 'dead_letters', budgetMs: 2_000, decision: 'demo', confirmedBy: 'test' },
];

/**
 * `tilstand replay …` as core/site/cli/main.ts dispatches it (core/replay may not import core/site):
 * a CliError is printed as `tilstand: <message>` and its exit code returned.
 */
export async function replayCli(argv: string[]): Promise<CliRun> {
  if (argv[0] !== 'replay') throw new Error(`replayCli: expected 'replay …', got '${argv[0]}'`);
  return runCli(async (args, io) => {
    try {
      return await runReplayCli(args, io);
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      io.stderr.write(`tilstand: ${e.message}\n`);
      return e.exitCode;
    }
  }, argv.slice(1));
}

export type People = (at: number, inbox: Inbox) => Promise<void>;

export class LiveSite {
  readonly dir: string;
  readonly site = 's1';
  readonly database = 'site_s1';
  now: number;
  readonly clock = () => this.now;
  readonly catalog: Catalog;
  readonly journal: Journal;
  readonly ingestor: Ingestor;
  readonly inbox: Inbox;
  readonly agent: Agent;
  readonly runs: RunResult[] = [];
  private pending: DemoEvent[] = [];
  private lastStep: number;
  private closed = false;

  /**
   * `own`: tables of the site's own (config.json `tables` entries with `columns`), the bindings
   * that write them (after the seed ones) and their modules' contracts, as core/site opens them.
   * `dir`: the data directory of a LiveSite closed before, started again there with this config.json
   * (a restart after config.json changed, e.g. to add `own`); give a `startMs` after its last instant.
   * `onWarning`: ingest's warnings (the site's log; default dropped). `partitionExpireRandom`: the
   * Ingestor's option of that name (default Math.random).
   */
  constructor(
    o: {
      startMs?: number;
      agent?: Partial<AgentConfig>;
      parent?: string;
      dir?: string;
      own?: { tables: Record<string, unknown>[]; bindings: Binding[]; contracts: Contract[] };
      onWarning?: (message: string) => void;
      partitionExpireRandom?: () => number;
    } = {},
  ) {
    this.now = o.startMs ?? T0;
    this.lastStep = this.now;
    this.dir = o.dir ?? mkdtempSync(join(o.parent ?? defaultScratchParent(), 'tilstand-live-'));
    // The agent's thresholds as a site keeps them: config.json's `agent` section (core/site), which
    // the export records (the evidence retentions are the site's `evidence` section).
    const { evidenceRetentionMs: _e, baselineRetentionMs: _b, ...siteAgent } = o.agent ?? {};
    const tables = [...DEMO_BUDGETS, ...(o.own?.tables ?? [])];
    const bindings = [...SEED_BINDINGS, ...(o.own?.bindings ?? [])];
    const config = { format: 1, site: this.site, tables, bindings: o.own ? bindings : 'seed', ...(o.agent ? { agent: siteAgent } : {}) };
    writeFileSync(join(this.dir, 'config.json'), JSON.stringify(config, null, 2));
    mkdirSync(join(this.dir, 'contracts'), { recursive: true });
    const contracts = new ContractRegistry(join(this.dir, 'contracts'));
    for (const c of [...SEED_CONTRACTS, ...(o.own?.contracts ?? [])]) contracts.register(c);
    this.catalog = new Catalog(join(this.dir, 'warehouse'), { clock: this.clock });
    this.journal = Journal.open(this.dir, { nowMs: this.clock });
    this.ingestor = Ingestor.open({
      site: this.site,
      catalog: this.catalog,
      database: this.database,
      journal: this.journal,
      contracts,
      bindings,
      tables: [...SEED_TABLES, ...tableDefinitionsIn(tables)],
      budgets: (tables as TableBudget[]).map(budgetOf),
      clock: this.clock,
      onWarning: o.onWarning ?? (() => undefined),
      ...(o.partitionExpireRandom ? { partitionExpireRandom: o.partitionExpireRandom } : {}),
    });
    const users = { verifyPin: async (name: string): Promise<SignInResult> => ({ ok: true, user: { name, role: 'shift_lead', disabled: false, hasPin: true, hasPassword: false, hasBadge: false, createdAtMs: 0, lastSignInMs: null, lockedUntilMs: null } }) };
    let agent!: Agent;
    this.inbox = Inbox.open({
      catalog: this.catalog,
      database: this.database,
      users,
      freshen: () => this.ingestor.commitAll(),
      recheck: (p) => agent.recheck(p),
      reevaluate: () => void this.runs.push(agent.run()),
      clock: this.clock,
      onWarning: () => undefined,
    });
    agent = new Agent({ catalog: this.catalog, database: this.database, inbox: this.inbox, clock: this.clock, onWarning: () => undefined, ...(o.agent ? { config: o.agent } : {}) });
    this.agent = agent;
  }

  /** Queues events (received at their atMs). */
  receive(events: DemoEvent[]): void {
    this.pending.push(...events);
  }

  /** Moves the clock to `untilMs` in ingest ticks; the agent runs every `intervalMs` from `agentPhaseMs`. */
  async advance(untilMs: number, o: { people?: People; agentPhaseMs?: number } = {}): Promise<void> {
    const phase = o.agentPhaseMs ?? T0;
    const interval = this.agent.config.intervalMs;
    for (let g = Math.ceil((this.lastStep + 1) / DEFAULT_TICK_MS) * DEFAULT_TICK_MS; g <= untilMs; g += DEFAULT_TICK_MS) {
      const batch: Promise<bigint>[] = [];
      let n = 0;
      while (n < this.pending.length && this.pending[n]!.atMs <= g) {
        const e = this.pending[n++]!;
        this.now = Math.max(this.now, e.atMs);
        batch.push(this.ingestor.accept(e.topic, e.payload, e.atMs));
      }
      this.pending.splice(0, n);
      if (batch.length > 0) {
        this.journal.flush();
        await Promise.all(batch);
      }
      this.now = g;
      const before = committedSnapshots(this.ingestor);
      this.ingestor.tick(g);
      if (committedSnapshots(this.ingestor) !== before) this.agent.recheckChanged();
      if (o.people) await o.people(g, this.inbox);
      if (g > phase && (g - phase) % interval === 0) this.runs.push(this.agent.run());
      this.lastStep = g;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.inbox.close();
    this.ingestor.close();
    this.journal.close();
  }

  remove(): void {
    this.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
