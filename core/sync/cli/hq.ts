// `tilstand hq …`: HQ's commands over what sites shipped (a directory or an S3 prefix, `--hq`).
//   sites | tables --site | tags --site --table | scan --site --table [--tag|--snapshot|--at]
//   [--format jsonl|csv] | diff --site --table --from[-snapshot|-at] [--to[-snapshot|-at]] | proposals --site
//   [--status] | pull --site --out <warehouse> | export --site --table [--tag|--snapshot|--at]
//   --format parquet|csv --out
// S3 credentials: --access-key/--secret-key, else TILSTAND_HQ_ACCESS_KEY / TILSTAND_HQ_SECRET_KEY.
// Each command takes its own flags (HQ_FLAGS) and refuses the others' with exit 2. A --site HQ
// holds nothing of is exit 1 for every command that takes one (knownSite).

import { existsSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { EXIT, parseArgs, pathOption, refuseExtraArguments, subcommand, usageError, type FlagSpecs, type ParsedArgs } from '../../lsm/cli/args.ts';
import { formatTable, LineWriter, type CliIO } from '../../lsm/cli/output.ts';
import { parseSnapshotId, parseTime, readPoint } from '../../lsm/cli/values.ts';
import { LsmError, type ReadPoint, type Table } from '../../lsm/index.ts';
import { checkedTagName, decisionTagName, newestFirst, PROPOSAL_STATUSES, proposalFromRow, rowRecord, type Proposal } from '../../inbox/index.ts';
import { damageOf, listSite, mirrorSite, tablesOf, tagOfKey } from '../hq/mirror.ts';
import { ownWrites, recordPull, recordUnfinished, refuseOwnWrites } from '../hq/pull-record.ts';
import { exportRows, type ExportFormat } from '../hq/export.ts';
import { csvHeader, formatRow } from '../hq/output.ts';
import { directorySites, HqStore } from '../hq/store.ts';
import { SyncError } from '../errors.ts';
import { DirectoryTarget, within } from '../targets/directory.ts';
import type { SyncTarget } from '../targets/target.ts';
import { checkSiteId, sitePrefix } from '../names.ts';
import { readMarker } from '../sender.ts';
import { commandProblem, guarded, progressBar, realFolder, shownWord, siteDataDirOf, targetFromFlags } from './common.ts';

// How HQ is reached: taken by every hq command, so a script can pass one set of them to all
// (`--cache` only matters to the commands that read tables from S3, through the mirror).
const CONNECTION: FlagSpecs = {
  hq: { type: 'string', value: '<dir|s3://bucket/prefix?endpoint=…>' },
  'access-key': { type: 'string', value: '<key>' },
  'secret-key': { type: 'string', value: '<secret>' },
  cache: { type: 'string', value: '<dir>' },
};
const SITE: FlagSpecs = { site: { type: 'string', value: '<id>' } };
const TABLE: FlagSpecs = { table: { type: 'string', value: '<name>' } };
const JSON_FLAG: FlagSpecs = { json: { type: 'boolean' } };
const READ_POINT: FlagSpecs = {
  tag: { type: 'string', value: '<name>' },
  snapshot: { type: 'string', value: '<id>' },
  at: { type: 'string', value: '<ISO time>' },
};
// Each side of `hq diff` as a tag, a snapshot id or a time, as READ_POINT is for scan and export.
const DIFF_SIDES: FlagSpecs = {
  from: { type: 'string', value: '<tag>' },
  'from-snapshot': { type: 'string', value: '<id>' },
  'from-at': { type: 'string', value: '<ISO time>' },
  to: { type: 'string', value: '<tag>' },
  'to-snapshot': { type: 'string', value: '<id>' },
  'to-at': { type: 'string', value: '<ISO time>' },
};
const FORMAT: FlagSpecs = { format: { type: 'string', value: '<fmt>' } };
const OUT: FlagSpecs = { out: { type: 'string', value: '<path>' } };

/**
 * The flags each command takes. Only its own: a flag another command takes (`hq pull --format
 * csv`, `hq scan --out f`) is refused naming it (exit 2) rather than ignored, since the person
 * giving it expected it to do something.
 */
export const HQ_FLAGS = {
  sites: { ...CONNECTION, ...JSON_FLAG },
  tables: { ...CONNECTION, ...SITE, ...JSON_FLAG },
  tags: { ...CONNECTION, ...SITE, ...TABLE, ...JSON_FLAG },
  scan: { ...CONNECTION, ...SITE, ...TABLE, ...READ_POINT, ...FORMAT },
  diff: { ...CONNECTION, ...SITE, ...TABLE, ...DIFF_SIDES, ...FORMAT },
  proposals: { ...CONNECTION, ...SITE, status: { type: 'string', value: '<status>' }, ...FORMAT },
  pull: { ...CONNECTION, ...SITE, ...OUT, force: { type: 'boolean' } },
  export: { ...CONNECTION, ...SITE, ...TABLE, ...READ_POINT, ...FORMAT, ...OUT },
} as const satisfies Record<string, FlagSpecs>;

/** How HQ is reached, for every hq command: printed after the commands' lines and with each command's `--help`. */
const CONNECTION_USAGE = [
  '      every hq command takes --hq <dir|s3://bucket/prefix?endpoint=…&region=…> [--access-key <key> --secret-key <secret>] [--cache <dir>]',
  '      (S3: the keys given, else TILSTAND_HQ_ACCESS_KEY and TILSTAND_HQ_SECRET_KEY from the environment; --cache: where S3 tables are mirrored to be read)',
];

export const hqUsage = [
  '  tilstand hq sites --hq <dir|s3://…> [--json]                 sites that shipped to HQ: their tables, and how current HQ\'s copy is',
  '  tilstand hq tables --hq … --site <id> [--json]               their tables',
  '  tilstand hq tags --hq … --site <id> --table <t> [--json]     synced tags',
  '  tilstand hq scan --hq … --site <id> --table <t> [--tag <name> | --snapshot <id> | --at <ISO time>] [--format jsonl|csv]',
  '  tilstand hq diff --hq … --site <id> --table <t> (--from <tag> | --from-snapshot <id> | --from-at <ISO time>) [--to <tag> | --to-snapshot <id> | --to-at <ISO time>] [--format jsonl|csv]',
  '                                           what changed between two states, each a tag, a snapshot id or a time (the newest state HQ holds at or before it, as hq scan reads a time); no --to side: the latest snapshot HQ holds',
  `  tilstand hq proposals --hq … --site <id> [--status ${PROPOSAL_STATUSES.join('|')}] [--format jsonl|csv|text]`,
  '                                           rows of approval_inbox, newest first, with each one\'s status (text: a line each, for reading)',
  '  tilstand hq pull --hq … --site <id> --out <warehouse> [--force]  copy a site into a local warehouse',
  '                                           (refused over commits and tags of one\'s own in that copy, which it would lose, unless --force)',
  '  tilstand hq export --hq … --site <id> --table <t> [--tag <name> | --snapshot <id> | --at <ISO time>] --format parquet|csv --out <file>',
  ...CONNECTION_USAGE,
];

/** The usage of one hq command: its line, the lines that continue it, and how HQ is reached. */
function commandUsage(sub: string): string[] {
  const out: string[] = [];
  let taking = false;
  for (const l of hqUsage.slice(0, -CONNECTION_USAGE.length)) {
    if (l.startsWith('  tilstand ')) taking = l.startsWith(`  tilstand hq ${sub} `);
    if (taking) out.push(l);
  }
  return [...out, ...CONNECTION_USAGE];
}

type Sub = keyof typeof HQ_FLAGS;
const SUBS = Object.keys(HQ_FLAGS) as Sub[];

function site(args: ParsedArgs): string {
  const s = args.required('site');
  try {
    return checkSiteId(s);
  } catch (e) {
    throw usageError(`option '--site': ${(e as Error).message}`);
  }
}

/**
 * What a disk or a share puts at a folder's root (`lost+found`; Windows' `System Volume
 * Information`, `$RECYCLE.BIN`, an older one's `RECYCLER`, `Thumbs.db`, `desktop.ini`; a NAS's
 * `#recycle`, `#snapshot`, `@eaDir` (Synology), `@Recycle`, `@Recently-Snapshot` (QNAP),
 * `~snapshot` (NetApp over SMB); macOS file sharing's `Network Trash Folder`, `Temporary Items`),
 * and hidden files (`.DS_Store`, a put's leftover temporary file): none makes a folder any less an
 * HQ no site has shipped to yet (hq-fresh-share.test.ts: the QNAP, NetApp, older Windows and macOS
 * ones were taken for a mistyped --hq on a fresh share).
 */
const NOT_FOREIGN =
  /^(\.|lost\+found$|system volume information$|\$recycle\.bin$|recycler$|#recycle$|#snapshot$|@eadir$|@recycle$|@recently-snapshot$|~snapshot$|network trash folder$|temporary items$|thumbs\.db$|desktop\.ini$|site_[A-Za-z0-9][A-Za-z0-9_-]{0,63}\.db$)/i;

/**
 * Throws a usage error (exit 2) when a directory `--hq` with no site's folder holds anything else
 * (a site's data directory, a home folder): a mistyped --hq, which read as an HQ no site had
 * shipped to (exit 0). HQ has no mark of its own: a site makes `site_<id>.db/` at its first sync,
 * so an empty folder (or one with only a disk's own entries) is an HQ nobody shipped to yet.
 */
function refuseNotAnHq(target: SyncTarget): void {
  if (!(target instanceof DirectoryTarget)) return;
  const other = readdirSync(target.root).filter((n) => !NOT_FOREIGN.test(n)).sort();
  if (other.length === 0) return;
  const shown = other.slice(0, 3).map(shownWord).join(', ');
  throw usageError(`option '--hq': ${target.root} is not an HQ warehouse: it holds no site's folder (site_<id>.db) but ${shown}${other.length > 3 ? ` and ${other.length - 3} more` : ''} (check --hq)`);
}

/**
 * Throws NotFound (exit 1) when HQ has no `site_<id>.db/`: a mistyped --site (or a site that never
 * synced) must not read as a site without tables (`hq tables` printed nothing, exit 0) or one
 * without the table asked for. Called once a command found nothing, so the look is not paid on
 * the way to an answer. A directory HQ's sites are its `site_<id>.db` folders, named in the
 * message; an object store would have to list every key for them, so there it points at `hq sites`.
 */
async function knownSite(target: SyncTarget, s: string): Promise<void> {
  if (target instanceof DirectoryTarget) {
    const ids = directorySites(target.root);
    if (ids.includes(s)) return;
    if (ids.length === 0) refuseNotAnHq(target);
    throw new SyncError('NotFound', `HQ has no site ${s} (check --site; ${ids.length > 0 ? `sites at HQ: ${ids.join(', ')}` : `no site has shipped to ${target.root} yet`})`);
  }
  if ((await target.list(sitePrefix(s))).length > 0) return;
  throw new SyncError('NotFound', `HQ has no site ${s} (check --site; \`tilstand hq sites\` lists the sites that shipped)`);
}

/** `store.openTable`, with a --site HQ has nothing of named as such rather than as a missing table. */
async function openSiteTable(store: HqStore, target: SyncTarget, s: string, table: string): Promise<Table> {
  let t: Table;
  try {
    t = await store.openTable(s, table);
  } catch (e) {
    if (e instanceof SyncError && e.kind === 'NotFound') await knownSite(target, s);
    throw e;
  }
  const damaged = store.damagedTags(s, table);
  if (damaged.size > 0) damagedTags.set(t, damaged);
  return t;
}

/**
 * The tags of a table read through an S3 HQ's local copy that the copy left out as damaged at HQ
 * (HqStore `damagedTags`, said on stderr as the copy was made). Left out, they must not read as
 * tags HQ lacks: a command that reads one, or the list of the tags (`hq tags`, and a `--snapshot`
 * or `--at` found among the tags), fails as corruption, exit 4, as on a directory HQ, where the
 * damaged file itself is read; the others read the rest (hq-s3-damaged-tag.test.ts).
 */
const damagedTags = new WeakMap<Table, ReadonlyMap<string, SyncError>>();

/** Throws the damage of tag `name` of `t` when the local copy left it out as damaged. */
function refuseDamagedTag(t: Table, name: string): void {
  const e = damagedTags.get(t)?.get(name);
  if (e !== undefined) throw new SyncError('Verification', e.message, { cause: e });
}

/** `t.listTags()`, failing as corruption when the local copy left a damaged tag out (the list would lack it). */
function tagList(t: Table): ReturnType<Table['listTags']> {
  const first = damagedTags.get(t)?.keys().next();
  if (first !== undefined && first.done !== true) refuseDamagedTag(t, first.value);
  return t.listTags();
}

/** An instant for a person at HQ, in UTC (the sites may be in other zones): `2026-12-03 14:41:35Z`. */
const utcText = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}Z`;

/** A duration for a person: `45 s`, `12 min`, `3.5 h`, `2.0 d`. */
function ago(ms: number): string {
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)} min` : ms < 172_800_000 ? `${(ms / 3_600_000).toFixed(1)} h` : `${(ms / 86_400_000).toFixed(1)} d`;
}

/** The tables the approval of `p` was checked against, where it found a snapshot; none unless approved or stale. */
function checkedTables(p: Proposal): string[] {
  if (p.decision === null || (p.decision.kind !== 'approved' && p.decision.kind !== 'stale')) return [];
  return Object.entries(p.decision.snapshots.checked).flatMap(([table, id]) => (id === null ? [] : [table]));
}

/** The tag names HQ holds of each table `proposals` cite or were checked against: one listing of each table's tags. */
async function tagsAtHq(store: HqStore, s: string, proposals: readonly Proposal[]): Promise<Map<string, Set<string>>> {
  const held = new Map<string, Set<string>>();
  for (const p of proposals) {
    for (const table of [...p.evidence.filter((e) => e.tag !== null).map((e) => e.table), ...checkedTables(p)]) {
      if (!held.has(table)) held.set(table, await store.tagNames(s, table));
    }
  }
  return held;
}

/** The words `hq proposals --format text` names a proposal's own tags by on its line. */
const OWN_DECISION_TAG = 'decision';
const OWN_CHECKED_TAG = 'checked';

/**
 * The tag HQ holds of the snapshots a proposal's agent read, and on which tables, for `hq scan
 * --tag`: `decision` (its tag `decision-<proposal id>`) once someone decided (kept a year on the site, and at HQ), else
 * the run's `agent-<run id>` (gone from HQ once the site expired it, after days). `rows only` when
 * HQ holds neither: the cited rows are still in the proposal's `evidence` column. `–` for a
 * proposal that cites no table.
 */
function evidenceAtHq(held: ReadonlyMap<string, Set<string>>, p: Proposal): string {
  const cited = p.evidence.filter((e) => e.tag !== null);
  if (cited.length === 0) return '–';
  const found = new Map<string, string[]>(); // tag → tables that hold it
  for (const e of cited) {
    const tags = held.get(e.table)!;
    // The proposal's own tags by their kind (the line starts with its id; the footer says the
    // names): `decision-<id>` and `checked-<id>` spelled out made lines of ~320 characters.
    const tag = p.decision !== null && tags.has(decisionTagName(p.id)) ? OWN_DECISION_TAG : tags.has(e.tag!) ? e.tag! : null;
    if (tag !== null) found.set(tag, [...(found.get(tag) ?? []), e.table]);
  }
  return found.size === 0 ? 'rows only' : [...found].map(([tag, tables]) => `${tag} (${tables.join(', ')})`).join('; ');
}

/**
 * Whether HQ holds the state an approved or stale proposal's approval was checked against, its
 * `checked-<proposal id>` tag (core/inbox `keepChecked`): `checked` when HQ has it on every
 * table the approval checked (the agent's re-check reads every state table: naming them all on
 * each line would double the column), the tables that have it when only some do (the others still
 * to be sent). `ids only` when HQ has it on none — a decision made before the site made these
 * tags, or one not sent yet: the snapshot ids are still in the proposal's `decision_snapshots`
 * column. `–` for a proposal no approval checked (open, deferred, rejected, withdrawn).
 */
function checkedAtHq(held: ReadonlyMap<string, Set<string>>, p: Proposal): string {
  const checked = checkedTables(p);
  if (checked.length === 0) return '–';
  const tag = checkedTagName(p.id);
  const holding = checked.filter((t) => held.get(t)!.has(tag));
  return holding.length === 0 ? 'ids only' : holding.length === checked.length ? OWN_CHECKED_TAG : `${OWN_CHECKED_TAG} (${holding.join(', ')})`;
}

/** `text` at most `max` characters, the cut marked with an ellipsis (`--format jsonl` has it whole). */
function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A proposal's action for a line of text: `assign_job job_id=J-0023 resource_id=FORK-1`. */
function actionText(action: string, params: Readonly<Record<string, unknown>>): string {
  const value = (v: unknown) => (typeof v === 'string' && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v));
  return [action, ...Object.entries(params).map(([k, v]) => `${k}=${value(v)}`)].join(' ');
}

function format(args: ParsedArgs, allowed: readonly string[], dflt: string | undefined, command: string): string {
  const f = args.string('format') ?? dflt;
  // Not given where there is no default (`hq export`): said so, not as a value '' it was never given.
  if (f === undefined) throw usageError(`option '--format' ${allowed.join('|')} is required for '${command}'`);
  if (!allowed.includes(f)) throw usageError(`option '--format': expected ${allowed.join(' or ')}, got '${f}'`);
  return f;
}

/** Rows in the columns of `reader.schema` (at a snapshot, tag or time: the snapshot's own). */
async function emitRows(out: LineWriter, reader: Pick<Table, 'schema'>, fmt: 'jsonl' | 'csv', rows: Iterable<unknown[]>): Promise<number> {
  const fields = reader.schema.fields;
  if (fmt === 'csv') await out.line(csvHeader(fields));
  let n = 0;
  for (const r of rows) {
    await out.line(formatRow(fmt, fields, r));
    n++;
  }
  return n;
}

/** The flags of every hq command, for finding the command after them (`hq --hq X sites`). */
const HQ_GROUP_FLAGS: FlagSpecs = Object.assign({}, ...Object.values(HQ_FLAGS));

export async function runHq(argv: readonly string[], io: CliIO): Promise<number> {
  // The first word that is no option nor an option's value: `hq --hq X sites` is `hq sites --hq X`.
  const [sub, rest] = subcommand(argv, HQ_GROUP_FLAGS);
  if (sub === undefined || sub === 'help' || !(SUBS as readonly string[]).includes(sub)) {
    // Asked for: the usage on stdout, exit 0. Missing or unknown: on stderr, exit 2.
    const asked = sub === 'help' || (sub === undefined && rest.some((x) => x === '--help' || x === '-h'));
    const w = new LineWriter(asked ? io.stdout : io.stderr);
    if (!asked) await w.line(commandProblem('hq', argv, sub, HQ_GROUP_FLAGS, SUBS));
    await w.lines(['usage:', ...hqUsage]);
    await w.end().catch(() => undefined);
    return asked ? EXIT.ok : EXIT.usage;
  }
  return guarded(io, async () => {
    const args = parseArgs(rest, HQ_FLAGS[sub as Sub], `hq ${sub}`);
    refuseExtraArguments(args, `hq ${sub}`);
    if (args.help) {
      const w = new LineWriter(io.stdout);
      await w.lines(['usage:', ...commandUsage(sub)]);
      await w.end().catch(() => undefined);
      return EXIT.ok;
    }
    const target = targetFromFlags(args.string('hq'), args.string('access-key'), args.string('secret-key'));
    // These commands only read: a directory that is not there is a mistyped --hq (or one no site
    // has synced to yet), not an empty HQ.
    if (target instanceof DirectoryTarget && !existsSync(target.root)) {
      throw new SyncError('NotFound', `no HQ at ${target.root}: the directory does not exist (check --hq; a site makes it at its first sync)`);
    }
    // A file read as a directory lists nothing: it would pass for an HQ no site has shipped to.
    if (target instanceof DirectoryTarget && !statSync(target.root).isDirectory()) {
      throw usageError(`option '--hq': ${target.root} is a file; expected a directory or s3://bucket/prefix?endpoint=…`);
    }
    const cache = pathOption(args, 'cache', 'a directory');
    // An S3 HQ's tables are read through a local copy, which leaves a damaged tag out (said here).
    const onDamagedTag = (key: string, e: SyncError) => note(io, `tag ${tagOfKey(key)?.tag ?? key} at HQ is damaged and left out of the local copy read here (the rest of the table is read): ${damageOf(e)}`);
    const store = new HqStore(target, { ...(cache ? { cacheDir: resolve(cache) } : {}), onDamagedTag });
    const out = new LineWriter(io.stdout);
    try {
      switch (sub as Sub) {
        case 'sites': {
          const sites = await store.siteStates();
          if (sites.length === 0) refuseNotAnHq(target);
          if (args.boolean('json')) await out.line(JSON.stringify(sites));
          else if (sites.length === 0) {
            // Only a note, as the pull's progress bar (common.ts progressBar): a closed stderr
            // (EPIPE, `… 2>&1 | head -1`) must not end the process, and a write's failure is
            // emitted after the write, so the listener stays.
            io.stderr.on('error', () => undefined);
            io.stderr.write(`tilstand: no site has shipped to ${target.description.replace(/^dir:/, '')} yet\n`);
          } else {
            // "State as of": the newest commit HQ holds from the site — how far behind its picture is.
            // To the millisecond (ISO, one word), as `hq tags` prints its times: copied into `hq scan
            // --at`, it reads that state, where the time cut to the second read the state before a
            // commit made later in that second (or nothing HQ holds).
            const now = Date.now();
            const asOf = (ms: number | null) => (ms === null ? 'no snapshot yet' : new Date(ms).toISOString());
            const behind = (ms: number | null) => (ms === null ? '–' : ago(Math.max(0, now - ms)));
            await out.lines(formatTable(['site', 'tables', 'state as of', 'behind'], sites.map((x) => [x.site, String(x.tables), asOf(x.stateAsOfMs), behind(x.stateAsOfMs)])));
          }
          break;
        }
        case 'tables': {
          const s = site(args);
          const tables = await store.tables(s);
          if (tables.length === 0) await knownSite(target, s);
          if (args.boolean('json')) await out.line(JSON.stringify(tables));
          else await out.lines(tables);
          break;
        }
        case 'tags': {
          const t = await openSiteTable(store, target, site(args), args.required('table'));
          const tags = t.listTags();
          const damaged = damagedTags.get(t);
          if (args.boolean('json')) await out.line(JSON.stringify(tags.map((x) => ({ name: x.name, snapshotId: x.snapshot.id, timeMillis: x.snapshot.timeMillis }))));
          else
            // FILE RECORDS: the snapshot's records across its data files before they are merged by
            // key — more than the rows a scan returns of a primary-key table (80 stock rows showed
            // as 122 "RECORDS"); `hq scan --tag … | wc -l` counts the rows. The time to the
            // millisecond (ISO), not the other listings' seconds: copied into `hq scan --at`, it
            // reads that tag, where the time cut to the second read the state before it.
            await out.lines(
              formatTable(
                ['NAME', 'SNAPSHOT', 'SNAPSHOT TIME', 'FILE RECORDS'],
                tags.map((x) => [x.name, String(x.snapshot.id), new Date(x.snapshot.timeMillis).toISOString(), String(x.snapshot.totalRecordCount ?? '')]),
                new Set([1, 3]),
              ),
            );
          // The list lacks the tags the local copy left out as damaged: listed, then named, exit 4
          // (a directory HQ fails the listing on such a tag).
          if (damaged !== undefined) {
            await out.end();
            const n = damaged.size;
            throw new SyncError('Verification', `${n} tag${n === 1 ? '' : 's'} at HQ ${n === 1 ? 'is' : 'are'} damaged and not listed (the others are): ${[...damaged.values()].map(damageOf).join('; ')}`);
          }
          break;
        }
        case 'scan': {
          // The options first, as export: a usage error says so before HQ is read.
          const fmt = format(args, ['jsonl', 'csv'], 'jsonl', `hq ${sub}`) as 'jsonl' | 'csv';
          const point = readPoint({ snapshot: args.string('snapshot'), tag: args.string('tag'), at: args.string('at') });
          const t = await openSiteTable(store, target, site(args), args.required('table'));
          const r = hqReader(t, point, io);
          try {
            await emitRows(out, r, fmt, r.scan({}));
          } finally {
            r.close();
          }
          break;
        }
        case 'diff': {
          const fmt = format(args, ['jsonl', 'csv'], 'jsonl', `hq ${sub}`) as 'jsonl' | 'csv';
          const fromSide = diffSide(args, 'from')!;
          const toSide = diffSide(args, 'to');
          const t = await openSiteTable(store, target, site(args), args.required('table'));
          const from = diffRef(t, fromSide, io);
          // No --to side: the latest snapshot HQ holds (Table.changes' default).
          const to = toSide === undefined ? undefined : diffRef(t, toSide, io);
          // Both states in today's columns (Table.changes reads the two snapshots in the latest
          // schema, older files mapped by field id): one set of columns for both sides.
          const changes = t.changes({ from, ...(to === undefined ? {} : { to }), mode: 'diff' })[Symbol.iterator]();
          // The first change before the CSV header: a side HQ does not hold fails here, before
          // anything is written.
          let next: IteratorResult<{ kind: string; row: unknown[] }>;
          try {
            next = changes.next();
          } catch (e) {
            // HQ keeps one snapshot per table: an id it has no tag of is gone for good at HQ.
            if (e instanceof LsmError && e.kind === 'NotFound' && / has expired; diff needs both states/.test(e.message)) {
              e.message += '; HQ keeps the latest synced snapshot and the tags (`tilstand hq tags` lists them with their snapshot ids)';
            }
            throw e;
          }
          if (fmt === 'csv') await out.line(csvHeader(t.schema.fields, ['_kind']));
          for (; !next.done; next = changes.next()) {
            await out.line(formatRow(fmt, t.schema.fields, next.value.row, { _kind: next.value.kind }));
          }
          break;
        }
        case 'proposals': {
          // Each row with its proposal's status as the site derives it (the table keeps the
          // agent's, the decision's and the command's columns apart), newest first.
          const status = args.string('status');
          if (status !== undefined && !(PROPOSAL_STATUSES as readonly string[]).includes(status)) {
            throw usageError(`option '--status': expected one of ${PROPOSAL_STATUSES.join(', ')}, got '${status}'`);
          }
          const fmt = format(args, ['jsonl', 'csv', 'text'], 'jsonl', `hq ${sub}`) as 'jsonl' | 'csv' | 'text';
          const t = await openSiteTable(store, target, site(args), 'approval_inbox');
          const fields = t.schema.fields;
          const rows = t.scanRows({}).map((row) => ({ row, p: proposalFromRow(rowRecord(fields, row)) }));
          const picked = rows.filter((r) => status === undefined || r.p.status === status);
          picked.sort((a, b) => newestFirst(a.p, b.p));
          if (fmt === 'text') {
            // For a person at HQ: one line per proposal, with the tag HQ holds of what the agent saw
            // and the one of the state its approval was checked against.
            const held = await tagsAtHq(store, site(args), picked.map((r) => r.p));
            const cells = picked.map(({ p }) => [p.id, p.status, utcText(p.createdAtMs), p.risk, cut(actionText(p.action, p.params), 60), p.decision ? p.decision.by : '–', p.command ? p.command.state : '–', evidenceAtHq(held, p), checkedAtHq(held, p), cut(p.explanation, 80)]);
            const lines = formatTable(['proposal', 'status', 'created', 'risk', 'action', 'decided by', 'command', 'evidence at HQ', 'checked at HQ', 'why'], cells);
            for (const l of picked.length > 0 ? lines : ['no proposals']) await out.line(l);
            // The proposal's own tags are named by their kind on its line; here once by their names.
            if (cells.some((c) => c[7]!.startsWith(OWN_DECISION_TAG) || c[8]!.startsWith(OWN_CHECKED_TAG))) {
              await out.line(`${OWN_DECISION_TAG}, ${OWN_CHECKED_TAG}: the proposal's tags decision-<proposal> and checked-<proposal> (tilstand hq scan --tag)`);
            }
            break;
          }
          if (fmt === 'csv') await out.line(csvHeader(fields, ['status']));
          for (const r of picked) await out.line(formatRow(fmt, fields, r.row, { status: r.p.status }));
          break;
        }
        case 'pull': {
          const s = site(args);
          const dest = resolve(pathOption(args, 'out', 'a path') ?? args.required('out'));
          pullDestination(dest, target);
          await refuseSendersWarehouse(dest, target, s);
          // One listing of the site for the own-writes check and the copy (each table is listed
          // again after its pointers are read, mirror.ts).
          const listed = await listSite(target, s);
          // A site HQ has nothing of (a mistyped --site) would "pull" 0 tables and exit 0.
          if (tablesOf(s, listed).length === 0) {
            await knownSite(target, s);
            throw new SyncError('NotFound', `HQ has no tables of site ${s} (check --site; \`tilstand hq sites\` lists the sites that shipped)`);
          }
          // An analyst's commits and tags in the pulled copy: removed or overwritten without a word.
          // With --force they are replaced: a schema file of theirs can have the size of HQ's,
          // which the copy's resume check would take for HQ's file.
          const own = ownWrites(dest, s, listed);
          if (!args.boolean('force')) refuseOwnWrites(dest, s, own);
          const bar = progressBar(io.stderr);
          // A damaged tag (an old one torn at HQ) is left out and named below, exit 4: the rest of
          // the site is pulled — it failed the whole pull, so the analyst got not even the latest.
          const damaged: SyncError[] = [];
          const r = await mirrorSite(target, s, dest, {
            onDamagedTag: (_key, e) => damaged.push(e),
            listed,
            refetch: new Set(own.map((f) => `${sitePrefix(s)}${f}`)),
            onProgress: (p) => bar(p.doneFiles, p.totalFiles, p.doneBytes, p.table),
            beforeWrite: (table, files) => recordUnfinished(dest, s, table, files),
            onTableCopied: (table, copied) => recordPull(dest, s, table, copied),
          });
          await out.line(`pulled site ${s}: ${r.tables.length} table${r.tables.length === 1 ? '' : 's'}, ${r.files} files (${r.downloadedFiles} downloaded, ${r.downloadedBytes} bytes) into ${dest}`);
          if (damaged.length > 0) {
            await out.end(); // the summary line, then the error on stderr
            const n = damaged.length;
            throw new SyncError(
              'Verification',
              `${n} tag${n === 1 ? '' : 's'} at HQ ${n === 1 ? 'is' : 'are'} damaged and not pulled (the rest of the site is): ${damaged.map(damageOf).join('; ')}`,
            );
          }
          break;
        }
        case 'export': {
          // The options first: a usage error says so before HQ is read.
          const fmt = format(args, ['parquet', 'csv'], undefined, `hq ${sub}`);
          const dest = resolve(pathOption(args, 'out', 'a path') ?? args.required('out'));
          exportDestination(dest);
          const point = readPoint({ snapshot: args.string('snapshot'), tag: args.string('tag'), at: args.string('at') });
          const t = await openSiteTable(store, target, site(args), args.required('table'));
          // In the columns of the snapshot read (time travel reads in the snapshot's schema).
          const r = hqReader(t, point, io);
          const fields = r.schema.fields;
          // Streamed (CSV in bounded chunks, Parquet a row group at a time) through a temporary file
          // beside the target, renamed into place only when complete: a failure midway (the scan
          // throws, the disk fills) leaves no file that looks finished.
          let rows: number;
          try {
            rows = exportRows(dest, fmt as ExportFormat, fields, r.scan());
          } finally {
            r.close();
          }
          await out.line(`exported ${rows} row${rows === 1 ? '' : 's'} of ${t.name} to ${dest}`);
          break;
        }
      }
      await out.end();
      return EXIT.ok;
    } finally {
      await target.close();
    }
  });
}

/**
 * Refuses an export's `--out` that can never be written — a directory, or a file in a directory
 * that does not exist — before HQ is read, as the usage error it is (else exit 5, naming the
 * temporary file the export writes first).
 */
function exportDestination(dest: string): void {
  let isDir: boolean | undefined;
  try {
    isDir = statSync(dest).isDirectory();
  } catch {
    // not there: the usual case
  }
  if (isDir) throw usageError(`option '--out': ${dest} is a directory; expected a file path`);
  const parent = dirname(dest);
  let parentIsDir = false;
  try {
    parentIsDir = statSync(parent).isDirectory();
  } catch {
    // missing
  }
  if (!parentIsDir) throw usageError(`option '--out': ${parent} is not a directory (the file's directory must exist)`);
}

/**
 * Refuses a pull's `--out` that is a file (it must be a warehouse directory, made when missing),
 * or that is HQ's own directory or lies inside it: the pull would write HQ's files onto
 * themselves, or add a warehouse of copies to what HQ holds.
 */
function pullDestination(dest: string, target: SyncTarget): void {
  let isDir: boolean | undefined;
  try {
    isDir = statSync(dest).isDirectory();
  } catch {
    // not there yet: made by the pull
  }
  if (isDir === false) throw usageError(`option '--out': ${dest} is a file; expected the directory of a warehouse to pull into`);
  // A site's own warehouse (or its data directory, through a link too): the pull makes the copy
  // HQ's, so it removed the live site's newer snapshot JSON and wrote HQ's older pointers over its
  // own, exit 0 (cli/hq-pull-into-site.test.ts).
  const site = siteDataDirOf(dest);
  if (site !== undefined) {
    const what = site.where === 'itself' ? `the site data directory ${site.data} itself` : site.where === 'warehouse' ? `the warehouse of the site data directory ${site.data}, which holds the site's live tables` : `inside the site data directory ${site.data}`;
    throw usageError(`option '--out': ${dest} is ${what}; a pull would write HQ's copy over the site's own files; pull into a warehouse outside it`);
  }
  if (target instanceof DirectoryTarget) {
    // As written and where both lead: `--out` a symbolic link to HQ's directory (or HQ given through one) passed.
    for (const [root, out] of [[target.root, dest], [realFolder(target.root), realFolder(dest)]] as const) {
      if (within(out, root)) {
        throw usageError(`option '--out': ${dest} is ${relative(root, out) === '' ? 'the HQ directory itself' : `inside the HQ directory ${target.root}`}; pull into a warehouse outside it`);
      }
    }
  }
}

/**
 * Refuses `--out` the real folder of the warehouse of the data directory that sends for `site`
 * from this PC (HQ's sender marker names it, as its real path), or a folder inside it: a warehouse
 * moved onto a disk of its own and linked back (`<data>/warehouse` a symbolic link) lies in no data
 * directory, so `pullDestination`, walking up from the folder, let a pull write HQ's older copy over
 * the live tables (cli/hq-pull-into-moved-warehouse.test.ts). Compared where both lead. A marker
 * that cannot be read, of another PC, or naming a folder that is no data directory now, says
 * nothing here (the pull reports HQ's own failures).
 */
async function refuseSendersWarehouse(dest: string, target: SyncTarget, site: string): Promise<void> {
  let marker: Awaited<ReturnType<typeof readMarker>>;
  try {
    marker = await readMarker(target, site);
  } catch {
    return;
  }
  if (marker === undefined || marker.host !== hostname() || siteDataDirOf(marker.dataDir)?.where !== 'itself') return;
  const warehouse = realFolder(join(marker.dataDir, 'warehouse'));
  const out = realFolder(dest);
  if (!within(out, warehouse)) return;
  const what = out === warehouse ? 'the warehouse' : 'inside the warehouse';
  throw usageError(
    `option '--out': ${dest} is ${what} of the site data directory ${marker.dataDir} (its warehouse leads to ${warehouse}), which holds the site's live tables; a pull would write HQ's copy over the site's own files; pull into a warehouse outside it`,
  );
}

/**
 * A reader of `point` in HQ's copy of a table. HQ holds a table's latest synced snapshot and its
 * tags, not the site's snapshot history, so the table store alone finds no snapshot before the
 * latest: `--at` a time before it, or `--snapshot` of a tagged one, failed although HQ holds a tag
 * of that state. Here a `--snapshot` HQ has only as a tag reads that tag (the same snapshot), and
 * `--at` reads the newest state HQ holds at or before the time — the latest snapshot or a tag —
 * and says on stderr which one and when it was committed: the site may have committed after it
 * and before the time asked, states HQ never got.
 */
function hqReader(t: Table, point: ReadPoint, io: CliIO): ReturnType<Table['reader']> {
  if (point.tag !== undefined) refuseDamagedTag(t, point.tag);
  if (point.snapshotId !== undefined && point.snapshotId !== t.latestSnapshot()?.id) {
    const tag = tagOf(t, point.snapshotId);
    if (tag !== undefined) return t.reader({ tag });
  }
  if (point.timestampMs !== undefined) {
    const at = point.timestampMs;
    const read = heldAt(t, at);
    if (read !== undefined) {
      atNote(io, 'at', at, read);
      return t.reader(read.tag !== undefined ? { tag: read.tag } : point);
    }
  }
  try {
    return t.reader(point);
  } catch (e) {
    if (point.timestampMs !== undefined && e instanceof LsmError && e.kind === 'NotFound') e.message += NONE_THAT_OLD;
    throw e;
  }
}

/** Said after "no snapshot … at or before <time>" at HQ, where older states are only in the tags. */
const NONE_THAT_OLD = '; HQ keeps the latest synced snapshot and the tags, and none of them is that old (`tilstand hq tags` lists the tags with their times)';

/** The first listed tag HQ holds of snapshot `id`, if any. */
function tagOf(t: Table, id: number): string | undefined {
  return tagList(t).find((x) => x.snapshot.id === id)?.name;
}

/** A state HQ holds of a table: its latest synced snapshot (no tag) or a tag. */
interface HeldState {
  tag: string | undefined;
  what: string;
  id: number;
  ms: number;
}

/**
 * The newest state HQ holds at or before `at`: the latest synced snapshot when it was committed by
 * then, else the newest tag (of tags on one snapshot, the first listed); undefined when none is
 * that old.
 */
function heldAt(t: Table, at: number): HeldState | undefined {
  const latest = t.latestSnapshot();
  if (latest !== undefined && latest.timeMillis <= at) return { tag: undefined, what: 'the latest synced snapshot', id: latest.id, ms: latest.timeMillis };
  let read: HeldState | undefined;
  for (const x of tagList(t)) {
    if (x.snapshot.timeMillis > at) continue;
    if (read === undefined || x.snapshot.timeMillis > read.ms || (x.snapshot.timeMillis === read.ms && x.snapshot.id > read.id)) {
      read = { tag: x.name, what: `tag ${x.name}`, id: x.snapshot.id, ms: x.snapshot.timeMillis };
    }
  }
  return read;
}

/** Which state a `--<flag> <time>` read, on stderr: the site may have committed states after it and before the time, which HQ never got. */
function atNote(io: CliIO, flag: string, at: number, read: HeldState): void {
  // Times to the millisecond, as `hq tags` and `hq sites` print them: the committed time pasted
  // into --at reads this state again (cut to the second it read the one before).
  note(io, `--${flag} ${new Date(at).toISOString()}: reading ${read.what} (snapshot ${read.id}, committed ${new Date(read.ms).toISOString()}), the newest state HQ holds at or before that time`);
}

/** One side of `hq diff`, as given: `--from <tag>`, `--from-snapshot <id>` or `--from-at <time>` (`--to…` likewise). */
type DiffSide = { flag: string; tag: string } | { flag: string; snapshotId: number } | { flag: string; atMs: number };

/**
 * The side `side` of `hq diff` from its options, checked before HQ is read: exactly one form for
 * `from`, at most one for `to` (undefined when none: the latest snapshot).
 */
function diffSide(args: ParsedArgs, side: 'from' | 'to'): DiffSide | undefined {
  const forms = [side, `${side}-snapshot`, `${side}-at`];
  const given = forms.filter((f) => args.string(f) !== undefined);
  if (given.length > 1) throw usageError(`give ${side === 'from' ? 'one' : 'at most one'} of ${forms.map((f) => `--${f}`).join(', ')} for 'hq diff' (got ${given.map((g) => `--${g}`).join(' and ')})`);
  if (given.length === 0) {
    if (side === 'to') return undefined;
    throw usageError(`option '--from' <tag>, '--from-snapshot' <id> or '--from-at' <ISO time> is required for 'hq diff'`);
  }
  const flag = given[0]!;
  const text = args.string(flag)!;
  // A tag goes to Table.changes as it is given, as before the other forms existed.
  if (flag === side) return { flag, tag: text };
  if (flag.endsWith('-snapshot')) return { flag, snapshotId: parseSnapshotId(text, flag) };
  return { flag, atMs: parseTime(text, flag) };
}

/**
 * What Table.changes is given for a side: a tag name or a snapshot id of HQ's copy. HQ holds a
 * table's latest synced snapshot and its tags: a snapshot id HQ has as a tag is read from the tag,
 * and a time as `hq scan --at` reads it (the newest state held at or before it, named on stderr).
 * An id below the latest that no tag holds goes on as an id, for Table.changes to say it expired.
 */
function diffRef(t: Table, side: DiffSide, io: CliIO): string | number {
  if ('tag' in side) refuseDamagedTag(t, side.tag);
  // A number given as a tag that no tag is named (Table.changes takes it as a snapshot id, as the
  // site's `table` commands do): read as --from-snapshot reads it, so a tagged snapshot at HQ is
  // read from its tag and not called expired.
  if ('tag' in side && /^\d+$/.test(side.tag) && !t.tags.exists(side.tag)) return diffRef(t, { flag: `${side.flag}-snapshot`, snapshotId: Number(side.tag) }, io);
  if ('tag' in side) return side.tag;
  const latest = t.latestSnapshot();
  if ('snapshotId' in side) {
    const id = side.snapshotId;
    if (id === latest?.id) return id;
    const tag = tagOf(t, id);
    if (tag !== undefined) return tag;
    if (latest === undefined || id > latest.id) {
      throw new SyncError('NotFound', `snapshot ${id} of ${t.name} does not exist (${latest === undefined ? 'HQ holds no snapshot of it' : `the latest HQ holds is ${latest.id}`})`);
    }
    return id;
  }
  const read = heldAt(t, side.atMs);
  if (read === undefined) throw new SyncError('NotFound', `no snapshot of ${t.name} at or before ${new Date(side.atMs).toISOString()} (--${side.flag})${NONE_THAT_OLD}`);
  atNote(io, side.flag, side.atMs, read);
  return read.tag ?? read.id;
}

/** A note on stderr that must not end the process when stderr is a closed pipe (as `hq sites`'s). */
function note(io: CliIO, text: string): void {
  io.stderr.on('error', () => undefined);
  io.stderr.write(`tilstand: ${text}\n`);
}
