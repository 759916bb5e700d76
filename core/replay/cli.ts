// `tilstand replay …` (wired into core/site/cli/main.ts as one dispatch entry):
//
//   tilstand replay export --data <dir> --tag <name>|<tag to cut at> --until <ISO time>|now [--at <ISO time>] [--retain <duration>] --out <dir|file.tar>
//   tilstand replay run --fixture <dir|file.tar> [--agent default|<rules.json>] --out <dir> [--tick-ms <ms>] [--scratch <dir>] [--keep-scratch] [--progress] [--run-rule-files]
//   tilstand replay diff <baseline run> <candidate run> --out <dir> [--min-agreement <0..1>] [--max-changed <n>] [--examples <n>] [--force]
//
// `--help` prints the usage to stdout, exit 0, as every other `tilstand` command.
//
// Exit codes: 0 done (diff: gate passed); 1 the diff's acceptance gate was missed, or export's
// --data is not a data directory (as the site commands); 2 usage (a bad option, a path given that
// does not exist, a run's --out that is not empty, an export's or run's --out or a --scratch that
// cannot be written, a diff's --out that holds a report and no --force, or that cannot be written);
// 5 anything else (the message says what), also a default scratch place that cannot be written.

import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CliError, EXIT, parseArgs, usageError, type FlagSpecs } from '../lsm/cli/args.ts';
import type { CliIO } from '../lsm/cli/output.ts';
import { parseDuration, parseTime } from '../lsm/cli/values.ts';
import { AgentSpecRefused, openAgentSpec, type AgentSpec } from './agent-spec.ts';
import { diffRuns, loadRun } from './diff.ts';
import { exportDataProblem, exportFixture, exportOutProblem, fixtureTagProblem, takeBackDeadExports } from './export.ts';
import { progressBar } from './progress.ts';
import type { FixtureManifest, LiveRuleFile } from './fixture.ts';
import { defaultScratchParent, FixtureRuleFilesRefused, RUN_FILES, runReplay, type ReplayResult, type RunManifest } from './replay.ts';
import { REPORT_FILES, writeReport } from './report.ts';
import { halfMoved, removeDeadRunTemps } from './run-output.ts';
import { writeProblem } from './writable.ts';

export const replayUsage: readonly string[] = [
  '  tilstand replay export --data <dir> --tag <name>|<tag to cut at> --until <ISO time>|now [--at <ISO time>] [--retain <duration>] --out <dir|file.tar>',
  '  tilstand replay run --fixture <dir|file.tar> [--agent default|<rules.json>] --out <dir> [--tick-ms <ms>] [--scratch <dir>] [--keep-scratch] [--progress] [--run-rule-files]',
  '  tilstand replay diff <run> <run> --out <dir> [--min-agreement <0..1>] [--max-changed <n>] [--examples <n>] [--force]',
];

const EXPORT_FLAGS: FlagSpecs = { data: { type: 'string', value: '<dir>' }, tag: { type: 'string', value: '<name>' }, until: { type: 'string', value: '<ISO time>' }, at: { type: 'string', value: '<ISO time>' }, retain: { type: 'string', value: '<duration>' }, out: { type: 'string', value: '<dir|file.tar>' } };
const RUN_FLAGS: FlagSpecs = { fixture: { type: 'string', value: '<dir|file.tar>' }, agent: { type: 'string', value: 'default|<rules.json>' }, out: { type: 'string', value: '<dir>' }, 'tick-ms': { type: 'string', value: '<ms>' }, scratch: { type: 'string', value: '<dir>' }, progress: { type: 'boolean' }, 'keep-scratch': { type: 'boolean' }, 'run-rule-files': { type: 'boolean' } };
const DIFF_FLAGS: FlagSpecs = { out: { type: 'string', value: '<dir>' }, 'min-agreement': { type: 'string', value: '<0..1>' }, 'max-changed': { type: 'string', value: '<n>' }, examples: { type: 'string', value: '<n>' }, force: { type: 'boolean' } };

/**
 * A path an option names that has to be there: refused naming the option (usage), not with the raw
 * ENOENT of whatever first touched it.
 */
function existing(what: string, path: string, folder: boolean): string {
  if (!existsSync(path)) throw usageError(`${what}: ${path} does not exist`);
  if (folder && !statSync(path).isDirectory()) throw usageError(`${what}: ${path} is not a folder`);
  return path;
}

/**
 * Why `--fixture` is no replay fixture, told before anything is extracted: a folder without
 * fixture.json, a file that is not a tar archive (its first header's checksum does not add up: a
 * text, /etc/passwd, whose first bytes the reader's "bad header checksum at entry '…'" echoed, exit
 * 5), or an archive without fixture.json among its entries (only the headers are read). Undefined
 * for a fixture, and for an archive damaged further on, which the opening of the fixture names.
 */
function notAFixture(path: string): string | undefined {
  const noManifest = 'no fixture.json';
  if (statSync(path).isDirectory()) return existsSync(join(path, 'fixture.json')) ? undefined : noManifest;
  const notArchive = 'expected a fixture folder or the .tar archive `tilstand replay export` writes';
  const fd = openSync(path, 'r');
  try {
    const h = Buffer.alloc(512);
    for (let at = 0; ; ) {
      const first = at === 0;
      if (readSync(fd, h, 0, 512, at) < 512) return first ? notArchive : undefined;
      if (h.every((b) => b === 0)) return noManifest;
      let sum = 0;
      for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
      if (parseInt(tarField(h, 148, 8).trim(), 8) !== sum) return first ? notArchive : undefined;
      const name = tarField(h, 345, 155) ? `${tarField(h, 345, 155)}/${tarField(h, 0, 100)}` : tarField(h, 0, 100);
      if (name === 'fixture.json' || name === './fixture.json') return undefined;
      const size = parseInt(tarField(h, 124, 12).trim() || '0', 8);
      if (!Number.isSafeInteger(size) || size < 0) return undefined;
      at += 512 + Math.ceil(size / 512) * 512;
    }
  } finally {
    closeSync(fd);
  }
}

/** A NUL-ended text field of a tar header. */
function tarField(h: Buffer, start: number, len: number): string {
  const s = h.subarray(start, start + len);
  const z = s.indexOf(0);
  return s.subarray(0, z < 0 ? len : z).toString('utf8');
}

/** An `--out` folder given that is a file: refused naming it, not with the ENOTDIR or EEXIST of the write. */
function outFolder(out: string): boolean {
  if (!existsSync(out)) return false;
  if (!statSync(out).isDirectory()) throw usageError(`option '--out': ${out} is a file, not a folder`);
  return true;
}

/** A few of a folder's entries, for a message that says what is in the way. */
function someOf(names: string[]): string {
  const shown = names.slice(0, 3).join(', ');
  return names.length > 3 ? `${shown} and ${names.length - 3} more` : shown;
}

function num(flag: string, v: string | undefined, min: number, max: number, integer: boolean): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) throw usageError(`option '--${flag}': expected ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got '${v}'`);
  return n;
}

const say = (io: CliIO, line: string) => void io.stderr.write(`${line}\n`);
/** A subcommand's `--help`: its usage line on stdout (what was asked for, not a complaint), exit 0. */
const help = (io: CliIO, line: string): number => (io.stdout.write(`usage:\n${line}\n`), EXIT.ok);

/** What the site's `replay` command knows that core/replay may not read itself (core/site/cli site-commands.ts). */
export interface ReplayCliContext {
  /** The time zone the site runs in (site.db's record of its last start): the export records it, not this process's. */
  siteTimeZone?: string;
}

async function runExport(argv: string[], io: CliIO, context: ReplayCliContext = {}): Promise<number> {
  const a = parseArgs(argv, EXPORT_FLAGS, 'replay export');
  if (a.help) return help(io, replayUsage[0]!);
  // Every option is checked before the export reads the site: a refused one tags nothing.
  const tag = a.required('tag');
  const tagProblem = fixtureTagProblem(tag);
  if (tagProblem) throw usageError(`option '--tag': ${tagProblem}`);
  const data = a.required('data');
  // As the site commands (core/site/cli existingDataDir), which core/replay may not import.
  if (!existsSync(join(data, 'config.json'))) throw new CliError(EXIT.notFound, `${resolve(data)} is not a Tilstand data directory (no config.json); run \`tilstand init --data ${data} --site <id>\` first`);
  // An --out the export could not finish into (in the way, or in a folder it cannot write) is
  // refused here, before the cut is made and the journal read.
  const out = a.required('out');
  // What a dead export left goes first: entries it moved into this --out would refuse it.
  takeBackDeadExports(data);
  const outProblem = exportOutProblem(out);
  if (outProblem !== undefined) throw usageError(`option '--out': ${outProblem}`);
  // And a data directory it cannot write in (its record, the cut's tags): a read-only copy.
  const dataProblem = exportDataProblem(data);
  if (dataProblem !== undefined) throw usageError(`option '--data': ${dataProblem}`);
  const atArg = a.string('at');
  const until = a.required('until');
  const retainArg = a.string('retain');
  const retainMs = retainArg === undefined ? undefined : parseDuration(retainArg, 'retain');
  if (retainMs === 0) throw usageError(`option '--retain': expected a duration longer than 0, got '${retainArg}'`);
  // Without a zone an ISO time is UTC, as every other time option of `tilstand` (lsm cli values.ts).
  const m = await exportFixture({
    data, tag, ...(until === 'now' ? {} : { untilMs: parseTime(until, 'until') }), ...(atArg ? { atMs: parseTime(atArg, 'at') } : {}), ...(retainMs !== undefined ? { retainMs } : {}), out,
    ...(context.siteTimeZone !== undefined ? { timeZone: context.siteTimeZone } : {}),
  });
  io.stdout.write(`${exportedLine(m, out)}\n`);
  // A package a rule file imports is not its own code and does not travel: say so where it matters.
  for (const f of m.liveAgent.ruleFiles ?? []) if (f.packages) say(io, packagesNote(f));
  // The site's tags of the cut pin its files: say how long, and how to release them.
  const kept = m.siteTag.expiresMs === null ? `until deleted (export with --retain 30d to let it expire)` : `until ${new Date(m.siteTag.expiresMs).toISOString()}`;
  io.stdout.write(`the site keeps tag ${m.tag}${m.siteTag.reused ? ', made by an earlier export,' : ''} ${kept}${m.siteTag.reused && retainMs !== undefined ? ': --retain applies to a cut when it is made' : ''}\n`);
  return EXIT.ok;
}

/** `n` and its noun, in the singular for one ("1 event", "2 events"). */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** The line `replay export` prints once the fixture is written. */
export function exportedLine(m: Pick<FixtureManifest, 'name' | 'tag' | 'cutFrom' | 'cutMs' | 'untilMs' | 'events' | 'decisions' | 'liveProposals' | 'files'>, out: string): string {
  const cut = `${m.cutFrom !== undefined ? `at ${m.cutFrom}, ` : ''}${new Date(m.cutMs).toISOString()}`;
  // A fixture holds its manifest's files and more: never one file.
  return `exported fixture ${m.name} (tag ${m.tag}) to ${out}: cut ${cut}, ${counted(m.events.count, 'event')} until ${new Date(m.untilMs).toISOString()}, ${counted(m.decisions, 'decision')}, ${counted(m.liveProposals, 'live proposal')}, ${m.files.length} files`;
}

/** What `replay export` says (stderr) of a site's rule file that imports packages: the fixture does not hold them. */
export function packagesNote(f: Pick<LiveRuleFile, 'path' | 'file' | 'packages'>): string {
  const p = f.packages ?? [];
  return `replay export: the site's rule file ${f.path} imports ${p.length === 1 ? 'package' : 'packages'} ${p.join(', ')}, which the fixture does not hold (only the files under the rule file's folder travel, in ${f.file.split('/').slice(0, -1).join('/')}/); a replay with --run-rule-files loads ${p.length === 1 ? 'it' : 'them'} where it runs (node_modules above the fixture) or refuses the file naming ${p.length === 1 ? 'it' : 'them'}`;
}

/** The line `replay run` prints once the run is written. */
export function replayedLine(c: Pick<RunManifest['counts'], 'events' | 'agentRuns' | 'proposals' | 'decisionsApplied' | 'decisionsUnmatched'>, agent: string, out: string): string {
  return `replayed ${counted(c.events, 'event')} with agent ${agent}: ${counted(c.agentRuns, 'agent run')}, ${counted(c.proposals, 'proposal')}, ${counted(c.decisionsApplied, 'decision')} applied (${c.decisionsUnmatched} unmatched) → ${out}`;
}

async function runRun(argv: string[], io: CliIO): Promise<number> {
  const a = parseArgs(argv, RUN_FLAGS, 'replay run');
  if (a.help) return help(io, replayUsage[1]!);
  // First, before anything is opened (a large fixture takes a while to extract and check):
  // runReplay refuses a folder that is not empty too, but only once it has opened the fixture.
  const out = a.required('out');
  // What a run to this --out killed on this host left there is not in the way (run-output.ts).
  if (outFolder(out)) removeDeadRunTemps(out);
  const held = existsSync(out) ? readdirSync(out).sort() : [];
  if (held.length > 0) {
    const why = halfMoved(held, RUN_FILES);
    throw usageError(`option '--out': folder ${out} is not empty (it holds ${someOf(held)}${why !== undefined ? `: ${why}` : ''}); give a new or empty folder`);
  }
  // And one the run could not be written into (a file where a parent folder should be, no
  // permission, a read-only mount), which runReplay finds only after the last event: tried now
  // by making the folder and removing it again (made for good at the end, as before, so a run
  // that fails for another reason leaves no empty folder). An empty --out is written inside
  // (run-output.ts): its own folder need not take a new one.
  const outWhy = writeProblem(out);
  if (outWhy !== undefined) throw usageError(`option '--out': ${existsSync(out) ? `cannot write the run into ${out}` : `cannot create the run folder ${out}`}: ${outWhy}`);
  let agent: AgentSpec;
  try {
    agent = await openAgentSpec(a.string('agent'));
  } catch (e) {
    // A missing file, bad JSON, an unknown rule or version, a bad threshold, a rule file that
    // does not load or whose rules are not held to the installed ones' checks: a bad option.
    throw usageError((e as Error).message);
  }
  const tickMs = num('tick-ms', a.string('tick-ms'), 1, 60_000, true);
  // A `rules` entry the installed rules and the config's files do not have waits for the fixture's
  // live rule files (base "live"); with no fixture to hold any, it is refused as it always was.
  if (agent.pending !== undefined && !existsSync(a.required('fixture'))) throw usageError(agent.pending);
  const fixture = existing("option '--fixture'", a.required('fixture'), false);
  const scratch = a.string('scratch');
  let scratchParent: string;
  if (scratch) {
    existing("option '--scratch'", scratch, true);
    // The fixture is extracted and the scratch warehouse made there: refused now, not after a
    // large fixture's checksums were read.
    const why = writeProblem(scratch);
    if (why !== undefined) throw usageError(`option '--scratch': ${why}`);
    scratchParent = scratch;
  } else {
    // The default place (/dev/shm or the temp folder) is tried the same way: it failed as a bare
    // EROFS or EACCES of mkdtemp, for a fixture folder only after all its checksums were read.
    // Exit 5, not 2: no option given was wrong, the machine's folder is (5 is what the tilstand
    // commands give for a file system that fails them); the message says the way round it. A full
    // one is not found here (making a folder takes no space): that fails when written, ENOSPC.
    scratchParent = defaultScratchParent();
    const why = existsSync(scratchParent) ? writeProblem(scratchParent) : `${scratchParent} does not exist`;
    if (why !== undefined) throw new CliError(EXIT.io, `cannot make the scratch folder in ${scratchParent}, the default place for it: ${why}; give another with --scratch <dir>`);
  }
  // Then what --fixture names: a file that is no fixture at all is a bad option, before it is extracted.
  const notFixture = notAFixture(fixture);
  if (notFixture !== undefined) throw usageError(`option '--fixture': ${fixture} is not a replay fixture (${notFixture})`);
  const err = io.stderr as NodeJS.WritableStream & { isTTY?: boolean };
  const bar = err.isTTY || a.boolean('progress') ? progressBar(err) : undefined;
  const keepScratch = a.boolean('keep-scratch');
  let kept: string | undefined;
  let r: ReplayResult;
  try {
    r = await runReplay({
      fixture,
      agent,
      out,
      ...(tickMs !== undefined ? { tickMs } : {}),
      scratchParent,
      keepScratch,
      ...(keepScratch ? { onScratch: (dir) => void (kept = resolve(dir)) } : {}),
      ...(bar ? { onProgress: (p) => bar.update(p) } : {}),
      runFixtureRuleFiles: a.boolean('run-rule-files'),
      onRuleFile: (f) => say(io, `replay: running the live site's rule file ${f.path} (sha256 ${f.sha256.slice(0, 12)}…) from the fixture's ${f.file}`),
    });
  } catch (e) {
    // Not told to run the code the fixture holds, or a rules config whose rules do not fit the
    // fixture's live rule files: a usage error, as a missing option or a bad --agent is.
    if (e instanceof FixtureRuleFilesRefused || e instanceof AgentSpecRefused) throw usageError(e.message);
    throw e;
  } finally {
    bar?.done();
    // Its name is made up by mkdtemp: without this line a kept folder is found only by searching.
    // Said also when the run fails, when it is most likely wanted.
    if (kept !== undefined) say(io, `replay: scratch folder kept: ${kept}`);
  }
  const c = r.manifest.counts;
  io.stdout.write(`${replayedLine(c, agent.label, out)}\n`);
  say(io, `replay: ${(r.wallMs / 1000).toFixed(1)} s wall, ${Math.round(r.eventsPerSecond)} events/s`);
  if (r.manifest.ingestFailure) say(io, `replay: ingest stopped: ${r.manifest.ingestFailure}`);
  return r.manifest.ingestFailure ? EXIT.io : EXIT.ok;
}

async function runDiff(argv: string[], io: CliIO): Promise<number> {
  const a = parseArgs(argv, DIFF_FLAGS, 'replay diff');
  if (a.help) return help(io, replayUsage[2]!);
  if (a.positionals.length !== 2) throw usageError(`replay diff: expected two run folders (baseline, candidate), got ${a.positionals.length}`);
  const minAgreement = num('min-agreement', a.string('min-agreement'), 0, 1, false);
  const maxChanged = num('max-changed', a.string('max-changed'), 0, Number.MAX_SAFE_INTEGER, true);
  const examples = num('examples', a.string('examples'), 0, 1000, true);
  for (const [i, run] of a.positionals.entries()) existing(`replay diff: ${i === 0 ? 'baseline' : 'candidate'} run`, run, true);
  // An earlier report is kept unless asked: a second diff into the same folder (a script's fixed
  // path) replaced it without a word. --force (the flag `tilstand restore` takes for its own yes)
  // replaces the report's three files and leaves everything else in the folder.
  const out = a.required('out');
  const earlier = outFolder(out) ? REPORT_FILES.filter((f) => existsSync(join(out, f))) : [];
  if (earlier.length > 0 && !a.boolean('force')) throw usageError(`option '--out': folder ${out} already holds a report (${earlier.join(', ')}); give another folder, or --force to replace it`);
  // And one the report could not be written into (a file where a parent folder should be, no
  // permission, a read-only mount): refused as run's --out is, not as the bare ENOTDIR or EACCES
  // of the write at the end (exit 5). Tried by making the folder and removing it again.
  const outWhy = writeProblem(out);
  if (outWhy !== undefined) throw usageError(`option '--out': ${existsSync(out) ? `cannot write the report into ${out}` : `cannot create the report folder ${out}`}: ${outWhy}`);
  const report = diffRuns(loadRun(a.positionals[0]!), loadRun(a.positionals[1]!), {
    ...(minAgreement !== undefined ? { minAgreement } : {}),
    ...(maxChanged !== undefined ? { maxChanged } : {}),
    ...(examples !== undefined ? { examples } : {}),
  });
  writeReport(report, out);
  const s = report.summary;
  const ag = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));
  io.stdout.write(`${report.baseline.label} → ${report.candidate.label}: ${s.added} added, ${s.removed} removed, ${s.changed} changed, ${s.unchanged} unchanged; agreement ${ag(report.agreement.baseline.agreement)} → ${ag(report.agreement.candidate.agreement)}; gate ${report.gate.passed ? 'passed' : 'FAILED'}\n`);
  for (const f of report.gate.failures) say(io, `replay diff: ${f}`);
  return report.gate.passed ? EXIT.ok : EXIT.notFound;
}

/** `tilstand replay <export|run|diff> …` */
export async function runReplayCli(argv: string[], io: CliIO, context: ReplayCliContext = {}): Promise<number> {
  const [sub, ...rest] = argv;
  const run = sub === 'export' ? (a: string[], o: CliIO) => runExport(a, o, context) : sub === 'run' ? runRun : sub === 'diff' ? runDiff : undefined;
  if (!run) {
    if (sub === 'help' || sub === '--help' || sub === '-h') {
      io.stdout.write(`usage:\n${replayUsage.join('\n')}\n`);
      return EXIT.ok;
    }
    if (sub === undefined) {
      io.stderr.write(`tilstand: replay needs a command\nusage:\n${replayUsage.join('\n')}\n`);
      return EXIT.usage;
    }
    throw new CliError(EXIT.usage, `replay: unknown subcommand '${sub}' (expected export, run or diff)`);
  }
  try {
    return await run(rest, io);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(EXIT.io, (e as Error).message);
  }
}

/** The dispatcher's entry (core/site/cli/main.ts spreads it into its command table). */
export const REPLAY_COMMANDS: Record<string, (argv: string[], io: CliIO) => Promise<number>> = { replay: runReplayCli };
