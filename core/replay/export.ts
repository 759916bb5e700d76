// `tilstand replay export`: a consistent cut of a site's tables, tagged `replay-<name>` on every
// table, and a portable fixture holding the state at the tag, the journaled events after it up
// to --until, the contracts and bindings in force, the human decisions of that period and what
// the live agent proposed in it (fixture.ts describes the layout).
//
// The cut: the snapshots current at one instant (`atMs`, default now) are resolved for every
// table first, then tagged back to back; each table's tag records its own journal position in
// its snapshot properties, so the replay recovers every table from exactly what it held (the
// Ingestor's own recovery, core/ingest/DESIGN.md). Exporting again with a tag that exists on the
// tables reuses the cut.
//
// Reading a running site is safe: tables are read from immutable files, tags are created
// atomically, and the journal is read through its own WAL-mode connection.

import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { Catalog, LsmError, tagTimeLeftMs, type Snapshot, type Table, type TagInfo } from '../lsm/index.ts';
import { jsonErrorWhere } from '../lsm/errors.ts';
import { checkName } from '../lsm/partition-path.ts';
import { snapshotToJson } from '../lsm/snapshot.ts';
import { AGENT_TAG_PREFIX, AgentConfigError, agentConfig, compareRunIds, STATE_TABLES, type AgentConfig, type AgentConfigInput } from '../agents/index.ts';
import { APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE, readDecisionLog, readProposals, type Json } from '../inbox/index.ts';
import { DEAD_LETTERS_TABLE_NAME } from '../ingest/dead-letters.ts';
import { DEFAULT_TABLE_BUDGETS } from '../ingest/freshness.ts';
import { Journal } from '../ingest/journal.ts';
import { POSITION_PROPERTY } from '../ingest/progress.ts';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { tableDefinitionsIn } from '../ingest/site-tables.ts';
import { inModuleScope, outsideImportProblem, ruleFileCode, RuleFileCodeError, type RuleFileCode } from '../agents/rule-files.ts';
import { byCreation, FIXTURE_FORMAT, replayProposal, TAG_PREFIX, type FixtureFile, type FixtureManifest, type FixtureTable, type HumanDecision, type LiveRuleFile } from './fixture.ts';
import { beginExport, removeDeadExports } from './export-record.ts';
import { sha256File, stableJson, writeStableJson } from './json.ts';
import { snapshotFiles } from './table-files.ts';
import { listFiles, writeTar } from './tar.ts';
import { writeProblem } from './writable.ts';

export interface ExportOptions {
  /** The site's data directory. */
  data: string;
  /** `<name>` or `replay-<name>`. */
  tag: string;
  /** End of the period (inclusive, epoch ms), not in the future; default the moment of the export. */
  untilMs?: number;
  /** The instant of the cut; default its newest tagged snapshot's time (the snapshots are the latest ones when the tag is new). */
  atMs?: number;
  /** A folder (must not exist or be empty), or a file ending in `.tar` (must not exist; its folder must). */
  out: string;
  /**
   * How long the site keeps the `replay-` tags of the cut it makes (ms from now); default until
   * someone deletes them. A cut made before keeps the retention it was made with.
   */
  retainMs?: number;
  /**
   * The IANA time zone the site runs in, recorded in the fixture (the replay runs in it); default
   * this process's. The site's command passes the zone of the site's last start (site.db), which
   * a shell in another zone than the site's service would otherwise put in its place.
   */
  timeZone?: string;
  clock?: () => number;
}

/** Tables that ingest writes (their snapshots carry a journal position). */
export const INGEST_TABLES: readonly string[] = [...SEED_TABLES.map((t) => t.name), DEAD_LETTERS_TABLE_NAME];

export const tagName = (tag: string): string => (tag.startsWith(TAG_PREFIX) ? tag : `${TAG_PREFIX}${tag}`);

/**
 * The site's config.json `agent` section (core/site validates it when the site starts), checked
 * again by core/agents; {} for a site without one (the defaults ran).
 */
function liveAgentConfig(raw: unknown, file: string): AgentConfigInput {
  if (raw === undefined) return {};
  // `ruleFiles` names the rules the agent ran, not a threshold (liveRuleFiles copies them).
  const tunables = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? Object.fromEntries(Object.entries(raw).filter(([k]) => k !== 'ruleFiles')) : raw;
  try {
    agentConfig(tunables as AgentConfigInput);
  } catch (e) {
    if (e instanceof AgentConfigError) throw new Error(`${file}: agent${e.key === '(top level)' ? '' : `.${e.key}`}: ${e.problem}`);
    throw e;
  }
  return tunables as AgentConfigInput;
}

/**
 * The site's rule files (config.json `agent.ruleFiles`, relative to the data directory), each
 * copied into the fixture with the local files it imports (core/agents `ruleFileCode`: its module
 * graph, the bytes hashed are the bytes copied) as `config/rules/<i>/<name>`, each import at its
 * path relative to the rule file, and recorded with its path as config.json gives it and the
 * SHA-256 of that code, so `replay run --agent default` runs the rules the live site ran, also
 * where the site's files are not (HQ). Beside them a package.json gives the "type" the site's
 * folder gave (how Node takes a .ts or .js: the fixture's own folder has no package.json to say
 * it); an import whose file Node would take otherwise on the site is refused. A file that imports
 * one outside its folder is refused (the site refuses it at start: it has no place in the fixture);
 * the packages a file imports are recorded, not copied (README.md, "A site's own rule files in a
 * fixture").
 */
async function liveRuleFiles(raw: unknown, data: string, dir: string, file: string): Promise<LiveRuleFile[]> {
  const list = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>).ruleFiles : undefined;
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.some((p) => typeof p !== 'string' || p.length === 0)) throw new Error(`${file}: agent.ruleFiles: expected an array of paths to rule files`);
  const out: LiveRuleFile[] = [];
  for (const [i, path] of (list as string[]).entries()) {
    const refuse = (problem: string) => new Error(`${file}: agent.ruleFiles[${i}]: rule file ${path} ${problem}; the fixture would not run what the site ran`);
    const abs = resolve(data, path);
    let code: RuleFileCode;
    try {
      code = await ruleFileCode(abs);
    } catch (e) {
      if (e instanceof RuleFileCodeError) throw refuse(e.message);
      throw e;
    }
    const outside = outsideImportProblem(code.imports);
    if (outside !== undefined) throw refuse(outside);
    const esm = inModuleScope(abs);
    // Where the type decides (.ts, .js), each import must have been taken as the rule file's folder
    // takes it, as the one package.json in the fixture says.
    const other = code.imports.find((m) => /\.(ts|js|tsx|jsx)$/.test(m.path) && inModuleScope(m.abs) !== esm);
    if (other !== undefined) throw refuse(`imports ${other.path}, which a package.json between them makes ${esm ? 'CommonJS' : 'an ES module'} where the rule file's folder is ${esm ? 'ES modules' : 'CommonJS'}; the fixture holds them under one package.json`);
    const name = basename(abs);
    const unfit = [name, ...code.imports.map((m) => m.path)].find((p) => !p.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && !/[\\:\0]/.test(part)));
    if (unfit !== undefined) throw refuse(`has a file name a fixture cannot hold (${JSON.stringify(unfit)}: no backslash or colon)`);
    const folder = `config/rules/${i}`;
    const put = (rel: string, bytes: Buffer | string) => {
      const to = join(dir, ...folder.split('/'), ...rel.split('/'));
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, bytes);
    };
    put('package.json', `${JSON.stringify({ type: esm ? 'module' : 'commonjs' })}\n`);
    put(name, code.bytes);
    for (const m of code.imports) put(m.path, m.bytes);
    out.push({
      path,
      sha256: code.sha256,
      file: `${folder}/${name}`,
      ...(code.imports.length > 0 ? { imports: code.imports.map((m) => ({ path: m.path, sha256: m.sha256 })) } : {}),
      ...(code.packages.length > 0 ? { packages: code.packages } : {}),
    });
  }
  return out;
}

/** Epoch ms of an agent run id `yyyyMMdd-HHmmss-SSS[-n]`; undefined when it is not one. */
export function runIdMs(runId: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})-(\d{3})(?:-\d+)?$/.exec(runId);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, ms] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms!);
}

export interface Cut {
  tag: string;
  cutMs: number;
  /** Every table of the database; snapshot undefined when it had none at the cut. */
  tables: Map<string, { table: Table; snapshot: Snapshot | undefined }>;
  reused: boolean;
  /** The tag the cut was taken from (`--tag` naming a tag that was not a fixture's). */
  from?: string;
  /** When the site lets the cut's tags expire (epoch ms); undefined: kept until deleted. */
  expiresMs?: number;
}

/**
 * Tags the snapshots current at `atMs` (default: the latest) on every table of the database with
 * `tag` (resolved for all tables first, then created back to back). When the tag exists on some
 * table already, the existing tags are the cut. The cut's instant is `atMs`, else the newest tagged
 * snapshot's time (`clock` only when no table has a snapshot). Else, when `from` names a tag some
 * table has (`--tag` naming an `hourly-…` or `agent-…` tag rather than a fixture), that tag is the
 * cut: its snapshots where it is, the other tables' at its instant (`Cut.from`); an `hourly-…` or
 * `agent-<run id>` name no table has (expired) is refused. `untilMs` before the cut's instant is
 * refused before anything is tagged.
 */
export function makeCut(catalog: Catalog, database: string, tag: string, o: { atMs?: number; from?: string; clock?: () => number; untilMs?: number; retainMs?: number } = {}): Cut {
  const names = catalog.listTables(database);
  const tables = new Map<string, { table: Table; snapshot: Snapshot | undefined }>();
  const expiry = (t: TagInfo): number | undefined => {
    const now = Date.now();
    const left = tagTimeLeftMs(t, now);
    return left === undefined ? undefined : now + left;
  };
  const opened = names.map((n) => [n, catalog.getTable({ database, table: n })] as const);
  // A period that would end before its cut is refused before anything is tagged.
  const ends = (cutMs: number) => {
    if (o.untilMs !== undefined && o.untilMs < cutMs) throw new Error(`until (${new Date(o.untilMs).toISOString()}) is before the cut (${new Date(cutMs).toISOString()})`);
  };
  // The cut's tags: made with the retention asked for (none: kept until deleted). A tag that
  // cannot be made takes back the ones made before it: half a cut would be reused as the cut.
  const tagAll = (): number | undefined => {
    let expires: number | undefined;
    const made: Table[] = [];
    try {
      for (const { table, snapshot } of tables.values()) {
        if (!snapshot) continue;
        expires = expiry(table.createTag(tag, snapshot.id, o.retainMs));
        made.push(table);
      }
    } catch (e) {
      for (const t of made) {
        try {
          t.deleteTag(tag);
        } catch {
          // the error that stopped the cut says more
        }
      }
      throw e;
    }
    return expires;
  };
  if (opened.some(([, t]) => t.tags.exists(tag))) {
    let newest = 0;
    for (const [n, t] of opened) {
      const snapshot = t.tags.exists(tag) ? t.tags.get(tag).snapshot : undefined;
      if (snapshot) newest = Math.max(newest, snapshot.timeMillis);
      tables.set(n, { table: t, snapshot });
    }
    ends(o.atMs ?? newest);
    // A cut made before keeps the retention it was made with (the export says which).
    let expires: number | undefined;
    for (const [, t] of opened) if (t.tags.exists(tag)) expires = expiry(t.tags.get(tag));
    return { tag, cutMs: o.atMs ?? newest, tables, reused: true, ...(expires !== undefined ? { expiresMs: expires } : {}) };
  }
  const at = (t: Table, atMs: number): Snapshot | undefined => {
    if (!t.latestSnapshot()) return undefined;
    const earliest = t.snapshots.earliestId();
    const first = earliest === undefined ? undefined : t.snapshots.tryGet(earliest);
    // A table whose first snapshot came after the instant had nothing then (it started empty).
    return first && first.timeMillis > atMs && earliest === 1 ? undefined : t.resolve({ timestampMs: atMs });
  };
  const from = o.from;
  const holders = from === undefined ? [] : opened.filter(([, t]) => t.tags.exists(from));
  // The name of one of the site's own tags that no table holds (expired, or deleted) was taken as a
  // fixture's name: a new cut now, named after an hour or run it holds nothing of.
  if (from !== undefined && holders.length === 0) {
    const kept = /^hourly-\d{10}$/.test(from)
      ? 'an hourly tag is made only on a site with an HQ target, once its hour has begun, and kept 7 days (core/sync scheduled tags)'
      : from.startsWith(AGENT_TAG_PREFIX) && runIdMs(from.slice(AGENT_TAG_PREFIX.length)) !== undefined
        ? "an agent run's tag is kept 7 days when the run brought something new to decide, else a day (config.json `evidence`)"
        : undefined;
    if (kept !== undefined) {
      throw new Error(`tag ${from} is not on any table of the site: ${kept}; this one was never made here, has expired or was deleted, so there is no cut at its instant. Cut at a newer one (\`tilstand table tags\` lists a table's), or give the fixture a name of another form to cut now`);
    }
  }
  if (from !== undefined && holders.length > 0) {
    // Another tag as the cut: its snapshots where it is, the others at its instant.
    if (o.atMs !== undefined) throw new Error(`give the cut once: --at, or a tag to cut at (${from})`);
    const cutMs = Math.max(...holders.map(([, t]) => t.tags.get(from).snapshot.timeMillis));
    ends(cutMs);
    for (const [n, t] of opened) {
      let snapshot: Snapshot | undefined;
      if (t.tags.exists(from)) snapshot = t.tags.get(from).snapshot;
      else {
        try {
          snapshot = at(t, cutMs);
        } catch (e) {
          // An agent run's tag is only on the tables it read; the others' snapshots of its instant
          // expire after an hour (snapshot.time-retained).
          if (!(e instanceof LsmError && e.kind === 'NotFound')) throw e;
          throw new Error(`${from} is not a tag of ${n}, and ${n} no longer has a snapshot of its instant (${new Date(cutMs).toISOString()}): ${e.message}. Cut at a tag every table has, such as that hour's hourly-… tag`);
        }
      }
      tables.set(n, { table: t, snapshot });
    }
    const expires = tagAll();
    return { tag, cutMs, tables, reused: false, from, ...(expires !== undefined ? { expiresMs: expires } : {}) };
  }
  // Resolve every table's snapshot first, then tag them back to back.
  for (const [n, t] of opened) tables.set(n, { table: t, snapshot: o.atMs === undefined ? t.latestSnapshot() : at(t, o.atMs) });
  // Without --at the cut's instant is its newest snapshot's time, as when the tag is read again
  // later: an export now and one of the same tag tomorrow cover the same period.
  const newest = Math.max(0, ...[...tables.values()].map(({ snapshot }) => snapshot?.timeMillis ?? 0));
  const cutMs = o.atMs ?? (newest > 0 ? newest : (o.clock ?? Date.now)());
  ends(cutMs);
  const expires = tagAll();
  return { tag, cutMs, tables, reused: false, ...(expires !== undefined ? { expiresMs: expires } : {}) };
}

/**
 * True when the table was made after the instant (its first schema's time): it did not exist at
 * the cut. A table whose first schema cannot be read counts as made before (the safe answer).
 */
function madeAfter(table: Table, atMs: number): boolean {
  try {
    return table.schemaById(0).timeMillis > atMs;
  } catch {
    return false;
  }
}

/** Removes the tags a cut made (an export that failed after making it leaves nothing on the site). */
export function dropCut(cut: Cut): void {
  if (cut.reused) return;
  for (const { table, snapshot } of cut.tables.values()) {
    try {
      if (snapshot && table.tags.exists(cut.tag)) table.deleteTag(cut.tag);
    } catch {
      // the export's own error says more; `tilstand table tag delete` removes what is left
    }
  }
}

/**
 * Why `--tag` cannot name a fixture, or undefined: an empty name, or one that makes no tag name of
 * the table store (`replay-<name>`, and the tag to cut at when it names one).
 */
export function fixtureTagProblem(tagArg: string): string | undefined {
  const tag = tagName(tagArg);
  if (tag === TAG_PREFIX) return `expected a fixture name or a tag to cut at, got '${tagArg}'`;
  for (const t of tag === tagArg ? [tag] : [tag, tagArg]) {
    try {
      checkName('tag', t);
    } catch (e) {
      return (e as Error).message;
    }
  }
  return undefined;
}

/**
 * Why the export could not finish into `out`, found before anything is tagged or read: a folder
 * must be absent or empty, an archive absent and in a folder that exists; and the folder the
 * fixture is written in beside it (and the archive's folder) must be writable — else a file where
 * a parent folder should be, or no permission, was found only after the cut was made. Undefined
 * when it can. The CLI says it as a bad `--out` (exit 2).
 */
export function exportOutProblem(out: string): string | undefined {
  const parent = dirname(out);
  if (out.endsWith('.tar')) {
    if (existsSync(out)) return `${out} exists`;
    if (!existsSync(parent)) return `folder ${parent} does not exist`;
    if (!statSync(parent).isDirectory()) return `${parent} is a file, not a folder`;
    const why = writeProblem(parent);
    return why === undefined ? undefined : `cannot write the archive ${out}: ${why}`;
  }
  if (existsSync(out)) {
    if (!statSync(out).isDirectory()) return `${out} exists and is not a folder`;
    if (readdirSync(out).length > 0) return `${out} exists and is not empty`;
    // Written inside it and moved into it (exportFixture).
    const why = writeProblem(out);
    return why === undefined ? undefined : `cannot write the fixture into ${out}: ${why}`;
  }
  // Written beside --out and renamed onto it: its parent is what has to be writable.
  const why = writeProblem(parent);
  return why === undefined ? undefined : `cannot create the fixture folder ${out}: ${why}`;
}

/**
 * Takes back what exports from `data` that died left (export-record.ts `removeDeadExports`) before
 * --out is judged: one killed while it moved its entries into an empty --out left them there, and
 * the same export retried to that --out was refused as "not empty" until an export to another
 * --out took them back. Nothing when `data` is no data directory, one an export cannot write in,
 * or one whose config.json names no site: the checks after say so.
 */
export function takeBackDeadExports(data: string): void {
  if (!existsSync(join(data, 'config.json')) || exportDataProblem(data) !== undefined) return;
  let site: unknown;
  try {
    site = (JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')) as { site?: unknown }).site;
  } catch {
    return;
  }
  if (typeof site === 'string') removeDeadExports(data, new Catalog(join(data, 'warehouse')), `site_${site}`);
}

/**
 * Why the export cannot work in the data directory `data`, found before anything is made: it
 * writes its record there and tags its cut on the site's tables (a read-only copy of a data
 * directory cannot hold either). Undefined when it can. It failed with the bare EACCES or EROFS of
 * the record's hidden lock file.
 */
export function exportDataProblem(data: string): string | undefined {
  const why = writeProblem(data);
  return why === undefined ? undefined : `cannot export from ${data}: an export records itself there and tags its cut on the site's tables: ${why}`;
}

function copyInto(src: string, dst: string): void {
  mkdirSync(dirname(dst), { recursive: true });
  copyFileSync(src, dst);
}

function copyTree(src: string, dst: string, keep: (name: string) => boolean): void {
  if (!existsSync(src)) return;
  for (const name of readdirSync(src).sort()) {
    const s = join(src, name);
    if (statSync(s).isDirectory()) copyTree(s, join(dst, name), keep);
    else if (keep(name)) copyInto(s, join(dst, name));
  }
}

function newestAgentTag(table: Table, cutMs: number, maxSnapshotId: number): string | null {
  let best: string | null = null;
  for (const t of table.listTags()) {
    if (!t.name.startsWith(AGENT_TAG_PREFIX) || t.snapshot.id > maxSnapshotId) continue;
    const at = runIdMs(t.name.slice(AGENT_TAG_PREFIX.length));
    if (at === undefined || at > cutMs) continue;
    if (best === null || compareRunIds(t.name.slice(AGENT_TAG_PREFIX.length), best.slice(AGENT_TAG_PREFIX.length)) > 0) best = t.name;
  }
  return best;
}

/** Copies what the tag (and the baseline tag) of one table need into `<out>/warehouse/…`. */
function exportTable(table: Table, snapshot: Snapshot, tag: string, baseline: string | null, dst: string): void {
  const files = new Set(snapshotFiles(table, snapshot));
  if (baseline) for (const f of snapshotFiles(table, table.tags.get(baseline).snapshot)) files.add(f);
  for (const rel of [...files].sort()) copyInto(join(table.paths.root, ...rel.split('/')), join(dst, ...rel.split('/')));
  mkdirSync(join(dst, 'snapshot'), { recursive: true });
  writeFileSync(join(dst, 'snapshot', `snapshot-${snapshot.id}`), snapshotToJson(snapshot));
  writeFileSync(join(dst, 'snapshot', 'LATEST'), String(snapshot.id));
  writeFileSync(join(dst, 'snapshot', 'EARLIEST'), String(snapshot.id));
  copyInto(table.paths.tagFile(tag), join(dst, 'tag', `tag-${tag}`));
  if (baseline) copyInto(table.paths.tagFile(baseline), join(dst, 'tag', `tag-${baseline}`));
}

/** A table's schema files only (a table with no snapshot at the cut: it starts empty). */
function exportSchemas(table: Table, dst: string): void {
  for (const f of table.fileIO.list(table.paths.schemaDir)) {
    if (/^schema-\d+$/.test(f)) copyInto(table.paths.schemaFile(Number(f.slice(7))), join(dst, 'schema', f));
  }
}


/** Why a period across a step back of the site's clock is not exported (exportEvents). */
function clockSteppedBack(beyond: { position: bigint; receivedAtMs: number }, later: { position: bigint; receivedAtMs: number }, untilMs: number): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  return (
    `the site's clock stepped back: the journal's event at position ${beyond.position} was received at ${iso(beyond.receivedAtMs)}, after until (${iso(untilMs)}), ` +
    `and a later one, at position ${later.position}, at ${iso(later.receivedAtMs)}, within the period; a fixture holds the journal in order up to until, ` +
    `so it would end before position ${beyond.position} and leave out what came after it. Export with an until before ${iso(later.receivedAtMs)} ` +
    `(the period before the step), or once the clock has passed ${iso(beyond.receivedAtMs)}`
  );
}

/**
 * Writes the journal entries after `after` up to `untilMs` as gzip'd NDJSON. Refused when one
 * received after `untilMs` is followed by one within it (`clockSteppedBack`).
 */
async function exportEvents(data: string, after: bigint, untilMs: number, file: string): Promise<FixtureManifest['events']> {
  const journal = Journal.open(data);
  const out = createWriteStream(file);
  const gz = createGzip({ level: 1 });
  gz.pipe(out);
  let count = 0;
  let last: bigint | null = null;
  let firstAtMs: number | null = null;
  let lastAtMs: number | null = null;
  let buf: string[] = [];
  let chars = 0;
  const flush = async () => {
    if (buf.length === 0) return;
    const ok = gz.write(buf.join(''));
    buf = [];
    chars = 0;
    if (!ok) await once(gz, 'drain');
  };
  // The first event received after --until. The journal is read on past it: one received within
  // the period after it means the site's clock stepped back (a PC that booted with a fast clock,
  // then NTP), and a fixture that ended at the first was the journal up to the step, exported with
  // exit 0 and its count as if nothing came later (export-clock-step.test.ts).
  let beyond: { position: bigint; receivedAtMs: number } | undefined;
  try {
    for (const e of journal.readAfter(after)) {
      if (beyond !== undefined) {
        if (e.receivedAtMs <= untilMs) throw new Error(clockSteppedBack(beyond, e, untilMs));
        continue;
      }
      if (e.receivedAtMs > untilMs) {
        beyond = e;
        continue;
      }
      if (last === null && e.position !== after + 1n) {
        throw new Error(`the journal no longer holds position ${after + 1n} (its first entry after it is ${e.position}): it was pruned; export a later cut`);
      }
      const text = e.payload.toString('utf8');
      const line: Record<string, unknown> = { p: e.position.toString(), t: e.receivedAtMs, topic: e.topic };
      if (Buffer.from(text, 'utf8').equals(e.payload)) line.payload = text;
      else line.payload64 = e.payload.toString('base64');
      const s = `${JSON.stringify(line)}\n`;
      buf.push(s);
      chars += s.length;
      if (chars >= 1 << 20) await flush();
      count++;
      last = e.position;
      firstAtMs ??= e.receivedAtMs;
      lastAtMs = e.receivedAtMs;
    }
    await flush();
  } finally {
    journal.close();
    gz.end();
    await once(out, 'close');
  }
  return { file: 'events.ndjson.gz', count, afterPosition: after.toString(), lastPosition: last === null ? null : last.toString(), firstAtMs, lastAtMs };
}

/** What an export wrote (the fixture's manifest) and what it left on the site. */
export interface ExportResult extends FixtureManifest {
  /** The site's `replay-` tags of the cut: made before (`reused`), and when they expire (null: kept until deleted). */
  siteTag: { reused: boolean; expiresMs: number | null };
}

/** Exports a fixture; returns its manifest. */
export async function exportFixture(o: ExportOptions): Promise<ExportResult> {
  if (o.retainMs !== undefined && !(Number.isSafeInteger(o.retainMs) && o.retainMs > 0)) throw new Error(`retain: expected a positive duration, got ${o.retainMs}`);
  if (o.untilMs !== undefined && !Number.isSafeInteger(o.untilMs)) throw new Error(`until: expected a time, got ${o.untilMs}`);
  const tagProblem = fixtureTagProblem(o.tag);
  if (tagProblem) throw new Error(`tag: ${tagProblem}`);
  const tag = tagName(o.tag);
  const name = tag.slice(TAG_PREFIX.length);
  const archive = o.out.endsWith('.tar');
  takeBackDeadExports(o.data);
  const outProblem = exportOutProblem(o.out);
  if (outProblem !== undefined) throw new Error(outProblem);
  if (!existsSync(join(o.data, 'config.json'))) throw new Error(`${o.data} is not a Tilstand data directory (no config.json)`);
  const dataProblem = exportDataProblem(o.data);
  if (dataProblem !== undefined) throw new Error(dataProblem);
  const configText = readFileSync(join(o.data, 'config.json'), 'utf8');
  let rawConfig: Record<string, unknown>;
  try {
    rawConfig = JSON.parse(configText) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${join(o.data, 'config.json')} is not valid JSON: ${jsonErrorWhere(configText, e)}`);
  }
  const site = rawConfig.site;
  if (typeof site !== 'string') throw new Error(`${join(o.data, 'config.json')} names no site`);
  const database = `site_${site}`;
  const liveConfig = liveAgentConfig(rawConfig.agent, join(o.data, 'config.json'));
  // Events after now have not arrived: a period ending in the future would claim a quiet stretch
  // that never happened.
  const now = (o.clock ?? Date.now)();
  const untilMs = o.untilMs ?? now;
  if (untilMs > now) throw new Error(`until (${new Date(untilMs).toISOString()}) is in the future: the events after now have not arrived (--until now ends the period at the export)`);
  const catalog = new Catalog(join(o.data, 'warehouse'));
  // What exports killed before left (their temporary fixture, the tags of their cut): a half-made
  // cut of this name would be reused below as this export's. Never a live export's.
  removeDeadExports(o.data, catalog, database);
  // Recorded before the cut is tagged, with the tag when this export makes it (no table has it).
  const making = !catalog.databaseExists(database) || !catalog.listTables(database).some((t) => catalog.getTable({ database, table: t }).tags.exists(tag));
  // An empty --out that exists is written into, never replaced (its inode, mode, a link to it, a
  // mount point, `.` stay): the fixture is made in a folder inside it and its entries moved out of
  // that, fixture.json last. A new one is made by renaming the fixture's folder onto it.
  const into = !archive && existsSync(o.out) ? realpathSync(o.out) : undefined;
  const record = beginExport(o.data, o.out, making ? tag : undefined, into);
  // `--tag hourly-…` names the fixture replay-hourly-… and, unless that cut exists, cuts at the hourly tag.
  let cut: Cut;
  try {
    cut = makeCut(catalog, database, tag, { ...(o.atMs !== undefined ? { atMs: o.atMs } : {}), ...(o.tag !== tag ? { from: o.tag } : {}), ...(o.retainMs !== undefined ? { retainMs: o.retainMs } : {}), clock: () => now, untilMs });
  } catch (e) {
    record.end();
    throw e;
  }

  // Written into a folder beside --out (inside an empty one that exists) and moved there at the
  // end: a failed export leaves no half-written fixture (which a retry would refuse as not empty)
  // and no tags it made.
  let parentMade: string | undefined;
  let tmpDir: string | undefined;
  let tarTmp: string | undefined;
  try {
    parentMade = archive || into !== undefined ? undefined : mkdirSync(dirname(o.out), { recursive: true });
    mkdirSync(record.tempDir);
    const dir = (tmpDir = record.tempDir);
    // Tables at the tag.
    const tables: Record<string, FixtureTable> = {};
    // Tilstand's ingest tables and the site's own (config.json `tables` entries with columns).
    const ownTables = tableDefinitionsIn(rawConfig.tables)
      .map((d) => d.name)
      .filter((n) => !INGEST_TABLES.includes(n));
    const ingestTables = [...INGEST_TABLES, ...ownTables];
    let after: bigint | undefined;
    let baselineRunId: string | null = null;
    for (const [n, { table, snapshot }] of [...cut.tables].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const props = snapshot?.properties ?? {};
      const pos = props[POSITION_PROPERTY];
      // An ingest table with no snapshot at the cut starts the events at position 0 (whatever it
      // had pending then is in them), but not a table of the site's own made after the cut (defined
      // in config.json later than an older hourly- tag or --at), nor one not made yet (not in the
      // database): it had nothing pending. Its stream's events before it existed were dead letters
      // (no binding), which the cut's dead_letters holds, and the ones after the cut come after
      // every other table's position anyway. Counted as 0 it made the fixture start at the
      // journal's first position, which a pruned journal no longer holds: the export was refused.
      if (ingestTables.includes(n) && !(snapshot === undefined && ownTables.includes(n) && madeAfter(table, cut.cutMs))) {
        const p = pos === undefined ? 0n : BigInt(pos);
        if (after === undefined || p < after) after = p;
      }
      // The live baseline run's tag, on the state tables and on the site's own tables a rule read
      // (the agent tags those too; a table no rule read has no agent- tag, so nothing is kept).
      const baseline = snapshot && ((STATE_TABLES as readonly string[]).includes(n) || ownTables.includes(n)) ? newestAgentTag(table, cut.cutMs, snapshot.id) : null;
      if (baseline && n === 'work_queue') baselineRunId = baseline.slice(AGENT_TAG_PREFIX.length);
      tables[n] = { snapshotId: snapshot?.id ?? null, journalPosition: pos ?? null, snapshotTimeMs: snapshot?.timeMillis ?? null, baselineAgentTag: baseline };
      if (snapshot) exportTable(table, snapshot, tag, baseline, join(dir, 'warehouse', `${database}.db`, n));
      // A table with no snapshot at the cut still travels as the site had it, its schema files:
      // made anew from the definition, one an earlier version made with an option value a new
      // table may not have (core/ingest site-tables.ts EARLIER_VALUES) was refused by the replay.
      else exportSchemas(table, join(dir, 'warehouse', `${database}.db`, n));
    }
    for (const n of INGEST_TABLES) if (!cut.tables.has(n)) after = 0n;

    // Events after the lowest position, up to until.
    const events = await exportEvents(o.data, after ?? 0n, untilMs, join(dir, 'events.ndjson.gz'));

    // Config in force: config.json, resolved bindings and budgets, contracts.
    mkdirSync(join(dir, 'config'), { recursive: true });
    copyInto(join(o.data, 'config.json'), join(dir, 'config', 'config.json'));
    const bindings = rawConfig.bindings === undefined || rawConfig.bindings === 'seed' ? SEED_BINDINGS : rawConfig.bindings;
    writeStableJson(join(dir, 'config', 'bindings.json'), bindings);
    writeStableJson(join(dir, 'config', 'budgets.json'), Array.isArray(rawConfig.tables) ? rawConfig.tables : DEFAULT_TABLE_BUDGETS);
    copyTree(join(o.data, 'contracts'), join(dir, 'config', 'contracts'), (f) => /^v\d+\.json$/.test(f));
    const ruleFiles = await liveRuleFiles(rawConfig.agent, o.data, dir, join(o.data, 'config.json'));

    // Human decisions and the live agent's proposals in the period.
    const inCut = (ms: number) => ms > cut.cutMs && ms <= untilMs;
    const decisions: HumanDecision[] = [];
    const live = [];
    if (cut.tables.has(APPROVAL_INBOX_TABLE)) {
      const inbox = cut.tables.get(APPROVAL_INBOX_TABLE)!.table;
      const proposals = new Map(readProposals(inbox, { limit: Number.MAX_SAFE_INTEGER }).map((p) => [p.id, p]));
      for (const p of proposals.values()) if (inCut(p.createdAtMs)) live.push(replayProposal(p, untilMs));
      const log = cut.tables.get(DECISION_LOG_TABLE)?.table;
      for (const e of log ? readDecisionLog(log) : []) {
        if (!inCut(e.atMs) || e.proposalId === null) continue;
        const verb = e.event === 'approved' || e.event === 'stale' ? 'approve' : e.event === 'rejected' ? 'reject' : e.event === 'deferred' ? 'defer' : undefined;
        const p = proposals.get(e.proposalId);
        if (!verb || !p) continue;
        const d = (e.detail ?? {}) as Record<string, Json>;
        decisions.push({
          atMs: e.atMs,
          verb,
          outcome: e.event as HumanDecision['outcome'],
          proposalId: p.id,
          situationKey: p.situationKey,
          ruleId: p.ruleId,
          ruleVersion: p.ruleVersion,
          action: p.action,
          params: { ...p.params } as Record<string, Json>,
          by: e.actor,
          role: typeof d.role === 'string' ? d.role : 'shift_lead',
          comment: typeof d.comment === 'string' ? d.comment : null,
        });
      }
    }
    decisions.sort((a, b) => a.atMs - b.atMs || (a.proposalId < b.proposalId ? -1 : 1));
    live.sort(byCreation);
    writeStableJson(join(dir, 'decisions.json'), decisions);
    mkdirSync(join(dir, 'live'), { recursive: true });
    writeStableJson(join(dir, 'live', 'proposals.json'), live);
    const wq = cut.tables.get('work_queue')?.table;
    const runIds = (wq?.listTags() ?? [])
      .map((t) => t.name)
      .filter((n) => n.startsWith(AGENT_TAG_PREFIX))
      .map((n) => n.slice(AGENT_TAG_PREFIX.length))
      .filter((r) => {
        const at = runIdMs(r);
        return at !== undefined && inCut(at);
      })
      .sort(compareRunIds);
    writeStableJson(join(dir, 'live', 'agent-runs.json'), runIds);

    const files: FixtureFile[] = listFiles(dir)
      .filter((p) => p !== 'fixture.json')
      .map((p) => ({ path: p, ...sha256File(join(dir, ...p.split('/'))) }));
    const manifest: FixtureManifest = {
      format: FIXTURE_FORMAT,
      name,
      tag,
      site,
      database,
      cutMs: cut.cutMs,
      ...(cut.from !== undefined ? { cutFrom: cut.from } : {}),
      untilMs,
      // The zone the table store's local times were taken in on the site: the replay runs in it,
      // so a fixture replays alike at HQ.
      timeZone: o.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
      tables,
      events,
      liveAgent: { baselineRunId, runIds: runIds.length, intervalMs: agentConfig(liveConfig).intervalMs, config: liveConfig, ...(ruleFiles.length > 0 ? { ruleFiles } : {}) },
      decisions: decisions.length,
      liveProposals: live.length,
      files,
    };
    writeFileSync(join(dir, 'fixture.json'), `${stableJson(manifest)}\n`);
    if (archive) {
      tarTmp = record.tarTemp;
      writeTar(dir, tarTmp);
      record.delivering(tarTmp, o.out);
      renameSync(tarTmp, o.out);
    } else if (into !== undefined) {
      // fixture.json last: a folder without it is no fixture (openFixture), so one half moved in is
      // never taken for one; the record names what is moved, for the next export to take back.
      const entries = readdirSync(dir).filter((n) => n !== 'fixture.json').sort();
      record.delivering(join(dir, 'fixture.json'), join(into, 'fixture.json'), entries);
      try {
        for (const n of entries) renameSync(join(dir, n), join(into, n));
        renameSync(join(dir, 'fixture.json'), join(into, 'fixture.json'));
      } catch (e) {
        for (const n of [...entries, 'fixture.json']) rmSync(join(into, n), { recursive: true, force: true });
        throw e;
      }
    } else {
      record.delivering(join(dir, 'fixture.json'), join(o.out, 'fixture.json'));
      renameSync(dir, o.out);
    }
    return { ...manifest, siteTag: { reused: cut.reused, expiresMs: cut.expiresMs ?? null } };
  } catch (e) {
    dropCut(cut);
    if (tarTmp) rmSync(tarTmp, { force: true });
    if (parentMade) rmSync(parentMade, { recursive: true, force: true });
    throw e;
  } finally {
    if (tmpDir) rmSync(tmpDir, { recursive: true, force: true }); // gone when moved to --out
    record.end();
  }
}
