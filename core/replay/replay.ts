// `tilstand replay run`: rebuild the state at the fixture's tag in a scratch warehouse and replay
// the recorded events through the SAME ingest and commit path (an Ingestor over a scratch journal
// with the fixture's contracts, bindings and budgets; `accept(topic, payload, receivedAtMs)` with
// the recorded receive times), on a simulated clock. The agent (rules and config selectable) runs
// on its minute schedule in simulated time; the people's recorded decisions are applied to the
// replay's proposals of the same situation at the time they were made. Output: the proposals,
// the agent runs and the decisions' outcomes, as stable JSON (README.md, "Determinism").
//
// The simulated clock drives everything that reads time: the catalog (snapshot and tag times),
// the Ingestor (freshness, commits), the inbox and the agent. Order at one instant: events
// received at or before t, then the ingest tick (ticks fall on multiples of tickMs, as the site's
// timer) and, when it committed, the agent's check between runs (Agent.recheckChanged), then
// decisions made at t, then the agent run at t. Ticks where nothing can happen are
// skipped (no events since the last tick, nothing held for a gap, no table due): they would change
// nothing.
//
// Journal positions are the live ones: the scratch journal's sequence starts at the fixture's
// first position − 1, so every table's recorded position and high-water
// marks mean what they meant live and the Ingestor's recovery rules skip exactly what the tagged
// snapshot already holds.

import Database from 'better-sqlite3';
import { cpSync, createReadStream, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { Agent, loadRuleFiles, RuleFileError, ruleOrigins, type LoadedRuleFiles, type RuleOrigin, type RunResult } from '../agents/index.ts';
import { Inbox, readProposals, type SignInResult } from '../inbox/index.ts';
import type { Binding } from '../ingest/binding.ts';
import { ContractRegistry } from '../ingest/contracts.ts';
import { budgetOf, type TableBudget } from '../ingest/freshness.ts';
import { Ingestor } from '../ingest/ingestor.ts';
import { Journal } from '../ingest/journal.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { TableDefinitionError, tableDefinitionsIn } from '../ingest/site-tables.ts';
import { Catalog } from '../lsm/index.ts';
import { agentConfigFor, defaultAgentSpec, withLiveRules, type AgentBase, type AgentSpec, type RuleFile } from './agent-spec.ts';
import { runIdMs } from './export.ts';
import { byCreation, fixtureId, openFixture, replayProposal, RUN_FORMAT, type HumanDecision, type LiveRuleFile, type ReplayProposal } from './fixture.ts';
import { removeDeadRunTemps, writeRunOutput } from './run-output.ts';
import { makeScratchFolder, removeDeadScratch } from './scratch-folder.ts';
import { ScratchFileIO } from './scratch-io.ts';

export const DEFAULT_TICK_MS = 250;
/** The files of a run's output folder (run-output.ts writes run.json, which `replay diff` reads first, last). */
export const RUN_FILES = ['run.json', 'proposals.json', 'agent-runs.json', 'decisions.json', 'human-decisions.json'] as const;
/**
 * The replay's inbox commits its writes every this many agent runs (an hour of the default
 * agent): the uncommitted rows it keeps in memory stay bounded, and no commit per run is paid.
 */
const INBOX_COMMIT_RUNS = 60;

export interface ReplayProgress {
  events: number;
  totalEvents: number;
  simMs: number;
  agentRuns: number;
}

export interface ReplayOptions {
  /** A fixture folder or archive. */
  fixture: string;
  agent?: AgentSpec;
  /** Output folder (created; must be empty if it exists). */
  out: string;
  /** The site's ingest tick period (default 250 ms, as core/site). */
  tickMs?: number;
  /**
   * Where the scratch warehouse and journal go. Default /dev/shm when it exists (the scratch
   * journal is thrown away, so its fsyncs buy nothing; on disk they cost ~3 ms each), else tmpdir.
   */
  scratchParent?: string;
  keepScratch?: boolean;
  /**
   * Told the scratch folder (a `tilstand-replay-…` folder under scratchParent) once it is made,
   * before anything can fail in it: with keepScratch it is left there, also when the run fails.
   */
  onScratch?: (dir: string) => void;
  onProgress?: (p: ReplayProgress) => void;
  /**
   * Run the live site's rule files the fixture holds (`liveAgent.ruleFiles`) with the default
   * agent, or a rules config on base "live" (its default). They are code: a replay of a fixture
   * from elsewhere (a site's, at HQ) runs them only when told (`replay run --run-rule-files`);
   * without it such a fixture is refused (FixtureRuleFilesRefused), unless the rules config's base
   * is "installed", which runs without them.
   */
  runFixtureRuleFiles?: boolean;
  /** Told each live rule file the replay runs (path on the site, SHA-256), before it is loaded. */
  onRuleFile?: (f: LiveRuleFile) => void;
}

/**
 * A fixture holding the live site's rule files, replayed with the default agent or a rules config
 * on base "live" without `runFixtureRuleFiles`: running them is running code that came with the
 * fixture. `config` names the rules config (`--agent <file>`), for the way round it.
 */
export class FixtureRuleFilesRefused extends Error {
  constructor(files: readonly LiveRuleFile[], config?: string) {
    const held = `the fixture holds the live site's rule files, code its agent ran (${files.map((f) => `${f.path}, sha256 ${f.sha256.slice(0, 12)}…`).join('; ')}): `;
    super(
      config === undefined
        ? `${held}a replay runs them only when told; give --run-rule-files to run what the site ran (read them first: config/rules/ in the fixture), or --agent <rules.json> with "base": "installed" to run without them`
        : `${held}${config} starts from the rules the live site ran ("base": "live", the default), and a replay runs them only when told; give --run-rule-files to run them with its changes (read them first: config/rules/ in the fixture), or "base": "installed" in ${config} to leave them out`,
    );
    this.name = 'FixtureRuleFilesRefused';
  }
}

export interface DecisionOutcome {
  atMs: number;
  situationKey: string;
  verb: HumanDecision['verb'];
  liveOutcome: string;
  liveProposalId: string;
  /** What happened in the replay: the decision's result, or `unmatched` (no open proposal of that situation). */
  replayOutcome: 'approved' | 'rejected' | 'deferred' | 'stale' | 'unmatched';
  replayProposalId: string | null;
}

export interface AgentRunRecord {
  runId: string;
  atMs: number;
  created: number;
  withdrawn: number;
  duplicates: number;
  suppressed: number;
  ruleErrors: { ruleId: string; message: string }[];
}

/** A rule the run ran: its id and version, and for a rule from a rule file that file's path and SHA-256. */
export type RunRule = RuleOrigin;

export interface RunManifest {
  format: typeof RUN_FORMAT;
  fixture: { id: string; name: string; tag: string; site: string; cutMs: number; untilMs: number };
  /**
   * `ruleFiles` (and a rule's `file`) only when rules from files ran: the live site's (listed
   * again in `liveRuleFiles`, by path and SHA-256) first, then the rules config's own. `base` only
   * when the fixture holds live rule files: what the rules started from (`default` runs "live").
   * A run.json written before either reads as before (no live rule files, or `default`'s in `ruleFiles`).
   */
  agent: { label: string; rules: RunRule[]; config: unknown; source: unknown; ruleFiles?: RuleFile[]; base?: AgentBase; liveRuleFiles?: { path: string; sha256: string }[] };
  clock: { tickMs: number; agentIntervalMs: number; firstAgentRunMs: number | null };
  counts: {
    events: number;
    agentRuns: number;
    proposals: number;
    proposalsByRule: Record<string, number>;
    decisionsApplied: number;
    decisionsUnmatched: number;
    deadLettersOpen: number;
    ingestWarnings: number;
  };
  ingestFailure: string | null;
}

export interface ReplayResult {
  manifest: RunManifest;
  proposals: ReplayProposal[];
  /** Wall-clock facts for the terminal (never written to the output). */
  wallMs: number;
  eventsPerSecond: number;
}

interface Ev {
  p: bigint;
  t: number;
  topic: string;
  payload: Buffer;
}

function parseLine(line: string): Ev {
  const o = JSON.parse(line) as { p: string; t: number; topic: string; payload?: string; payload64?: string };
  return { p: BigInt(o.p), t: o.t, topic: o.topic, payload: o.payload64 !== undefined ? Buffer.from(o.payload64, 'base64') : Buffer.from(o.payload ?? '', 'utf8') };
}

/** The fixture's events, in chunks (one per decompressed piece). */
async function* eventChunks(file: string): AsyncGenerator<Ev[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }).pipe(createGunzip({ chunkSize: 1 << 18 }))) {
    const lines = (rest + decoder.write(chunk as Buffer)).split('\n');
    rest = lines.pop()!;
    yield lines.filter((l) => l.length > 0).map(parseLine);
  }
  rest += decoder.end();
  if (rest.length > 0) yield [parseLine(rest)];
}

export function defaultScratchParent(): string {
  return process.platform === 'linux' && existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/**
 * What run.json records of the agent. A rule from a rule file carries the file's path and SHA-256,
 * so the diff names a rule from a file as such and an edited file as a change; `liveRuleFiles`
 * says which of the files were the live site's (the rest are the rules config's own), and `base`
 * what a fixture with live rule files had its rules start from (`liveFiles`: it holds some). The
 * keys are left out without rule files, so a run without them reads as before.
 */
function runAgent(spec: AgentSpec, config: unknown, liveFiles: boolean): RunManifest['agent'] {
  const rules: RunRule[] = ruleOrigins(spec.rules, spec.ruleFiles);
  const live = spec.liveRuleFiles ?? [];
  return {
    label: spec.label,
    rules,
    config,
    source: spec.source,
    ...(spec.ruleFiles.length > 0 ? { ruleFiles: spec.ruleFiles.map((f) => ({ ...f, rules: [...f.rules] })) } : {}),
    ...(liveFiles ? { base: spec.base } : {}),
    ...(live.length > 0 ? { liveRuleFiles: live.map((f) => ({ path: f.path, sha256: f.sha256 })) } : {}),
  };
}

/**
 * The rule files of a fixture whose site ran rule files of its own (`liveAgent.ruleFiles`), for
 * `--agent default` and a rules config on base "live" (agent-spec.ts `withLiveRules` composes the
 * rules the live agent ran from them: core/agents `rulesInForce`, as the site composed them),
 * loaded from the copies the fixture holds, not from the site's paths. So a fixture replays at HQ
 * as on the site, and two replays of it are byte-identical. run.json names each file by its path
 * on the site and its SHA-256 (the fixture's checksums and the check below hold them equal).
 */
async function liveRuleFiles(dir: string, live: readonly LiveRuleFile[]): Promise<LoadedRuleFiles> {
  let loaded: LoadedRuleFiles;
  try {
    loaded = await loadRuleFiles(live.map((f) => f.file), dir);
  } catch (e) {
    if (!(e instanceof RuleFileError)) throw e;
    throw new Error(`the live site's rule file ${live[e.index]!.path} (the fixture's ${live[e.index]!.file}): ${e.problem}`);
  }
  // The fixture's checksums hold each copy as exported; the graph found from the copies must be
  // the one recorded too (an import the fixture lacks would not have loaded, one it has more would
  // hash otherwise), so run.json's SHA-256 names the code the site ran.
  const differs = loaded.files.findIndex((f, i) => f.sha256 !== live[i]!.sha256);
  if (differs >= 0) throw new Error(`the live site's rule file ${live[differs]!.path} (the fixture's ${live[differs]!.file}): its code as loaded from the fixture hashes to ${loaded.files[differs]!.sha256}, not the ${live[differs]!.sha256} recorded at the export; the fixture is damaged`);
  return { files: loaded.files.map((f, i) => ({ ...f, path: live[i]!.path })), rules: loaded.rules };
}

/**
 * The first run of the live agent's timer among `runIds` (the live runs in a fixture's period): the
 * earliest run that a later one follows by whole intervals, give or take a second (the live timer
 * drifts by milliseconds). Runs a decision set off fall between the timer's and are passed over;
 * with no such pair, the earliest run. Undefined without runs.
 */
export function timerRunMs(runIds: readonly string[], intervalMs: number): number | undefined {
  const at = runIds.map(runIdMs).filter((t): t is number => t !== undefined).sort((a, b) => a - b);
  const onGrid = (d: number) => d >= intervalMs - 1000 && Math.abs(d - Math.round(d / intervalMs) * intervalMs) <= 1000;
  return at.find((a, i) => at.slice(i + 1).some((b) => onGrid(b - a))) ?? at[0];
}

/**
 * Makes the next position of a closed journal file `next` (positions are the live ones). Writes
 * both places core/ingest/journal.ts reads its high-water mark from: `meta.last_position`
 * (format 2) and `sqlite_sequence` (format-1 files).
 */
function setNextPosition(path: string, next: bigint): void {
  const db = new Database(path);
  try {
    db.defaultSafeIntegers(true);
    db.transaction(() => {
      db.prepare("INSERT INTO meta (key, value) VALUES ('last_position', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(String(next - 1n));
      if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").pluck().get() !== undefined) {
        db.prepare("INSERT OR REPLACE INTO sqlite_sequence (name, seq) VALUES ('journal', ?)").run(next - 1n);
      }
    })();
  } finally {
    db.close();
  }
}

export async function runReplay(o: ReplayOptions): Promise<ReplayResult> {
  const wall0 = performance.now();
  let spec = o.agent ?? defaultAgentSpec();
  const tickMs = o.tickMs ?? DEFAULT_TICK_MS;
  if (!Number.isSafeInteger(tickMs) || tickMs < 1) throw new Error(`tickMs: expected an integer ≥ 1, got ${tickMs}`);
  const scratchParent = o.scratchParent ?? defaultScratchParent();
  // What runs killed before left there (in memory, on /dev/shm): never a live run's.
  removeDeadScratch(scratchParent);
  const fx = openFixture(o.fixture, scratchParent);
  const m = fx.manifest;
  // What a run to this --out killed on this host left in it is not in the way (run-output.ts).
  if (existsSync(o.out)) removeDeadRunTemps(o.out);
  if (existsSync(o.out) && readdirSync(o.out).length > 0) {
    fx.close();
    throw new Error(`${o.out} exists and is not empty`);
  }
  // A folder to keep takes no lock: no later run removes it, also when this one dies.
  const scratchFolder = makeScratchFolder(scratchParent, 'tilstand-replay-', !o.keepScratch);
  const scratch = scratchFolder.dir;
  // The site's zone for the whole run: core/lsm takes local times (partition expiration's wall
  // clock, tag create times) as Java Paimon does, and in the machine's zone a replay at HQ dropped
  // other partitions than one on the site. Node takes a changed TZ at once; given back at the end.
  const zoneWas = process.env.TZ;
  if (m.timeZone !== undefined) process.env.TZ = m.timeZone;
  const closers: (() => void)[] = [];
  try {
    o.onScratch?.(scratch);
    // The live site's rule files run with the default agent and a rules config on base "live",
    // only when told; the config's own files go on top of them, and its `rules` picks from that.
    const liveFiles = m.liveAgent.ruleFiles ?? [];
    const runsLive = liveFiles.length > 0 && spec.base === 'live';
    if (runsLive && o.runFixtureRuleFiles !== true) throw new FixtureRuleFilesRefused(liveFiles, spec.source === 'default' ? undefined : spec.file ?? `the rules config ${spec.label}`);
    if (runsLive) for (const f of liveFiles) o.onRuleFile?.(f);
    spec = withLiveRules(spec, runsLive ? await liveRuleFiles(fx.dir, liveFiles) : undefined);
    // The state at the tag, the contracts, a journal whose positions continue the live ones.
    if (existsSync(join(fx.dir, 'warehouse'))) cpSync(join(fx.dir, 'warehouse'), join(scratch, 'warehouse'), { recursive: true });
    mkdirSync(join(scratch, 'warehouse'), { recursive: true });
    if (existsSync(join(fx.dir, 'config', 'contracts'))) cpSync(join(fx.dir, 'config', 'contracts'), join(scratch, 'contracts'), { recursive: true });
    const after = BigInt(m.events.afterPosition);
    Journal.open(scratch).close();
    const journalPath = join(scratch, 'journal.db');
    if (after > 0n) setNextPosition(journalPath, after + 1n);

    const bindings = JSON.parse(readFileSync(join(fx.dir, 'config', 'bindings.json'), 'utf8')) as Binding[];
    const budgets = JSON.parse(readFileSync(join(fx.dir, 'config', 'budgets.json'), 'utf8')) as TableBudget[];
    const decisions = JSON.parse(readFileSync(join(fx.dir, 'decisions.json'), 'utf8')) as HumanDecision[];

    let now = Math.min(m.cutMs, m.events.firstAtMs ?? m.cutMs);
    const clock = () => now;
    // No fsync in the scratch warehouse (scratch-io.ts): it is thrown away at the end.
    const catalog = new Catalog(join(scratch, 'warehouse'), { clock, fileIO: new ScratchFileIO() });
    const journal = Journal.open(scratch, { nowMs: clock });
    closers.push(() => journal.close());
    const contracts = new ContractRegistry(join(scratch, 'contracts'));
    let warnings = 0;
    let ingestor: Ingestor;
    try {
      ingestor = Ingestor.open({
        site: m.site,
        catalog,
        database: m.database,
        journal,
        contracts,
        bindings,
        // The site's own tables are defined in its `tables` entries (budgets.json is config's
        // list), so the replay makes them, or brings the cut's copy to the definition, as a start.
        tables: [...SEED_TABLES, ...tableDefinitionsIn(budgets)],
        budgets: budgets.filter((b) => b.table !== 'approval_inbox').map(budgetOf),
        clock,
        onWarning: () => void warnings++,
        // A partitioned table with `partition.expiration-time` checks first a random part of the
        // check interval after its writer opens (Java's guard for short jobs), then every
        // interval: drawn from the fixture, so two replays of it drop the same partitions at the
        // same commits (README.md, "Partition expiration").
        partitionExpireRandom: fixtureRandom(fixtureId(fx.dir)),
      });
    } catch (e) {
      // A definition that no longer fits the table's files at the cut (config.json changed after
      // the table was made, and exported before a start refused it): `tables[4]` alone would read
      // as the site's config.json.
      if (e instanceof TableDefinitionError) throw new Error(`fixture config/budgets.json: ${e.message}`);
      throw e;
    }
    closers.unshift(() => ingestor.close());

    // The people: each recorded decision is made again, by the same name and role.
    let role = 'shift_lead';
    const users = {
      verifyPin: async (name: string): Promise<SignInResult> => ({
        ok: true,
        user: { name, role: role as 'shift_lead', disabled: false, hasPin: true, hasPassword: false, hasBadge: false, createdAtMs: 0, lastSignInMs: null, lockedUntilMs: null },
      }),
    };
    let agent!: Agent;
    const runs: AgentRunRecord[] = [];
    const record = (r: RunResult) =>
      runs.push({ runId: r.runId, atMs: r.atMs, created: r.created.length, withdrawn: r.withdrawn.length, duplicates: r.duplicates.length, suppressed: r.suppressed.length, ruleErrors: r.ruleErrors });
    const inbox = Inbox.open({
      catalog,
      database: m.database,
      users,
      freshen: () => ingestor.commitAll(),
      recheck: (p) => agent.recheck(p),
      reevaluate: () => void record(agent.run()),
      clock,
      // Nothing but this process reads the scratch warehouse, and the output reads the inbox once
      // at the end: its two table commits per agent run are left to `inbox.commit()` (every
      // INBOX_COMMIT_RUNS runs, to bound the uncommitted rows, and at the end).
      deferCommits: true,
      onWarning: () => undefined,
    });
    closers.unshift(() => inbox.close());
    const config = agentConfigFor(spec, m.liveAgent.config);
    // The agent starts on the live thresholds and takes the rules config's as a site takes a
    // changed config.json `agent` section (Agent.reconfigure): a changed threshold makes its first
    // run evaluate every row, not only what changed since the live baseline run — else a row
    // already under a raised reorder point, and still there, is never proposed. The live
    // thresholds (`--agent default`) change nothing, so the replay still reproduces the live runs.
    // The site's own tables (budgets.json's entries with columns) are what a rule may read besides
    // the state tables (Rule.reads), as on the site.
    const siteTables = tableDefinitionsIn(budgets).map((d) => d.name);
    agent = new Agent({ catalog, database: m.database, inbox, rules: spec.rules, siteTables, config: agentConfigFor(defaultAgentSpec(), m.liveAgent.config), clock, onWarning: () => undefined });
    agent.reconfigure(config);

    // The agent's schedule: the live timer's phase, every intervalMs. The phase is that of the
    // newest run before the cut and the runs in the period (timerRunMs): that newest run may be one
    // a decision set off (a stale approval re-runs the agent at once, off the timer's minute), and
    // a cut made before the live timer's first run (a site that had just started) has none; the
    // timer's first run in the period is then the first.
    const interval = config.intervalMs;
    const livePath = join(fx.dir, 'live', 'agent-runs.json');
    const liveRuns = existsSync(livePath) ? (JSON.parse(readFileSync(livePath, 'utf8')) as string[]) : [];
    const timer = timerRunMs([...(m.liveAgent.baselineRunId ? [m.liveAgent.baselineRunId] : []), ...liveRuns], m.liveAgent.intervalMs);
    const base = timer ?? m.cutMs;
    let nextAgent = timer !== undefined && timer > m.cutMs ? timer : base + (Math.floor((m.cutMs - base) / interval) + 1) * interval;
    const firstAgentRunMs = nextAgent <= m.untilMs ? nextAgent : null;

    const outcomes: DecisionOutcome[] = [];
    let di = 0;
    const gen = eventChunks(join(fx.dir, m.events.file));
    let chunk: Ev[] = [];
    let ci = 0;
    const peek = async (): Promise<Ev | undefined> => {
      while (ci >= chunk.length) {
        const r = await gen.next();
        if (r.done) return undefined;
        chunk = r.value;
        ci = 0;
      }
      return chunk[ci];
    };
    const grid = (t: number) => Math.ceil(t / tickMs) * tickMs;
    let lastTick = -Infinity;
    let sinceTick = false;
    let events = 0;
    let expected = after + 1n;
    let lastProgress = 0;

    const nextTick = (): number => {
      const first = Math.max(lastTick + tickMs, grid(now));
      if (sinceTick || ingestor.health().heldEvents > 0) return first;
      let due = Infinity;
      for (const s of ingestor.status()) if (s.pendingEvents > 0) due = Math.min(due, now - s.ageMs + s.budgetMs / 2);
      return due === Infinity ? Infinity : Math.max(first, grid(due));
    };

    for (;;) {
      const ev = await peek();
      const tAgent = nextAgent <= m.untilMs ? nextAgent : Infinity;
      const tDecision = decisions[di]?.atMs ?? Infinity;
      // An event is fed at the tick instant it arrived before, as the live site's tick finds it
      // journaled; the last ones, received after the period's last tick instant, at the period's
      // end (--until is any millisecond; --until now almost never falls on the grid). One after
      // the period (none in an export's fixture) ends it, as before: capped, it would be the
      // period's end again at every turn and never fed.
      const tEvent = ev === undefined || ev.t > m.untilMs ? Infinity : Math.min(grid(ev.t), m.untilMs);
      let T = Math.min(tEvent, tAgent, tDecision, nextTick());
      if (T === Infinity || T > m.untilMs) break;
      T = Math.max(T, now);
      // Events received at or before T, in journal order.
      let batch: Promise<bigint>[] = [];
      for (let e = await peek(); e && e.t <= T; e = await peek()) {
        if (e.p !== expected) {
          // The journal assigns contiguous positions; a live journal read with readAfter has no holes.
          throw new Error(`fixture events: position ${e.p} where ${expected} was expected (the replay needs the journal's contiguous positions)`);
        }
        now = Math.max(now, e.t);
        batch.push(ingestor.accept(e.topic, e.payload, e.t));
        expected++;
        ci++;
        events++;
      }
      if (batch.length > 0) {
        journal.flush();
        const positions = await Promise.all(batch);
        if (positions[positions.length - 1] !== expected - 1n) throw new Error(`assertion failed: journal position ${positions[positions.length - 1]} for the event recorded at ${expected - 1n}`);
        sinceTick = true;
      }
      now = T;
      if (T % tickMs === 0 && T > lastTick) {
        const before = committedSnapshots(ingestor);
        ingestor.tick(T);
        // As the live agent's timer between runs (every second): what the tick committed
        // withdraws the proposals it overtook (Agent.recheckChanged). Asked only after a commit:
        // the check's own look at each table's latest snapshot costs more than the rest of an
        // idle tick.
        if (committedSnapshots(ingestor) !== before) agent.recheckChanged();
        lastTick = T;
        sinceTick = false;
      }
      while (di < decisions.length && decisions[di]!.atMs <= T) {
        const d = decisions[di++]!;
        const target = inbox.openProposals().find((p) => p.situationKey === d.situationKey);
        const base = { atMs: d.atMs, situationKey: d.situationKey, verb: d.verb, liveOutcome: d.outcome, liveProposalId: d.proposalId };
        if (!target) {
          outcomes.push({ ...base, replayOutcome: 'unmatched', replayProposalId: null });
          continue;
        }
        role = d.role;
        const r = await inbox.decide(target.id, d.verb, { user: d.by, pin: '-', ...(d.comment ? { comment: d.comment } : {}) });
        outcomes.push({ ...base, replayOutcome: r.outcome, replayProposalId: target.id });
      }
      if (tAgent <= T) {
        record(agent.run());
        nextAgent += interval;
        if (runs.length % INBOX_COMMIT_RUNS === 0) inbox.commit();
      }
      if (o.onProgress && (events - lastProgress >= 20_000 || !ev)) {
        lastProgress = events;
        o.onProgress({ events, totalEvents: m.events.count, simMs: now, agentRuns: runs.length });
      }
    }
    o.onProgress?.({ events, totalEvents: m.events.count, simMs: now, agentRuns: runs.length });
    // Every event the manifest lists was fed, up to its last position. fixture.json is the one file
    // without a checksum: a damaged `untilMs` ending the period before its last events, or a count
    // the events file does not hold, would else be a run over part of the period, written as whole.
    const unread = await peek();
    const lastFed = events > 0 ? String(expected - 1n) : null;
    if (unread !== undefined || events !== m.events.count || lastFed !== m.events.lastPosition) {
      await gen.return(undefined); // closes the events file
      const what =
        unread !== undefined
          ? `${m.events.file} holds events after its untilMs ${m.untilMs} (the first at position ${unread.p}, received at ${unread.t})`
          : `${m.events.file} holds ${events} events up to position ${lastFed ?? 'none'}, not the ${m.events.count} up to ${m.events.lastPosition ?? 'none'} it lists`;
      throw new Error(`${fixtureLabel(o.fixture, fx.dir)} is damaged: ${what}`);
    }

    inbox.commit();
    const proposals = readProposals(inbox.table, { limit: Number.MAX_SAFE_INTEGER })
      .filter((p) => p.createdAtMs > m.cutMs)
      .map((p) => replayProposal(p, m.untilMs))
      .sort(byCreation);
    // A Map: a rule id may be a name every object has (`constructor`), which `byRule[id] ?? 0` read as Object.
    const counts = new Map<string, number>();
    for (const p of proposals) counts.set(p.ruleId, (counts.get(p.ruleId) ?? 0) + 1);
    const byRule: Record<string, number> = Object.fromEntries(counts);
    const manifest: RunManifest = {
      format: RUN_FORMAT,
      fixture: { id: fixtureId(fx.dir), name: m.name, tag: m.tag, site: m.site, cutMs: m.cutMs, untilMs: m.untilMs },
      agent: runAgent(spec, agent.config, liveFiles.length > 0),
      clock: { tickMs, agentIntervalMs: interval, firstAgentRunMs },
      counts: {
        events,
        agentRuns: runs.length,
        proposals: proposals.length,
        proposalsByRule: byRule,
        decisionsApplied: outcomes.filter((x) => x.replayOutcome !== 'unmatched').length,
        decisionsUnmatched: outcomes.filter((x) => x.replayOutcome === 'unmatched').length,
        deadLettersOpen: ingestor.deadLetterCount(),
        ingestWarnings: warnings,
      },
      ingestFailure: ingestor.failure()?.message ?? null,
    };
    const output: Record<(typeof RUN_FILES)[number], unknown> = {
      'run.json': manifest,
      'proposals.json': proposals,
      'agent-runs.json': runs,
      'decisions.json': outcomes,
      'human-decisions.json': decisions,
    };
    writeRunOutput(o.out, output);
    const wallMs = performance.now() - wall0;
    return { manifest, proposals, wallMs, eventsPerSecond: events / Math.max(wallMs / 1000, 1e-9) };
  } finally {
    for (const c of closers) {
      try {
        c();
      } catch {
        // closing a scratch warehouse: nothing to keep
      }
    }
    if (!o.keepScratch) scratchFolder.remove();
    fx.close();
    if (m.timeZone !== undefined) {
      if (zoneWas === undefined) delete process.env.TZ;
      else process.env.TZ = zoneWas;
    }
  }
}

/** The fixture's manifest as errors name it (as openFixture does): inside an archive, or the file. */
function fixtureLabel(fixture: string, dir: string): string {
  return dir === fixture ? join(dir, 'fixture.json') : `${fixture}: fixture.json`;
}

/** The ingest tables' committed snapshot ids, as one text (changes when any table commits). */
export function committedSnapshots(ingestor: Ingestor): string {
  return ingestor
    .status()
    .map((t) => t.snapshotId)
    .join(',');
}

/**
 * A repeatable random source in [0, 1) seeded from a fixture's id (hex SHA-256): mulberry32 over
 * its first 32 bits. Not for secrets; it only places partition expiration's first check.
 */
export function fixtureRandom(id: string): () => number {
  let a = Number.parseInt(id.slice(0, 8), 16) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
