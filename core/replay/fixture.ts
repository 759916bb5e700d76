// The replay fixture: what `tilstand replay export` writes and `tilstand replay run` reads.
// Layout (a folder, or the same folder as one ustar archive):
//
//   fixture.json                 the manifest (FixtureManifest): cut, period, tables, files + SHA-256
//   warehouse/site_<id>.db/<t>/  each tagged table: schema, the tag, the tagged snapshot as the
//                                latest snapshot, its manifests and data files (+ the live agent's
//                                newest evidence tag before the cut, the next run's baseline)
//   events.ndjson.gz             journal entries after the lowest tagged journal position, up to
//                                --until, one JSON object per line: {p, t, topic, payload|payload64}
//   config/config.json           the site's config.json as it was at export
//   config/bindings.json         the bindings in force (resolved: "seed" → the seed bindings)
//   config/budgets.json          the freshness budgets in force
//   config/contracts/<name>/vN.json  every registered contract version
//   config/rules/<i>/<name>      the site's rule file <i> (config.json `agent.ruleFiles`), the local
//                                files it imports at their paths beside it, and a package.json
//                                saying how the site took its .ts and .js ("type"); before a rule
//                                file could import, `config/rules/<i>-<name>` (.ts as .mts)
//   decisions.json               human decisions in the period (HumanDecision[])
//   live/proposals.json          proposals the live agent made in the period (ReplayProposal[])
//   live/agent-runs.json         run ids of the live agent in the period (from its evidence tags)
//
// Invariant: every file except fixture.json is listed in the manifest with its size and SHA-256,
// and no other file is there; `openFixture` checks both before anything is read.

import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfigInput } from '../agents/index.ts';
import { ruleFileHash, type RuleFileImport } from '../agents/rule-files.ts';
import type { Decision, Json, Proposal } from '../inbox/index.ts';
import { compareProposalIds } from '../inbox/proposal.ts';
import { jsonErrorWhere } from '../lsm/errors.ts';
import { sha256File } from './json.ts';
import { makeScratchFolder, type ScratchFolder } from './scratch-folder.ts';
import { extractTar, listFiles } from './tar.ts';

export const FIXTURE_FORMAT = 'tilstand-replay-fixture-1';
export const RUN_FORMAT = 'tilstand-replay-run-1';
export const REPORT_FORMAT = 'tilstand-replay-diff-1';
export const TAG_PREFIX = 'replay-';

export interface FixtureTable {
  /** Null when the table had no snapshot at the cut (the replay creates it empty). */
  snapshotId: number | null;
  /** `tilstand.journal.position` of the tagged snapshot (ingest tables), else null. */
  journalPosition: string | null;
  /** Snapshot commit time (epoch ms). */
  snapshotTimeMs: number | null;
  /** The live agent's newest `agent-*` tag at or before the cut (copied too), or null. */
  baselineAgentTag: string | null;
}

export interface FixtureFile {
  path: string;
  bytes: number;
  sha256: string;
}

export interface FixtureManifest {
  format: typeof FIXTURE_FORMAT;
  name: string;
  tag: string;
  site: string;
  database: string;
  /** The cut: the instant whose current snapshots were tagged. */
  cutMs: number;
  /**
   * The tag the cut was taken from, when `--tag` named a tag of the tables that was not a fixture's
   * (an `hourly-…` or `agent-…`): its snapshots where it was, the other tables' at its instant.
   */
  cutFrom?: string;
  untilMs: number;
  /**
   * The IANA time zone the export ran in (the site's machine). The table store keeps local-time
   * semantics (partition expiration compares the local wall clock with a partition's day; a tag's
   * create time is local), so the replay runs in this zone, wherever it runs. Absent in a fixture
   * exported before it was recorded: that replays in the zone of the machine it runs on.
   */
  timeZone?: string;
  tables: Record<string, FixtureTable>;
  events: { file: string; count: number; afterPosition: string; lastPosition: string | null; firstAtMs: number | null; lastAtMs: number | null };
  /**
   * The live agent's run ids in (cut, until], the newest run at or before the cut, and the
   * thresholds it ran with (the site's config.json `agent` section at the export; absent in a
   * fixture exported before sites had one, which ran with the defaults), and the site's rule
   * files (config.json `agent.ruleFiles`; absent when it had none), copied into the fixture.
   */
  liveAgent: { baselineRunId: string | null; runIds: number; intervalMs: number; config?: AgentConfigInput; ruleFiles?: LiveRuleFile[] };
  decisions: number;
  liveProposals: number;
  files: FixtureFile[];
}

/**
 * A rule file the live site ran (config.json `agent.ruleFiles`): its path as config.json gives it,
 * the SHA-256 of its code at the export (core/agents `ruleFileHash`: of its bytes when it imports
 * no local file), and where the fixture holds those bytes (`config/rules/…`, one of its files);
 * `imports`, the local files it imports (path relative to its folder, SHA-256), held beside it at
 * the same relative paths; `packages`, the packages it imports, which the fixture does not hold.
 */
export interface LiveRuleFile {
  path: string;
  sha256: string;
  file: string;
  imports?: RuleFileImport[];
  packages?: string[];
}

/** A person's decision in the period, with the situation it was about. */
export interface HumanDecision {
  atMs: number;
  /** approve (approved or stale: the person said yes), reject, defer. */
  verb: 'approve' | 'reject' | 'defer';
  /** What the live inbox recorded. */
  outcome: Decision['kind'];
  proposalId: string;
  situationKey: string;
  ruleId: string;
  ruleVersion: string;
  action: string;
  params: Record<string, Json>;
  by: string;
  role: string;
  comment: string | null;
}

/** A proposal as replay outputs show it (live and replayed alike); status as of the period's end. */
export interface ReplayProposal {
  id: string;
  runId: string;
  createdAtMs: number;
  ruleId: string;
  ruleVersion: string;
  situationKey: string;
  action: string;
  module: string | null;
  params: Record<string, Json>;
  risk: string;
  riskReason: string;
  explanation: string;
  evidence: { table: string; snapshotId: number | null; tag: string | null; rows: { key: Record<string, Json>; values: Record<string, Json> }[] }[];
  status: 'open' | 'deferred' | 'approved' | 'rejected' | 'stale' | 'withdrawn';
  /** When it stopped being open (decided or withdrawn), or null. */
  closedAtMs: number | null;
  withdrawnReason: string | null;
  decision: { kind: string; by: string; atMs: number } | null;
}

/** A proposal's state at `untilMs` (later decisions and withdrawals are not yet made then). */
export function replayProposal(p: Proposal, untilMs: number): ReplayProposal {
  const decided = p.decision && p.decision.atMs <= untilMs ? p.decision : null;
  const withdrawnAt = p.agentStatus === 'withdrawn' && p.agentUpdatedAtMs <= untilMs ? p.agentUpdatedAtMs : null;
  let status: ReplayProposal['status'] = 'open';
  if (decided && (decided.kind === 'approved' || decided.kind === 'rejected' || decided.kind === 'stale')) status = decided.kind;
  else if (withdrawnAt !== null) status = 'withdrawn';
  else if (decided?.kind === 'deferred') status = 'deferred';
  const closedAtMs = status === 'approved' || status === 'rejected' || status === 'stale' ? decided!.atMs : status === 'withdrawn' ? withdrawnAt : null;
  return {
    id: p.id,
    runId: p.runId,
    createdAtMs: p.createdAtMs,
    ruleId: p.ruleId,
    ruleVersion: p.ruleVersion,
    situationKey: p.situationKey,
    action: p.action,
    module: p.module,
    params: { ...p.params } as Record<string, Json>,
    risk: p.risk,
    riskReason: p.riskReason,
    explanation: p.explanation,
    evidence: p.evidence.map((e) => ({ table: e.table, snapshotId: e.snapshotId, tag: e.tag, rows: e.rows.map((r) => ({ key: { ...r.key }, values: { ...r.values } })) })),
    status,
    closedAtMs,
    withdrawnReason: status === 'withdrawn' ? p.withdrawnReason : null,
    decision: decided ? { kind: decided.kind, by: decided.by, atMs: decided.atMs } : null,
  };
}

/**
 * Proposals in the order they were made: by creation time, then (one run makes all of its
 * proposals at one instant) by id as core/inbox orders them (`compareProposalIds`: run, then n as a
 * number) — as strings `…-10` came before `…-2`.
 */
export const byCreation = (a: Pick<ReplayProposal, 'createdAtMs' | 'id'>, b: Pick<ReplayProposal, 'createdAtMs' | 'id'>): number => a.createdAtMs - b.createdAtMs || compareProposalIds(a.id, b.id);

export interface OpenFixture {
  dir: string;
  manifest: FixtureManifest;
  /** Removes the extracted copy (archives only). */
  close(): void;
}

/** Opens a fixture folder or archive and checks every file's size and SHA-256. */
export function openFixture(path: string, scratchParent = tmpdir()): OpenFixture {
  if (!existsSync(path)) throw new Error(`fixture ${path} does not exist`);
  let dir = path;
  let extracted: string | undefined;
  // An archive is extracted into a folder of its own inside a scratch folder, beside that folder's
  // lock (scratch-folder.ts: removed by a later run if this one dies), which is no file of the fixture.
  let scratch: ScratchFolder | undefined;
  if (!statSync(path).isDirectory()) {
    scratch = makeScratchFolder(scratchParent, 'tilstand-fixture-');
    extracted = join(scratch.dir, 'fixture');
    try {
      mkdirSync(extracted);
      extractTar(path, extracted);
    } catch (e) {
      scratch.remove();
      throw new Error(`fixture ${path}: ${(e as Error).message}`, { cause: e });
    }
    dir = extracted;
  }
  const close = () => scratch?.remove();
  try {
    const mf = join(dir, 'fixture.json');
    if (!existsSync(mf)) throw new Error(`${path} is not a replay fixture (no fixture.json)`);
    const label = extracted ? `${path}: fixture.json` : mf;
    const raw = readJsonFile<Record<string, unknown>>(mf, (v) => (isObject(v) ? undefined : 'expected a JSON object'), label);
    if (raw.format !== FIXTURE_FORMAT) throw new Error(`${path}: fixture format ${JSON.stringify(raw.format)}, expected ${FIXTURE_FORMAT}`);
    const problem = manifestProblem(raw);
    if (problem) throw new Error(`${label} is damaged: ${problem}`);
    const manifest = raw as unknown as FixtureManifest;
    // Listed before any file is hashed: a link would have its target (outside the fixture, maybe a
    // FIFO that never ends) read as the fixture's file.
    let present: string[];
    try {
      present = listFiles(dir);
    } catch (e) {
      throw new Error(`fixture ${path}: ${(e as Error).message}`, { cause: e });
    }
    const listed = new Set(['fixture.json']);
    for (const f of manifest.files) {
      const p = join(dir, ...f.path.split('/'));
      if (!existsSync(p)) throw new Error(`fixture ${path}: ${f.path} is missing`);
      const got = sha256File(p);
      if (got.bytes !== f.bytes || got.sha256 !== f.sha256) throw new Error(`fixture ${path}: ${f.path} does not match its checksum (${got.bytes} bytes, sha256 ${got.sha256.slice(0, 12)}…; expected ${f.bytes}, ${f.sha256.slice(0, 12)}…)`);
      listed.add(f.path);
    }
    // A file the export did not write would be read as if it had (the replay copies the warehouse
    // and the contracts folder whole): it is damage too.
    const unlisted = present.filter((f) => !listed.has(f));
    if (unlisted.length > 0) throw new Error(`fixture ${path}: ${unlisted.slice(0, 5).join(', ')}${unlisted.length > 5 ? ` and ${unlisted.length - 5} more` : ''} ${unlisted.length === 1 ? 'is' : 'are'} not in its manifest`);
    return { dir, manifest, close };
  } catch (e) {
    close();
    throw e;
  }
}

/**
 * A JSON file of a fixture or run, checked by `check` (which returns what is wrong, or undefined):
 * truncation or a wrong shape is reported naming the file, never as a bare JSON or type error.
 */
export function readJsonFile<T>(path: string, check: (v: unknown) => string | undefined, label = path): T {
  const text = readFileSync(path, 'utf8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`${label} is damaged: ${jsonErrorWhere(text, e)}`);
  }
  const problem = check(v);
  if (problem) throw new Error(`${label} is damaged: ${problem}`);
  return v as T;
}

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What is wrong with a fixture manifest of this format (the fields the replay reads), or undefined. */
function manifestProblem(v: Record<string, unknown>): string | undefined {
  for (const k of ['name', 'tag', 'site', 'database'] as const) if (typeof v[k] !== 'string') return `${k}: expected a string`;
  for (const k of ['cutMs', 'untilMs'] as const) if (!Number.isSafeInteger(v[k])) return `${k}: expected a time (epoch ms)`;
  if (v.timeZone !== undefined && !isTimeZone(v.timeZone)) return `timeZone: ${JSON.stringify(v.timeZone)} is not a time zone`;
  if (!isObject(v.tables)) return 'tables: expected an object';
  const ev = v.events;
  if (!isObject(ev) || typeof ev.file !== 'string' || !Number.isSafeInteger(ev.count) || typeof ev.afterPosition !== 'string' || !/^\d+$/.test(ev.afterPosition)) return 'events: expected {file, count, afterPosition, …}';
  if (!isObject(v.liveAgent) || !Number.isSafeInteger(v.liveAgent.intervalMs)) return 'liveAgent: expected {baselineRunId, runIds, intervalMs, …}';
  if (!Array.isArray(v.files)) return 'files: expected the list of files';
  const bad = v.files.findIndex((f) => !isObject(f) || typeof f.path !== 'string' || !Number.isSafeInteger(f.bytes) || typeof f.sha256 !== 'string');
  if (bad >= 0) return `files[${bad}]: expected {path, bytes, sha256}`;
  // Paths inside the fixture only: a hand-made manifest must not make the replay hash or read
  // files elsewhere (an absolute path, `..`, a backslash Windows would take for a separator).
  const outside = (v.files as Array<{ path: string }>).findIndex((f) => !insidePath(f.path));
  if (outside >= 0) return `files[${outside}]: ${JSON.stringify((v.files as Array<{ path: string }>)[outside]!.path)} is not a path inside the fixture`;
  if (!(v.files as Array<{ path: string }>).some((f) => f.path === ev.file)) return `events.file: ${JSON.stringify(ev.file)} is not one of its files`;
  const rf = v.liveAgent.ruleFiles;
  if (rf !== undefined) {
    if (!Array.isArray(rf)) return 'liveAgent.ruleFiles: expected the list of the live rule files';
    const held = new Map((v.files as Array<{ path: string; sha256: string }>).map((f) => [f.path, f.sha256]));
    // The recorded SHA-256 is what the fixture's copies hash to: the file's, or with its imports
    // (each one of the fixture's files beside it, at its path) the hash over them all.
    const holds = (f: Record<string, unknown>): boolean => {
      if (typeof f.path !== 'string' || typeof f.sha256 !== 'string' || typeof f.file !== 'string' || !held.has(f.file)) return false;
      if (f.imports === undefined) return held.get(f.file) === f.sha256;
      const folder = f.file.split('/').slice(0, -1).join('/');
      const imports = f.imports;
      if (!Array.isArray(imports) || imports.length === 0 || !imports.every((i) => isObject(i) && typeof i.path === 'string' && typeof i.sha256 === 'string' && insidePath(i.path) && held.get(folder === '' ? i.path : `${folder}/${i.path}`) === i.sha256)) return false;
      return ruleFileHash(f.file.split('/').at(-1)!, held.get(f.file)!, imports as RuleFileImport[]) === f.sha256;
    };
    const bad = rf.findIndex((f) => !isObject(f) || !holds(f));
    if (bad >= 0) return `liveAgent.ruleFiles[${bad}]: expected {path, sha256, file, imports?}, file and each import one of its files, sha256 what they hash to`;
  }
  return undefined;
}

/** An IANA time zone name this Node knows (an unknown TZ would silently be taken as UTC). */
export function isTimeZone(v: unknown): v is string {
  if (typeof v !== 'string' || v === '') return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: v });
    return true;
  } catch {
    return false;
  }
}

/** A relative '/'-separated path with no empty, '.' or '..' part, backslash, colon or NUL. */
const insidePath = (p: string): boolean => p.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && !/[\\:\0]/.test(part));

/** SHA-256 of the manifest file: names a fixture in run outputs and reports. */
export function fixtureId(dir: string): string {
  return sha256File(join(dir, 'fixture.json')).sha256;
}
