// `tilstand sync status|now [--data <dir>] [--hq …] [--json]` and `tilstand restore`; each takes only
// its own flags (SYNC_FLAGS) and refuses the others' with exit 2.
//   sync status  the outbox as it stands (works while the site runs: its own read-only connection)
//   sync now     plans and runs until nothing is due (bounded), with the site's configured target
//                (else the directory target the outbox last sent to, given with `start --hq`);
//                refused (Conflict) while another engine holds the directory's sync.lock — on a
//                running site the dispatcher (core/site/cli/site-commands.ts) asks the site instead
//                `--take-over`: writes HQ's sender marker with this directory's id first (sender.ts);
//                refused while the marker is gone and HQ's folder has fallen back onto this PC's own
//                disk (a share not mounted) unless `--hq-on-this-disk` says it moved there
//   restore      rebuilds <data>/warehouse and contracts/ from HQ and writes restore-note.json
//                (and restored-tables.json: the drafted config.json entries of the site's own
//                tables); HQ's sender marker then names the restored directory

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CliError, EXIT, parseArgs, pathOption, refuseExtraArguments, subcommand, usageError, type FlagSpecs, type ParsedArgs } from '../../lsm/cli/args.ts';
import { formatDuration, LineWriter, type CliIO } from '../../lsm/cli/output.ts';
import { APPROVAL_INBOX_TABLE, DECISION_LOG_TABLE } from '../../inbox/index.ts';
import { DEFAULT_HEALTH_WINDOW_MS, EMPTY_SYNC_STATUS, SyncEngine, statusOf, syncProblemText, type SyncNowResult, type SyncStatus } from '../engine.ts';
import { isSyncError, SyncError } from '../errors.ts';
import { existingOutbox, openOutboxDb } from '../outbox.ts';
import type { SyncTarget } from '../targets/target.ts';
import type { ProgramDataFormat } from '../hq-data-format.ts';
import { RESTORED_TABLES, restoreSite } from '../restore.ts';
import { takeOverFor, type SenderMarker } from '../sender.ts';
import { checkSiteId } from '../names.ts';
import { DirectoryTarget, within } from '../targets/directory.ts';
import { commandProblem, damageIn, guarded, hqInData, progressBar, readSiteConfig, realFolder, targetFromFlags } from './common.ts';

/**
 * The description of the target this directory's outbox last sent to (sync_state `target`), if
 * any: a target given only with `tilstand start --hq` is not in config.json. A directory's
 * description is `dir:<absolute path>`; an S3 target's names its bucket and endpoint only.
 */
function lastTarget(data: string): string | undefined {
  const path = join(data, 'site.db');
  if (!existsSync(path)) return undefined;
  const db = openOutboxDb(path, true);
  try {
    return existingOutbox(db)?.getState('target');
  } finally {
    db.close();
  }
}

/**
 * The HQ `sync now` sends to: `--hq`, else config.json's `hq.target`, else the directory target
 * the outbox last sent to (given with `start --hq`; `fromOutbox`). An S3 target the outbox names
 * must be given again (its options are not kept). None anywhere: refused, naming `--hq` and
 * config.json's `hq.target`.
 */
function hqOf(data: string, args: ParsedArgs, cfg: { hqTarget: string | null }): { hq: string; fromOutbox: boolean } {
  const hq = args.string('hq') ?? cfg.hqTarget ?? undefined;
  if (hq !== undefined) return { hq, fromOutbox: false };
  const last = lastTarget(data);
  if (last?.startsWith('dir:')) return { hq: last.slice('dir:'.length), fromOutbox: true };
  if (last !== undefined) {
    throw new CliError(EXIT.usage, `option '--hq' is required: config.json names no HQ target, and the site last synced to ${last}, given with --hq at its start; give it again (s3://bucket/prefix?endpoint=…: the outbox keeps no S3 options)`);
  }
  // `sync now`'s own words: targetFromFlags's "--hq is required" read as if a flag were all it lacked.
  throw new CliError(EXIT.usage, `option '--hq' is required: config.json names no HQ target (hq.target) and the site has not synced from this directory; give --hq <dir|s3://bucket/prefix?endpoint=…>, or set hq.target in ${join(data, 'config.json')}`);
}

// Where HQ is and how it is reached (the credentials only matter to an S3 target).
const HQ: FlagSpecs = {
  hq: { type: 'string', value: '<dir|s3://…>' },
  'access-key': { type: 'string', value: '<key>' },
  'secret-key': { type: 'string', value: '<secret>' },
};
const DATA: FlagSpecs = { data: { type: 'string', value: '<dir>' } };
const JSON_FLAG: FlagSpecs = { json: { type: 'boolean' } };

/**
 * The flags each command takes. Only its own: one another command takes (`sync status
 * --max-rounds 3`, `sync now --force`, `restore --max-rounds 2`) is refused naming it (exit 2)
 * rather than ignored, since the person giving it expected it to do something. core/site's `sync
 * now` on a running site parses `now`'s.
 */
export const SYNC_FLAGS = {
  'sync status': { ...DATA, ...JSON_FLAG },
  'sync now': { ...DATA, ...HQ, ...JSON_FLAG, 'max-rounds': { type: 'string', value: '<n>' }, 'take-over': { type: 'boolean' }, 'hq-on-this-disk': { type: 'boolean' } },
  restore: { ...DATA, ...HQ, site: { type: 'string', value: '<id>' }, ...JSON_FLAG, force: { type: 'boolean' }, 'fall-back-to-tag': { type: 'boolean' } },
} as const satisfies Record<string, FlagSpecs>;

export const syncUsage = [
  '  tilstand sync status [--data <dir>] [--json]                 outbox progress and health',
  '  tilstand sync now [--data <dir>] [--hq <dir|s3://…>] [--access-key <key>] [--secret-key <secret>]',
  '                    [--json] [--max-rounds <n>] [--take-over [--hq-on-this-disk]]',
  '                                           ship to HQ now (a running site is asked to); --take-over:',
  "                                           this directory becomes the site's sender at HQ (--hq-on-this-disk: HQ is on this disk)",
  '  tilstand restore --data <dir> --hq <dir|s3://…> --site <id> [--access-key <key>] [--secret-key <secret>]',
  '                    [--force] [--fall-back-to-tag] [--json]',
  '                                           rebuild a site from HQ (--fall-back-to-tag: a table whose latest',
  '                                           snapshot at HQ is damaged comes back at its newest sound tag)',
];

/**
 * `--hq-on-this-disk` qualifies `--take-over` alone: given without it, it would do nothing the
 * person giving it expected, so it is refused (exit 2). `sync now` here and on a running site.
 */
export function checkTakeOverFlags(args: ParsedArgs): void {
  if (args.boolean('hq-on-this-disk') && !args.boolean('take-over')) {
    throw usageError("option '--hq-on-this-disk' goes with --take-over: it lets a take-over write HQ's copy into a folder on this PC's own disk");
  }
}

/**
 * `sync now --take-over` on a running site (core/site's dispatcher, before it asks the site to
 * sync): writes HQ's sender marker with the id of the directory's outbox, which the site's engine
 * reads at its next planning. HQ as `sync now` finds it (`--hq`, else config.json's `hq.target`,
 * else the outbox's directory target). Returns the line to print; undefined when the outbox has no
 * sender id — no engine runs there (a site without HQ target): the command's own engine takes over.
 */
export async function takeOverRunningSite(data: string, args: ParsedArgs): Promise<string | undefined> {
  const path = join(data, 'site.db');
  if (!existsSync(path)) return undefined;
  const db = openOutboxDb(path, true);
  try {
    const outbox = existingOutbox(db);
    if (outbox === undefined) return undefined;
    const cfg = readSiteConfig(data);
    const { hq } = hqOf(data, args, cfg);
    const target = targetFromFlags(hq, args.string('access-key'), args.string('secret-key'), cfg.site);
    try {
      let m: SenderMarker | undefined;
      try {
        m = await takeOverFor(outbox, data, cfg.site, target, Date.now(), { hqOnThisDisk: args.boolean('hq-on-this-disk') });
      } catch (e) {
        // Refused onto this PC's own disk: exit 3, as the same refusal with no site running (the
        // site's dispatcher maps no SyncError).
        if (isSyncError(e, 'Conflict')) throw new CliError(EXIT.conflict, e.message);
        throw e;
      }
      return m === undefined ? undefined : `HQ's sender marker for site ${cfg.site} now names this directory (sender ${m.sender})`;
    } finally {
      await target.close();
    }
  } finally {
    db.close();
  }
}

/** `--max-rounds`: a positive integer, default 5. */
export function maxRounds(v: string | undefined): number {
  if (v === undefined) return 5;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) throw new CliError(EXIT.usage, `option '--max-rounds': expected a positive integer, got '${v}'`);
  return n;
}

/** The first line `sync now` prints. */
export function syncNowLine(r: Pick<SyncNowResult, 'plan' | 'sentBytes'>): string {
  return `planned ${count(r.plan.units.length, 'unit')} (${count(r.plan.items, 'step')}, ${r.plan.bytes} bytes); sent ${r.sentBytes} bytes`;
}

/** `sync status` and `sync now` as text. */
export function syncStatusLines(s: SyncStatus): string[] {
  const age = (ms: number) => (ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`);
  const n = (k: number, one: string) => `${k} ${one}${k === 1 ? '' : 's'}`;
  // Why, in the words `tilstand status` uses: a bare STALLED beside "online: yes" read as the line.
  // An engine that gave no `problems` (an older one): the last error says it.
  const problems = s.problems ?? [];
  const why = s.healthy ? [] : problems.length > 0 ? [`why:              ${problems.map(syncProblemText).join('; ')}`] : s.lastError ? ['why:              the last error below'] : [];
  return [
    `health:           ${s.healthy ? 'ok' : 'STALLED'} (${n(s.recentItems, 'step')}, ${n(s.recentBytes, 'byte')} in the last window)`,
    ...why,
    `online:           ${s.online ? 'yes' : 'no'}`,
    `pending:          ${n(s.pendingItems, 'step')}, ${n(s.pendingBytes, 'byte')}`,
    `oldest unsynced:  ${s.pendingItems === 0 ? '-' : age(s.oldestUnsyncedMs)}`,
    `last success:     ${s.lastSuccessMs === null ? 'never' : new Date(s.lastSuccessMs).toISOString()}`,
    ...(s.current ? [`sending:          ${s.current.file} ${s.current.bytes}/${s.current.total}`] : []),
    ...(s.lastError ? [`last error:       ${s.lastError}`] : []),
    // Tags deleted on the site while their upload waited: dropped, not owed to HQ (the last day).
    ...(s.dropped ?? []).map((d) => `dropped:          ${d.unit} at ${new Date(d.atMs).toISOString()}: ${d.why}`),
  ];
}

/**
 * What the site's dispatcher passes to `sync now` and `restore`: the program's data format
 * (core/site data-format.ts, which core/sync may not import), for HQ's data format mark
 * (hq-data-format.ts). Without it `sync now` writes no mark and `restore` reads none.
 */
export interface SyncCommandOptions {
  dataFormat?: ProgramDataFormat;
  /**
   * config.json as the site reads it (core/site `readConfig`: every key checked), called before
   * `sync status|now` opens or makes anything in the directory: a config.json that is not
   * Tilstand's (another program's folder) is refused as every site command refuses it. What it
   * throws is a usage error (exit 2, as core/site's ConfigError is) unless a CliError, which keeps
   * its code. Without it, only `site` is checked (readSiteConfig).
   */
  checkConfig?: (data: string) => void;
  /**
   * A folder of the data directory that may be HQ all the same (`refuseHqInData`): the stand-in HQ
   * a new demo syncs to, `<data>/demo-hq` (core/site passes its DEMO_HQ_DIR).
   */
  hqFolderInData?: string;
}

/** The flags of every sync command, for finding the subcommand after them (`sync --data X status`). */
const SYNC_GROUP_FLAGS: FlagSpecs = { ...SYNC_FLAGS['sync status'], ...SYNC_FLAGS['sync now'] };

/** `tilstand sync …`'s subcommand and the other arguments: `sync --data X now` is `sync now --data X` (the site's dispatcher asks too). */
export function syncSubcommand(argv: readonly string[]): [string | undefined, string[]] {
  return subcommand(argv, SYNC_GROUP_FLAGS);
}

/**
 * config.json of `data`, checked before anything is opened or made there: by the site's own check
 * when given, else `site` alone (readSiteConfig).
 */
function siteConfig(data: string, o: SyncCommandOptions): ReturnType<typeof readSiteConfig> {
  try {
    // Without config.json, readSiteConfig's "not found" (exit 1) says it, as before the site's check.
    if (existsSync(join(data, 'config.json'))) o.checkConfig?.(data);
  } catch (e) {
    throw e instanceof CliError ? e : new CliError(EXIT.usage, (e as Error).message);
  }
  return readSiteConfig(data);
}

/**
 * Refuses an HQ directory that is the data directory or a folder in it: `--hq <data>/warehouse`
 * shipped the site's tables onto themselves (HQ's marker and copies in the site's own database
 * folder), `--hq <data>` made a site_<id>.db beside the site's files. `from` names where it came from.
 */
function refuseHqInData(data: string, target: SyncTarget, from: string, allowed: string | undefined): void {
  if (!(target instanceof DirectoryTarget)) return;
  // As written and where they lead: a symbolic link to <data>/warehouse (or a data directory given
  // through one) passed the comparison of the paths as written. The demo's stand-in HQ
  // (<data>/demo-hq) is in the data directory by design (`allowed`).
  const where = hqInData(data, target.root, allowed);
  if (where === 'itself') throw usageError(`${from}: ${target.root} is the site's data directory itself; HQ is a directory outside it`);
  if (where === 'inside') throw usageError(`${from}: ${target.root} is inside the site's data directory ${data}; HQ is a directory outside it`);
}

export async function runSync(argv: readonly string[], io: CliIO, o: SyncCommandOptions = {}): Promise<number> {
  const [sub, rest] = syncSubcommand(argv);
  if (sub === 'help' || (sub === undefined && rest.some((x) => x === '--help' || x === '-h'))) {
    const w = new LineWriter(io.stdout);
    await w.lines(['usage:', ...syncUsage]);
    await w.end().catch(() => undefined);
    return EXIT.ok;
  }
  if (sub !== 'status' && sub !== 'now') {
    const w = new LineWriter(io.stderr);
    await w.lines([commandProblem('sync', argv, sub, SYNC_GROUP_FLAGS, ['status', 'now']), 'usage:', ...syncUsage]);
    await w.end().catch(() => undefined);
    return EXIT.usage;
  }
  return guarded(io, async () => {
    const args = parseArgs(rest, SYNC_FLAGS[`sync ${sub}`], `sync ${sub}`);
    // `--help` anywhere asks for the usage: it does not run the command (as `tilstand table` and `hq`).
    if (args.help) return printUsage(io, `sync ${sub}`);
    refuseExtraArguments(args, `sync ${sub}`);
    if (sub === 'now') checkTakeOverFlags(args);
    const data = resolve(pathOption(args, 'data', "a site's data directory") ?? 'tilstand-data');
    const out = new LineWriter(io.stdout);
    let status: SyncStatus;
    /** HQ's sender marker names another data directory (`sync now`: exit 3). */
    let refused = false;
    /** The rounds `sync now` ran (for the note when steps remain). */
    let ran = 0;
    let site = '';
    if (sub === 'status') {
      // A config.json that is not Tilstand's is refused before site.db is looked for; with none, a
      // site.db alone is read (and none there is named as missing).
      if (existsSync(join(data, 'config.json'))) siteConfig(data, o);
      const path = join(data, 'site.db');
      if (!existsSync(path)) throw new CliError(EXIT.notFound, `${path} does not exist (is ${data} a site's data directory?)`);
      // Read-only: a status changes nothing, not even an old outbox's schema.
      const db = openOutboxDb(path, true);
      try {
        const outbox = existingOutbox(db);
        status = outbox ? statusOf(outbox, Date.now(), DEFAULT_HEALTH_WINDOW_MS) : { ...EMPTY_SYNC_STATUS };
      } catch (e) {
        throw damageIn(path, e);
      } finally {
        db.close();
      }
    } else {
      const rounds = maxRounds(args.string('max-rounds'));
      const cfg = siteConfig(data, o);
      site = cfg.site;
      const { hq, fromOutbox } = hqOf(data, args, cfg);
      // Where HQ came from, for a refusal: the person may not have typed it here.
      const from = args.string('hq') !== undefined ? "option '--hq'" : fromOutbox ? 'the HQ this directory last synced to (given with --hq at its start)' : `hq.target in ${join(data, 'config.json')}`;
      const target = targetFromFlags(hq, args.string('access-key'), args.string('secret-key'), cfg.site, from);
      try {
        refuseHqInData(data, target, from, o.hqFolderInData);
      } catch (e) {
        await target.close();
        throw e;
      }
      if (fromOutbox && !args.boolean('json')) await out.line(`syncing to ${hq}: config.json names no HQ target, and the site's last start was given this one with --hq`);
      let engine: SyncEngine | undefined;
      try {
        engine = new SyncEngine({ dataDir: data, site: cfg.site, target, retry: { baseMs: 200, maxMs: 2000 }, takeOver: args.boolean('take-over'), hqOnThisDisk: args.boolean('hq-on-this-disk'), ...(o.dataFormat ? { dataFormat: o.dataFormat } : {}) });
        // A running site logs it; here the person who gave the new --hq must read it. On stderr
        // with --json, whose stdout is the status alone.
        if (engine.targetChanged !== undefined) {
          if (args.boolean('json')) await note(io, engine.targetChanged);
          else await out.line(engine.targetChanged);
        }
        const r = await engine.syncNow(rounds);
        status = r.status;
        ran = r.rounds;
        refused = engine.refusedByHq;
        if (!args.boolean('json')) await out.line(syncNowLine(r));
      } catch (e) {
        // The outbox is site.db, the only SQLite file the engine opens.
        throw damageIn(join(data, 'site.db'), e);
      } finally {
        await engine?.close();
        await target.close();
      }
    }
    if (args.boolean('json')) await out.line(JSON.stringify(status));
    else await out.lines(syncStatusLines(status));
    await out.end();
    // A failing exit says why on stderr, where a script's log or a service manager looks (the
    // status on stdout may be JSON, or not kept).
    const failed = sub === 'now' ? syncNowFailure(site, status, ran, refused) : undefined;
    if (failed === undefined) return EXIT.ok;
    await note(io, failed.note);
    return failed.code;
  });
}

/**
 * Why `sync now` exits failing — 3 when HQ's sender marker refused this directory (or is gone where
 * this directory had one), 5 with steps
 * still pending — as the line for stderr, or undefined for exit 0. One text for the command run on
 * a directory and for a running site asked to sync (core/site).
 */
export function syncNowFailure(site: string, status: SyncStatus, rounds: number, refused: boolean): { code: number; note: string } | undefined {
  if (refused && status.problems?.includes('gone')) {
    // Not another PC: HQ's copy (or its share) is not there; --take-over sends everything again.
    return { code: EXIT.conflict, note: `tilstand: nothing was sent: HQ no longer holds the sender marker this directory wrote for site ${site} (is HQ's share mounted? the last error says more; --take-over sends everything again if HQ's copy was removed on purpose)` };
  }
  if (refused) {
    return { code: EXIT.conflict, note: `tilstand: nothing was sent: HQ's sender marker names another data directory for site ${site} (the last error says which; --take-over makes this directory the sender)` };
  }
  if (status.pendingItems === 0) return undefined;
  const held = status.lastError ? 'the last error says what holds them' : 'run it again, or let the site send them';
  return { code: EXIT.io, note: `tilstand: ${count(status.pendingItems, 'step')} still pending after ${count(rounds, 'round')} (--max-rounds allows more): ${held}` };
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** A line on stderr; when stderr is gone (a closed pipe) the note is lost and the command goes on. */
async function note(io: CliIO, line: string): Promise<void> {
  const w = new LineWriter(io.stderr);
  try {
    await w.line(line);
    await w.end();
  } catch {
    // nobody reads stderr
  }
}

/** The usage of one command (`sync now`, `restore`): its lines of `syncUsage`, continuations included. */
async function printUsage(io: CliIO, command: string): Promise<number> {
  const lines: string[] = [];
  for (const l of syncUsage) {
    if (l.startsWith(`  tilstand ${command} `) || (lines.length > 0 && !l.trimStart().startsWith('tilstand '))) lines.push(l);
    else if (lines.length > 0) break;
  }
  const w = new LineWriter(io.stdout);
  await w.lines(['usage:', ...lines]);
  await w.end().catch(() => undefined);
  return EXIT.ok;
}

/**
 * Refuses a restore whose HQ copy of the site is the folder it restores into, or lies inside it or
 * around it (`--hq <data>/warehouse`, or a link to it: HQ's copy moved onto the new PC's data
 * directory): the restore removes the data directory's copy of the site before it copies HQ's, so
 * with `--force` it deleted the very copy it was to restore from, then failed "no tables", exit 1.
 */
function refuseRestoreOntoHq(data: string, target: SyncTarget, site: string): void {
  if (!(target instanceof DirectoryTarget)) return;
  const db = `site_${site}.db`;
  for (const [hq, local] of [[join(target.root, db), join(data, 'warehouse', db)], [join(realFolder(target.root), db), join(realFolder(join(data, 'warehouse')), db)]] as const) {
    if (within(local, hq) || within(hq, local)) {
      throw usageError(`option '--hq': HQ's copy of site ${site} (${join(target.root, db)}) is where the restore writes the site's tables (${join(data, 'warehouse', db)}); restore from HQ's folder, not from a copy inside the data directory`);
    }
  }
}

/** These commands take options only: a stray word (`sync status site-2`) is refused, as `tilstand table` does, not ignored. */
export async function runRestore(argv: readonly string[], io: CliIO, o: SyncCommandOptions = {}): Promise<number> {
  return guarded(io, async () => {
    const args = parseArgs(argv, SYNC_FLAGS.restore, 'restore');
    // Asked for help, it prints the usage: it does not rebuild the data directory it was given.
    if (args.help) return printUsage(io, 'restore');
    refuseExtraArguments(args, 'restore');
    const data = resolve(pathOption(args, 'data', "a site's data directory") ?? args.required('data'));
    const site = checkSiteId(args.required('site'));
    // Scoped to the site: the restore writes HQ's sender marker in its prefix (and nothing else).
    const target = targetFromFlags(args.string('hq'), args.string('access-key'), args.string('secret-key'), site);
    try {
      refuseRestoreOntoHq(data, target, site);
    } catch (e) {
      await target.close();
      throw e;
    }
    const bar = progressBar(io.stderr);
    try {
      let note;
      try {
        note = await restoreSite({
          dataDir: data,
          target,
          site,
          force: args.boolean('force'),
          fallBackToTag: args.boolean('fall-back-to-tag'),
          ...(o.dataFormat ? { dataFormat: o.dataFormat } : {}),
          onProgress: (p) => bar(p.doneFiles, p.totalFiles, p.doneBytes, p.table),
        });
      } catch (e) {
        // The outbox in site.db is the only SQLite file a restore opens.
        throw damageIn(join(data, 'site.db'), e);
      }
      const out = new LineWriter(io.stdout);
      if (args.boolean('json')) await out.line(JSON.stringify(note));
      else {
        await out.line(`restored site ${site} into ${data}: ${Object.entries(note.tables).map(([t, x]) => `${t}@${x.snapshotId ?? '-'}`).join(', ')}`);
        // A table restored at an older tag: from where, and what is lost (its resync lines follow).
        for (const f of note.restoredFromTag ?? []) {
          // The inbox's tables are written by the site itself (the agent, people, the write-back):
          // no module resends what they lost.
          const lost =
            f.table === APPROVAL_INBOX_TABLE
              ? 'the proposals, decisions and command progress made after the tag, which are not resent (the agent proposes again what still holds; a command approved after the tag is no longer followed, unless its module answers it after the restore: then it shows as approved by "?")'
              : f.table === DECISION_LOG_TABLE
                ? "the log's entries after the tag, which are not resent (their ids stay unused)"
                : `what ${f.table} committed after the tag`;
          const resent = f.table === APPROVAL_INBOX_TABLE || f.table === DECISION_LOG_TABLE ? '' : ", but for what its modules still hold and resend after the tag's marks (the resync lines below)";
          await out.line(
            `${f.table}: HQ's latest snapshot ${f.damagedSnapshotId} is damaged; restored from tag ${f.tag} (snapshot ${f.snapshotId}, committed ${new Date(f.committedMs).toISOString()}); lost: ${lost}, up to snapshot ${f.damagedSnapshotId} (committed ${new Date(f.damagedCommittedMs).toISOString()}, ${formatDuration(f.lostMs)} later)${resent}`,
          );
        }
        for (const r of note.resync) await out.line(`resync ${r.module}/${r.stream} after seq ${r.afterSeq} (${r.topic})`);
        // HQ holds no config.json: without the definition back, the site would keep the table and write nothing into it.
        for (const t of note.ownTables ?? []) {
          await out.line(`${t} is a table of the site's own: HQ does not hold config.json, which defines it. Its entry, drafted from HQ's schema, is in ${join(data, RESTORED_TABLES)}: after \`tilstand init\`, add it to ${join(data, 'config.json')} \`tables\`, with its binding (set its budget and decision; the replaced PC's copy, if there is one, says them); until then the site does not list or write ${t}`);
        }
        if (note.sender?.adopted) await out.line(`HQ's sender marker names this directory (sender ${note.sender.id}): the replaced PC, if it comes back, stops sending`);
        else if (note.sender) await out.line(`HQ's sender marker was not written (${note.sender.error}): the first send is refused while it names the replaced PC; \`tilstand sync now --take-over --data ${data}\` then`);
        if (note.unreadableMark) await out.line(`an unfinished restore's mark that did not read was replaced: ${note.unreadableMark}`);
        await out.line(`note: ${join(data, 'restore-note.json')}`);
      }
      await out.end();
      // As `hq pull`: the site is restored without its damaged tags, named here as corruption,
      // exit 4 — never left out silently (the note's `damagedTags` lists them too). So is a table
      // restored at an older tag because its latest snapshot at HQ is damaged (`restoredFromTag`).
      const problems: string[] = [];
      const fellBack = note.restoredFromTag ?? [];
      if (fellBack.length > 0) {
        const n = fellBack.length;
        problems.push(
          `${n} table${n === 1 ? '' : 's'} at HQ had a damaged latest snapshot and ${n === 1 ? 'was' : 'were'} restored from an older tag: ${fellBack.map((f) => `${f.table}: ${f.error}; restored from tag ${f.tag} (snapshot ${f.snapshotId}), ${formatDuration(f.lostMs)} of commits lost`).join('; ')}; the restored site is usable`,
        );
      }
      const damaged = note.damagedTags ?? [];
      if (damaged.length > 0) {
        const n = damaged.length;
        problems.push(
          `${n} tag${n === 1 ? '' : 's'} at HQ ${n === 1 ? 'is' : 'are'} damaged and not restored (the rest of the site is): ${damaged.map((d) => `${d.tag}: ${d.error}`).join('; ')}; the restored site is usable without ${n === 1 ? 'it' : 'them'}`,
        );
      }
      if (problems.length > 0) throw new SyncError('Verification', problems.join('; also, '));
      return EXIT.ok;
    } finally {
      await target.close();
    }
  });
}
