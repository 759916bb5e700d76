// The site's commands other than `start`: init, status, contracts, deadletters, users, modules, demo, and
// `sync now` on a running site.
// Commands that change a running site go through its control socket; when no site runs they
// work on the directory (the CLI then owns the tables' writer locks for the moment it runs).

import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, constants as fsConstants, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { CliError, EXIT, parseArgs, pathOption, type FlagSpecs, type ParsedArgs } from '../../lsm/cli/args.ts';
import { bidiControlIn, bidiControlProblem } from '../api-validate.ts';
import { bindingView, checkContract, ContractRegistry, type Contract } from '../../ingest/contracts.ts';
import { repeatedKeyPath } from '../../lsm/json-keys.ts';
import { NAME_PATTERN } from '../../ingest/envelope.ts';
import { DEAD_LETTERS_TABLE_NAME, deadLetterHeads, lettersOf, openFirst, wholeDeadLetters } from '../../ingest/dead-letters.ts';
import { DEAD_LETTER_REASONS } from '../../ingest/envelope.ts';
import { DEAD_LETTER_LIST_DEFAULT, DEAD_LETTER_LIST_MAX } from '../../ingest/ingestor.ts';
import { Catalog, localFileIO } from '../../lsm/index.ts';
import { guessablePin, guessablePinMessage, nameProblem, ROLES, UserError, UserStore, visibleName, type Role } from '../../inbox/users.ts';
import { DECISION_LOG_TABLE, readConfigChanges } from '../../inbox/index.ts';
import { jsonErrorWhere } from '../../lsm/errors.ts';
import { bindingConfigError, catalogOptions, checkConfigBindings, configBindings, siteTableDefinitions, checkStartRules, ConfigError, hqInDataProblem, DEFAULT_DATA_DIR, dataPaths, externalBrokerModules, LIVE_CONFIG_SECTIONS_TEXT, loadSiteRuleFiles, readConfig, type SiteConfig } from '../config.ts';
import { controlRequest, ControlError } from '../control.ts';
import { runSync, syncStatusLines, targetDescription, targetPlace, type SyncNowResult } from '../../sync/index.ts';
import { runRestore } from '../../sync/cli/sync.ts';
import { damageIn, isSqliteCorruption } from '../../sync/cli/common.ts';
import { runReplayCli } from '../../replay/cli.ts';
import { isTimeZone } from '../../replay/fixture.ts';
import { checkDataFormat, dataFormatPath, programDataFormat, raiseDataFormat } from '../data-format.ts';
import { dirname, join, resolve } from 'node:path';
import { runTableCli } from '../../lsm/cli/table-cli.ts';
import { checkTakeOverFlags, maxRounds, SYNC_FLAGS, syncNowFailure, syncNowLine, syncSubcommand, takeOverRunningSite, type SyncCommandOptions } from '../../sync/cli/sync.ts';
import { readModuleSecrets, runDemoModules } from '../demo/run.ts';
import { DEMO_HQ_DIR, demoYardMissing } from '../demo/site.ts';
import type { DemoModuleStats } from '../demo/module.ts';
import { dismissWithPin } from '../dismiss.ts';
import { initDataDir, InitError } from '../init.ts';
import { checkSiteTablesOnDisk, openIngest } from '../open-ingest.ts';
import { ModuleCredentials, modulePrincipal, openSiteDb, SITE_MODULES, siteMeta } from '../site-db.ts';
import { formatStatus, redactTarget, statusFromDirectory, withConfigSyncTarget, withOpenLetterGroups, type SiteStatus } from '../status.ts';
import { dataDir, DEMO_MAX_STEP_MS, DEMO_MIN_STEP_MS, existingDataDir, json, nextSignal, positiveInt, print, refuseExtraArguments, repeatedStopSignals, runningSocket, subcommand, type CliIO } from './common.ts';
import type { Rule, RuleFile } from '../../agents/index.ts';
import { ruleFileCode } from '../../agents/rule-files.ts';
import { LOADED_RULE_FILES_KEY, type LoadedRuleFilesRecord } from '../site.ts';

export const siteUsage = [
  '  tilstand init --data <dir> --site <id> [--admin <name> --pin <pin>]',
  '                                           make a new data directory (layout, seed contracts, credentials)',
  '  tilstand status [--data <dir>] [--json]  freshness of each table vs its budget, dead letters, broker, alarms',
  '  tilstand config check [--data <dir>] [--json]',
  '                                           check config.json as start reads it, and the files it names; --json: with the defaults filled in',
  `  tilstand config reload [--data <dir>]    a running site reads config.json again: ${LIVE_CONFIG_SECTIONS_TEXT} apply at once (also on SIGHUP)`,
  '  tilstand config changes [--data <dir>] [--limit <n>] [--json]',
  '                                           who changed which key from the floor UI (reorder points), newest first',
  '  tilstand contracts list [--data <dir>] [--json]   registered event contracts',
  '  tilstand contracts add --file <contract.json> [--data <dir>]',
  '  tilstand deadletters list [--data <dir>] [--status open|replayed|dismissed] [--topic <topic>] [--reason <reason>] [--limit <n>] [--json]',
  '                                           the open ones first (oldest first), then the closed ones newest first',
  '  tilstand deadletters replay [--data <dir>] [--id <position>… [--alike]]',
  '                                           every open letter, or those named; --alike: also every other open letter',
  '                                           from the same topic with the same reason; exit 3 when some still fail, 1 when',
  '                                           one named is not open',
  '  tilstand deadletters dismiss --id <position>… --user <name> --pin <pin> --note <why> [--alike] [--data <dir>]',
  '                                           close letters no replay can mend (shift lead or admin); kept, never replayed;',
  '                                           --alike: also every other open letter from the same topic with the same reason',
  '  tilstand users list [--data <dir>] [--json]',
  '  tilstand users add --name <name> --role viewer|operator|shift_lead|admin [--pin <pin>] [--password <pw>] [--badge <text>] [--data <dir>]',
  '  tilstand users disable --name <name> [--data <dir>]',
  '  tilstand users enable --name <name> [--data <dir>]   a disabled user may sign in again',
  '  tilstand users reset --name <name> --pin <pin> | --password <pw> [--data <dir>]',
  '                                           a new PIN or password for a user (one forgotten), and the lockout lifted',
  '  tilstand ingest resume [--data <dir>]   ingest that stopped on an error resumes now on the running site, not at its next try',
  '  tilstand modules list [--data <dir>]    the broker users of the site\'s modules (embedded broker)',
  '  tilstand modules password --module <name> [--data <dir>]',
  '                                           a new broker password for a module (a new module, one lost, or one to replace): printed once',
  '  tilstand demo --mqtt-url <url> [--data <dir>] [--seed <n>] [--step-ms <ms>]',
  '                                           run only the simulated modules against a broker',
];

const DATA: FlagSpecs = { data: { type: 'string', value: '<dir>' } };

/** The usage lines of a command (`config`: every `tilstand config …` line), each with the lines that continue it. */
function usageOf(command: string): string[] {
  const out: string[] = [];
  let taking = false;
  for (const l of siteUsage) {
    if (l.startsWith('  tilstand ')) taking = l.includes(`tilstand ${command} `) || l.endsWith(`tilstand ${command}`);
    if (taking) out.push(l);
  }
  return out;
}

/** The parsed flags, or undefined when the usage was asked for (and printed); no command here takes an argument. */
async function withHelp(argv: string[], specs: FlagSpecs, command: string, io: CliIO): Promise<ParsedArgs | undefined> {
  const a = parseArgs(argv, specs, command);
  if (a.help) {
    await print(io.stdout, ['usage:', ...usageOf(command.split(' ')[0]!)]);
    return undefined;
  }
  refuseExtraArguments(a, command);
  return a;
}

const JSON_FLAG: FlagSpecs = { json: { type: 'boolean' } };
const LIMIT: FlagSpecs = { limit: { type: 'string', value: '<n>' } };
const PIN: FlagSpecs = { pin: { type: 'string', value: '<pin>' } };
const ALIKE: FlagSpecs = { alike: { type: 'boolean' } };
const IDS: FlagSpecs = { id: { type: 'string', multiple: true, value: '<position>' } };
const NAME: FlagSpecs = { name: { type: 'string', value: '<name>' } };
const PASSWORD: FlagSpecs = { password: { type: 'string', value: '<pw>' } };

/**
 * The flags each subcommand of a group takes (its usage line). Only its own: one a sibling takes
 * (`users list --role admin`, `deadletters replay --note x`, `config check --limit 5`) is refused
 * naming it (exit 2) rather than ignored, since the person giving it expected it to do something.
 */
export const SITE_SUBCOMMAND_FLAGS = {
  config: { check: { ...DATA, ...JSON_FLAG }, reload: { ...DATA }, changes: { ...DATA, ...LIMIT, ...JSON_FLAG } },
  contracts: { list: { ...DATA, ...JSON_FLAG }, add: { ...DATA, file: { type: 'string', value: '<contract.json>' } } },
  deadletters: {
    list: { ...DATA, status: { type: 'string', value: 'open|replayed|dismissed' }, topic: { type: 'string', value: '<topic>' }, reason: { type: 'string', value: '<reason>' }, ...LIMIT, ...JSON_FLAG },
    replay: { ...DATA, ...IDS, ...ALIKE },
    dismiss: { ...DATA, ...IDS, user: { type: 'string', value: '<name>' }, ...PIN, note: { type: 'string', value: '<why>' }, ...ALIKE },
  },
  users: {
    list: { ...DATA, ...JSON_FLAG },
    add: { ...DATA, ...NAME, role: { type: 'string', value: '<role>' }, ...PIN, ...PASSWORD, badge: { type: 'string', value: '<text>' } },
    disable: { ...DATA, ...NAME },
    enable: { ...DATA, ...NAME },
    reset: { ...DATA, ...NAME, ...PIN, ...PASSWORD },
  },
  modules: { list: { ...DATA }, password: { ...DATA, module: { type: 'string', value: '<name>' } } },
  ingest: { resume: { ...DATA } },
} as const satisfies Record<string, Record<string, FlagSpecs>>;

/**
 * `withHelp` for a group's subcommand, against that subcommand's own flags (SITE_SUBCOMMAND_FLAGS),
 * named `<group> <sub>` in an unknown option's message. A missing or unknown subcommand is parsed
 * against all of the group's flags: `--help` still prints the group's usage, and the caller says
 * which subcommands there are.
 */
async function withSubHelp(group: keyof typeof SITE_SUBCOMMAND_FLAGS, sub: string | undefined, argv: string[], io: CliIO): Promise<ParsedArgs | undefined> {
  const table: Record<string, FlagSpecs> = SITE_SUBCOMMAND_FLAGS[group];
  const own = sub !== undefined && Object.hasOwn(table, sub) ? table[sub] : undefined;
  const a = parseArgs(argv, own ?? Object.assign({}, ...Object.values(table)), own ? `${group} ${sub}` : group);
  if (a.help) {
    await print(io.stdout, ['usage:', ...usageOf(group)]);
    return undefined;
  }
  // Named as before (`'users': unexpected argument …`): only the unknown option names the subcommand.
  refuseExtraArguments(a, group);
  return a;
}

/** A command group's subcommand and the rest of its arguments (common.ts `subcommand`, against every flag of the group). */
const groupSubcommand = (group: keyof typeof SITE_SUBCOMMAND_FLAGS, argv: string[]): [string | undefined, string[]] =>
  subcommand(argv, Object.assign({}, ...Object.values(SITE_SUBCOMMAND_FLAGS[group])) as FlagSpecs);

export async function runInit(argv: string[], io: CliIO): Promise<number> {
  const a = await withHelp(argv, { ...DATA, site: { type: 'string', value: '<id>' }, admin: { type: 'string', value: '<name>' }, pin: { type: 'string', value: '<pin>' } }, 'init', io);
  if (!a) return EXIT.ok;
  const admin = a.string('admin');
  const pin = a.string('pin');
  if ((admin === undefined) !== (pin === undefined)) throw new CliError(EXIT.usage, "options '--admin' and '--pin' go together");
  refuseGuessablePin(pin);
  try {
    const r = await initDataDir({ data: dataDir(a.string('data')), site: a.required('site'), ...(admin !== undefined ? { admin: { name: admin, pin: pin! } } : {}) });
    await print(io.stdout, [
      `initialized site ${r.config.site} in ${r.data}`,
      `  module broker passwords: ${r.secretsPath} (mode 0600; hand them to the module installers, then delete the file)`,
      ...(admin ? [`  admin user: ${admin}`] : r.admins.length > 0 ? [`  admin user: ${r.admins.join(', ')} (added by an earlier init of this directory that did not finish, with the PIN given then)`] : ['  no admin user yet: tilstand users add --role admin …']),
      `  start it: tilstand start --data ${r.data}`,
    ]);
    return EXIT.ok;
  } catch (e) {
    // A bad --site/--admin/--pin is named as the option it came in (`site id "": …` did not say which).
    if (e instanceof InitError) throw new CliError(e.kind === 'AlreadyExists' ? EXIT.conflict : EXIT.usage, e.input ? `option '--${e.input}': ${e.message}` : e.message);
    throw e;
  }
}

export async function runStatus(argv: string[], io: CliIO): Promise<number> {
  const a = await withHelp(argv, { ...DATA, json: { type: 'boolean' } }, 'status', io);
  if (!a) return EXIT.ok;
  const data = existingDataDir(a.string('data'));
  const socket = await runningSocket(data);
  let s: SiteStatus;
  if (socket) {
    // A running site shows the target it syncs to; config.json, read here once, may name another
    // by now. The open letters' groups are read here too (a stopped site's status has them).
    let config: SiteConfig | undefined;
    try {
      config = readConfig(data);
    } catch {
      config = undefined;
    }
    s = withOpenLetterGroups(withConfigSyncTarget((await controlRequest(socket, 'status')) as SiteStatus, config), data, config);
  } else s = statusFromDirectory(data);
  await print(io.stdout, a.boolean('json') ? [json(s)] : formatStatus(s));
  return EXIT.ok;
}

/**
 * `tilstand config check`: config.json read and validated as `start` reads it, and the files it
 * names (TLS certificates and keys, the external broker's password file) readable, and its rule
 * files (`agent.ruleFiles`) loaded and checked as the start loads them, so a changed config can
 * be checked before a reload or a restart. A problem names the key
 * (ConfigError, exit 2). `tilstand config reload`: the running site reads it again
 * (Site.reloadConfig: the agent, evidence, alarms, deadLetters and ui sections apply at once; the rest at the next start).
 */
export async function runConfig(argv: string[], io: CliIO): Promise<number> {
  const [sub, rest] = groupSubcommand('config', argv);
  const a = await withSubHelp('config', sub, rest, io);
  if (!a) return EXIT.ok;
  if (sub !== 'check' && sub !== 'reload' && sub !== 'changes') throw new CliError(EXIT.usage, `expected: tilstand config check|reload|changes [--data <dir>], got ${sub === undefined ? 'nothing' : `'${sub}'`}`);
  const data = existingDataDir(a.string('data'));
  if (sub === 'changes') {
    // The decision log's config_changed entries (Inbox.recordConfigChange), newest first.
    const config = readConfig(data);
    const p = dataPaths(data, config.site);
    const catalog = new Catalog(p.warehouse, catalogOptions(config));
    const id = { database: p.database!, table: DECISION_LOG_TABLE };
    const list = (catalog.tableExists(id) ? readConfigChanges(catalog.getTable(id)) : []).slice(0, positiveInt(a.string('limit'), 'limit', 1) ?? 100);
    const said = (v: unknown) => (v === null ? 'not set' : JSON.stringify(v));
    if (a.boolean('json')) await print(io.stdout, [json(list)]);
    else if (list.length === 0) await print(io.stdout, ['no changes made from the floor UI']);
    else await print(io.stdout, list.map((c) => `${new Date(c.atMs).toISOString()}  ${c.user}  ${c.key}: ${said(c.before)} → ${said(c.after)}`));
    return EXIT.ok;
  }
  if (sub === 'reload') {
    const socket = await runningSocket(data);
    if (!socket) throw new CliError(EXIT.notFound, `no site is running on ${data}: the next start reads config.json`);
    // Waited on as long as the site works on it: a reload loads and checks the rule files, which
    // on a busy site outlasted a fixed 10 s and was reported failed while the site applied it.
    const r = (await workOnSite(socket, 'config.reload', {}, io, RELOAD_WORK)) as { applied: string[]; restartNeeded: string[] };
    await print(io.stdout, [
      r.applied.length > 0 ? `applied: ${r.applied.join(', ')}` : `nothing to apply: ${LIVE_CONFIG_SECTIONS_TEXT} are as the site runs them`,
      ...(r.restartNeeded.length > 0 ? [`changed, and taking effect at the next start: ${r.restartNeeded.join(', ')}`] : []),
    ]);
    return EXIT.ok;
  }
  const config = readConfig(data);
  // What start refuses of the config as a whole (a non-loopback listener without TLS).
  checkStartRules(config);
  // An HQ directory in the data directory (also through a link), as start refuses it.
  const hqInData = config.hq.target === null ? undefined : hqInDataProblem(data, config.hq.target, DEMO_HQ_DIR);
  if (hqInData !== undefined) throw new ConfigError('hq.target', hqInData);
  // The bindings' paths against their contracts, as the Ingestor checks them at start.
  if (config.bindings !== 'seed') {
    const contracts = new ContractRegistry(dataPaths(data).contracts);
    checkConfigBindings(config.bindings, (name) => bindingView(contracts, name), siteTableDefinitions(config));
  }
  // A table of the site's own that exists already must still fit its definition, as start checks.
  let siteTables: ReturnType<typeof checkSiteTablesOnDisk>;
  try {
    siteTables = checkSiteTablesOnDisk(data, config);
  } catch (e) {
    throw bindingConfigError(config, e);
  }
  for (const [key, path] of configFiles(config)) {
    try {
      accessSync(path, fsConstants.R_OK);
    } catch (e) {
      throw new ConfigError(key, `${path} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  // The site's rule files loaded and checked as start loads them (a refusal names
  // agent.ruleFiles[<i>]): a file start would refuse is said before the restart.
  const ruleFiles = await loadSiteRuleFiles(config, data);
  const runningNow = ruleFiles.files.length > 0 ? await ruleFilesRunningNow(data) : new Set<string>();
  if (a.boolean('json')) {
    // With the defaults filled in, as the usage says: the modules an external broker's site reads
    // are the seed modules when config.json lists none (config.ts keeps them absent then).
    const b = config.broker;
    await print(io.stdout, [json(b.mode === 'external' ? { ...config, broker: { ...b, modules: externalBrokerModules(b) } } : config)]);
    return EXIT.ok;
  }
  const ag = config.agent;
  const own = Object.values(ag.reorderByItem).filter((p) => p.reorderPoint !== undefined).length;
  const atLocations = Object.values(ag.reorderByItem).reduce((n, p) => n + Object.keys(p.locations ?? {}).length, 0);
  const policies = [own > 0 ? `${own} item${own === 1 ? '' : 's'} with a policy of ${own === 1 ? 'its' : 'their'} own` : '', atLocations > 0 ? `${atLocations} item location${atLocations === 1 ? '' : 's'} with ${atLocations === 1 ? 'its' : 'their'} own` : ''];
  await print(io.stdout, [
    `config ok: ${dataPaths(data).config} (site ${config.site})`,
    `agent: every ${ag.intervalMs / 1000} s; reorder point ${ag.defaultReorder.reorderPoint}, up to ${ag.defaultReorder.orderUpTo}${policies.filter((x) => x !== '').map((x) => `; ${x}`).join('')}`,
    ...brokerLines(config),
    ...ruleFiles.files.map((f) => `${ruleFileLine(f, ruleFiles.rules)} (${runningNow.has(ruleFileCodeKey(f)) ? 'running now' : 'runs from the next start'})`),
    ...siteTableLines(config, siteTables),
    `a running site takes ${LIVE_CONFIG_SECTIONS_TEXT} with \`tilstand config reload\`${ruleFiles.files.length > 0 ? ' (but agent.ruleFiles at its next start)' : ''}; the other sections at its next start`,
  ]);
  return EXIT.ok;
}

/**
 * A rule file's path and code: the same key for the same code at the same place. Its SHA-256
 * covers the local files it imports (core/agents rule-files.ts `ruleFileHash`), as the site's
 * reload compares them (site.ts `codeOf`).
 */
function ruleFileCodeKey(f: { path: string; sha256: string }): string {
  return JSON.stringify([f.path, f.sha256]);
}

/**
 * The rule files (`ruleFileCodeKey`) a site running on `data` loaded at its start, asked over the
 * control socket as `status` does: a file whose code is still that one runs now, and `config check`
 * saying it "runs from the next start" sent an operator to restart for nothing. None when no site
 * runs or it does not answer (the check itself does not depend on it). A file with no rule of its
 * own is not among them (status names files by their rules).
 */
async function ruleFilesRunningNow(data: string): Promise<Set<string>> {
  try {
    const socket = await runningSocket(data);
    if (!socket) return new Set();
    const s = (await controlRequest(socket, 'status')) as SiteStatus;
    return new Set((s.agentRules ?? []).flatMap((r) => (r.file ? [ruleFileCodeKey(r.file)] : [])));
  } catch {
    return new Set();
  }
}

/**
 * A rule file as `config check` says it: its path, its rules at their versions, the SHA-256 of its
 * code (the first 12 digits; with the local files it imports, named as `tilstand status` does) and
 * the packages it imports (which a replay fixture does not carry).
 */
function ruleFileLine(f: RuleFile, rules: readonly Rule[]): string {
  const ids = f.rules.map((id) => `${id}@${rules.find((r) => r.id === id)?.version ?? '?'}`);
  const imports = f.imports?.length ? `; with ${f.imports.map((i) => i.path).join(', ')}` : '';
  const packages = f.packages?.length ? `; packages ${f.packages.join(', ')}` : '';
  return `rule file ${f.path}: ${ids.length > 0 ? ids.join(', ') : 'no rule of its own'}, sha256 ${f.sha256.slice(0, 12)}…${imports}${packages}`;
}

/**
 * `config check`'s word on the tables of the site's own: what the next start does to each (makes
 * it, adds columns, changes options or descriptions, nothing), and one no binding feeds (it would
 * show "no source" for good).
 */
function siteTableLines(c: SiteConfig, tables: ReturnType<typeof checkSiteTablesOnDisk>): string[] {
  const fed = new Set(configBindings(c).map((b) => b.table));
  return tables.map((t) => {
    const what = !t.exists ? 'made at the next start' : t.changes !== '' ? `the next start ${t.changes}` : 'on disk as defined';
    return [`table ${t.table} (the site's own): ${what}${fed.has(t.table) ? '' : '; no binding writes it'}`, ...t.warnings.map((w) => `warning: ${w}`)];
  }).flat();
}

/**
 * `config check`'s word on an external broker: which modules the site reads there. A module not
 * listed has no subscription and mosquitto drops its events (DESIGN.md, Lifecycle 4), so the IT
 * person adding one must see the list, and whether it is the default, without reading JSON.
 */
function brokerLines(c: SiteConfig): string[] {
  const b = c.broker;
  if (b.mode !== 'external') return [];
  const modules = externalBrokerModules(b);
  const given = b.modules !== undefined;
  return [
    `broker: external ${b.url} as ${b.username}; reads the events of ${modules.length} module${modules.length === 1 ? '' : 's'}: ${modules.join(', ')}` +
      (given ? ' (config broker.modules)' : ' (the default, the seed modules: config broker.modules lists others)') +
      '; a module not listed is not read',
  ];
}

/** The files a config names, by key (paths already resolved against the data directory). */
function configFiles(c: SiteConfig): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (c.broker.mode === 'embedded' && c.broker.tls) out.push(['broker.tls.certPath', c.broker.tls.certPath], ['broker.tls.keyPath', c.broker.tls.keyPath]);
  if (c.broker.mode === 'external') out.push(['broker.passwordFile', c.broker.passwordFile]);
  if (c.http.tls) out.push(['http.tls.certPath', c.http.tls.certPath], ['http.tls.keyPath', c.http.tls.keyPath]);
  return out;
}

export async function runContracts(argv: string[], io: CliIO): Promise<number> {
  const [sub, rest] = groupSubcommand('contracts', argv);
  const a = await withSubHelp('contracts', sub, rest, io);
  if (!a) return EXIT.ok;
  const data = existingDataDir(a.string('data'));
  // As `users`: a config.json that is not Tilstand's is refused before contracts/ is made there.
  readConfig(data);
  const socket = await runningSocket(data);
  if (sub === 'list') {
    const list = socket ? ((await controlRequest(socket, 'contracts.list')) as { name: string; versions: number[] }[]) : new ContractRegistry(dataPaths(data).contracts).list();
    await print(io.stdout, a.boolean('json') ? [json(list)] : list.map((c) => `${c.name}  v${c.versions.join(', v')}`));
    return EXIT.ok;
  }
  if (sub === 'add') {
    // An empty --file (an unset variable) would be read as the file '' and fail as ENOENT.
    const file = pathOption(a, 'file', 'a contract file') ?? a.required('file');
    let text: string;
    let contract: Contract;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new CliError(EXIT.usage, `cannot read a contract from ${file}: ${(e as Error).message}`);
    }
    try {
      contract = JSON.parse(text) as Contract;
    } catch (e) {
      throw new CliError(EXIT.usage, `cannot read a contract from ${file}: not valid JSON: ${jsonErrorWhere(text, e)}`);
    }
    const twice = repeatedKeyPath(text);
    if (twice !== undefined) throw new CliError(EXIT.usage, `${file} is not a valid contract: '${twice}' is given twice; expected each key once (JSON would keep only the last)`);
    // A malformed contract is bad input (exit 2), said before the registry is asked: its refusals
    // are of what the site already holds (a version taken, a gap, an incompatible change), exit 3.
    try {
      if (contract === null || typeof contract !== 'object' || Array.isArray(contract)) throw new Error('expected a JSON object (name, version, fields, …)');
      checkContract(contract);
    } catch (e) {
      throw new CliError(EXIT.usage, `${file} is not a valid contract: ${(e as Error).message}`);
    }
    try {
      const c = socket ? ((await controlRequest(socket, 'contracts.add', { contract })) as Contract) : new ContractRegistry(dataPaths(data).contracts).register(contract);
      await print(io.stdout, [`registered contract ${c.name} v${c.version}${socket ? ' (in the running site)' : ''}`]);
    } catch (e) {
      throw new CliError(EXIT.conflict, (e as Error).message);
    }
    return EXIT.ok;
  }
  throw new CliError(EXIT.usage, `expected 'tilstand contracts list' or 'tilstand contracts add', got ${sub === undefined ? 'nothing' : `'${sub}'`}`);
}

interface LetterView {
  position: string;
  status: string;
  reason: string;
  detail: string;
  topic: string;
  receivedAtMs: number;
  dismissed?: { atMs: number; by: string; note: string } | null;
}

export async function runDeadLetters(argv: string[], io: CliIO): Promise<number> {
  const [sub, rest] = groupSubcommand('deadletters', argv);
  const a = await withSubHelp('deadletters', sub, rest, io);
  if (!a) return EXIT.ok;
  const data = existingDataDir(a.string('data'));
  const socket = await runningSocket(data);
  if (sub === 'list') {
    const status = a.string('status');
    if (status !== undefined && status !== 'open' && status !== 'replayed' && status !== 'dismissed') throw new CliError(EXIT.usage, `option '--status': expected open, replayed or dismissed, got '${status}'`);
    const limit = positiveInt(a.string('limit'), 'limit', 1, DEAD_LETTER_LIST_MAX) ?? DEAD_LETTER_LIST_DEFAULT;
    // One group of those `tilstand status` lists (topic and reason as it prints them).
    const topic = a.string('topic');
    const reason = a.string('reason');
    if (reason !== undefined && !(DEAD_LETTER_REASONS as readonly string[]).includes(reason)) throw new CliError(EXIT.usage, `option '--reason': expected one of ${DEAD_LETTER_REASONS.join(', ')}, got '${reason}'`);
    const group = { ...(topic !== undefined ? { topic } : {}), ...(reason !== undefined ? { reason } : {}) };
    let letters: LetterView[];
    if (socket) letters = (await controlRequest(socket, 'deadletters.list', { limit, ...(status ? { status } : {}), ...group })) as LetterView[];
    else {
      const config = readConfig(data);
      const p = dataPaths(data, config.site);
      const catalog = new Catalog(p.warehouse, catalogOptions(config));
      const id = { database: p.database!, table: DEAD_LETTERS_TABLE_NAME };
      letters = [];
      if (catalog.tableExists(id)) {
        const t = catalog.getTable(id);
        const heads = lettersOf(deadLetterHeads(t, topic !== undefined || reason !== undefined ? ['topic', 'reason'] : []), group);
        const chosen = status ? heads.filter((d) => d.status === status).slice(0, limit) : openFirst(heads, limit);
        letters = wholeDeadLetters(
          t,
          chosen.map((h) => h.position),
        ).map((d) => ({ ...d, position: d.position.toString(), payload: d.payload.toString('utf8').slice(0, 2000) }));
      }
    }
    if (a.boolean('json')) await print(io.stdout, [json(letters)]);
    else if (letters.length === 0) await print(io.stdout, ['no dead letters']);
    else await print(io.stdout, letters.map((d) => `${d.position}  ${d.status}  ${d.reason}  ${d.topic}  ${d.detail}${d.dismissed ? `  — dismissed by ${d.dismissed.by} ${new Date(d.dismissed.atMs).toISOString()}: ${d.dismissed.note}` : ''}`));
    return EXIT.ok;
  }
  if (sub === 'dismiss') {
    const ids = a.strings('id');
    if (ids.length === 0) throw new CliError(EXIT.usage, "option '--id': name the dead letters to dismiss (one --id <position> each; 'tilstand deadletters list' shows them)");
    for (const i of ids) if (!/^\d+$/.test(i)) throw new CliError(EXIT.usage, `option '--id': expected a journal position (a whole number), got '${i}'`);
    const req = { ids, user: a.required('user'), pin: a.required('pin'), note: a.required('note'), alike: a.boolean('alike') };
    const bidi = bidiControlIn(req.note);
    if (bidi !== undefined) throw new CliError(EXIT.usage, `option '--note': ${bidiControlProblem(bidi)}`);
    let r: { dismissed: number; notOpen: string[]; by: string; alike: number };
    try {
      if (socket) r = (await workOnSite(socket, 'deadletters.dismiss', req, io, DISMISS_WORK)) as typeof r;
      else {
        const ingest = openIngest(data, readConfig(data));
        const db = openSiteDb(dataPaths(data).siteDb);
        try {
          r = await dismissWithPin(new UserStore(db), ingest.ingestor, { ...req, ids: ids.map((i) => BigInt(i)) });
        } finally {
          db.close();
          ingest.ingestor.close();
          ingest.journal.close();
        }
      }
    } catch (e) {
      const kind = (e as { kind?: string }).kind;
      if (kind === 'Refused') throw new CliError(EXIT.conflict, (e as Error).message);
      if (kind === 'InvalidArgument') throw new CliError(EXIT.usage, (e as Error).message);
      throw e;
    }
    await print(io.stdout, [`dismissed ${r.dismissed} as ${r.by}${req.alike ? ` (${r.alike} of them alike: open, from the same topic with the same reason)` : ''}`]);
    if (r.notOpen.length > 0) await print(io.stderr, r.notOpen.map((p) => `tilstand: no open dead letter at position ${p} (replayed or dismissed already, or not a dead letter; see 'tilstand deadletters list')`));
    return r.notOpen.length > 0 ? EXIT.notFound : EXIT.ok;
  }
  if (sub === 'replay') {
    const ids = a.strings('id');
    for (const i of ids) if (!/^\d+$/.test(i)) throw new CliError(EXIT.usage, `option '--id': expected a journal position (a whole number), got '${i}'`);
    const alike = a.boolean('alike');
    if (alike && ids.length === 0) throw new CliError(EXIT.usage, "option '--alike': name the letters the others are to be like with --id <position>");
    let r: { replayed: number; failed: number; notOpen?: string[]; alike?: number; startPending?: string[] };
    if (socket) r = (await workOnSite(socket, 'deadletters.replay', ids.length > 0 ? { ids, ...(alike ? { alike } : {}) } : {}, io, REPLAY_WORK)) as typeof r;
    else {
      const ingest = openIngest(data, readConfig(data));
      try {
        r = await ingest.ingestor.replayDeadLetters(ids.length > 0 ? ids.map((i) => BigInt(i)) : undefined, { alike });
      } finally {
        ingest.ingestor.close();
        ingest.journal.close();
      }
    }
    await print(io.stdout, [`replayed ${r.replayed}, still failing ${r.failed}${alike ? ` (${r.alike ?? 0} of them alike: open, from the same topic with the same reason)` : ''}`]);
    const notOpen = r.notOpen ?? [];
    if (notOpen.length > 0) await print(io.stderr, notOpen.map((p) => `tilstand: no open dead letter at position ${p} (replayed or dismissed already, or not a dead letter; see 'tilstand deadletters list')`));
    // The running site replays with the bindings and tables it started with.
    const pending = r.startPending ?? [];
    if (pending.length > 0) {
      await print(io.stderr, [`tilstand: config.json's ${pending.join(' and ')} changed since the site started and take effect at its next start; restart it, then replay again: the letters that still fail may be the ones they are for`]);
    }
    return r.failed > 0 ? EXIT.conflict : notOpen.length > 0 ? EXIT.notFound : EXIT.ok;
  }
  throw new CliError(EXIT.usage, `expected 'tilstand deadletters list|replay|dismiss', got ${sub === undefined ? 'nothing' : `'${sub}'`}`);
}

/**
 * How often the site tells a waiting `deadletters replay` or `dismiss` it is still at it, and how
 * long a silence ends the wait.
 */
export const REPLAY_HEARTBEAT_MS = 1_000;
export const REPLAY_SILENCE_MS = 30_000;
/** How often the CLI says on stderr that the replay (or dismissal) is still going on. */
export const REPLAY_PROGRESS_EVERY_MS = 10_000;

/** What `workOnSite` says: the work going on, and what is known when no answer came. */
interface SiteWork {
  readonly doing: string;
  readonly unknown: string;
}
const REPLAY_WORK: SiteWork = { doing: 'replaying dead letters', unknown: "the replay's outcome is unknown: letters it committed stay replayed, see 'tilstand deadletters list'" };
const DISMISS_WORK: SiteWork = { doing: 'dismissing dead letters', unknown: "the dismissal's outcome is unknown: letters it committed stay dismissed, see 'tilstand deadletters list'" };
const RELOAD_WORK: SiteWork = { doing: 'reloading config.json', unknown: "the reload's outcome is unknown: the site's log (logs/site.log) says 'config reloaded' or 'config not reloaded'" };

/**
 * A dead-letter op (`deadletters.replay`, `deadletters.dismiss`) or a config reload on a running
 * site, waiting as long as the site works on it (heartbeats): the first two go through a flood's
 * letters in slices, and with a fixed 10 s deadline one was reported failed while the site went on
 * and finished it. A site that is gone (the connection closes) or silent for REPLAY_SILENCE_MS is
 * an error that says what is known: slices committed before stay done.
 */
async function workOnSite(socket: string, op: string, args: Record<string, unknown>, io: CliIO, work: SiteWork): Promise<unknown> {
  let said = 0;
  try {
    return await controlRequest(socket, op, args, REPLAY_SILENCE_MS, {
      heartbeatMs: REPLAY_HEARTBEAT_MS,
      onWorking: (ms, progress) => {
        if (ms - said < REPLAY_PROGRESS_EVERY_MS) return;
        said = ms;
        io.stderr.write(`tilstand: the site is still ${work.doing} (${Math.round(ms / 1000)} s${progressText(progress)})…\n`);
      },
    });
  } catch (e) {
    // Not a refusal of the site's (those say what failed): the request went out and no answer came.
    if (e instanceof ControlError && (e.kind === 'Timeout' || e.kind === 'Disconnected')) {
      throw new ControlError(e.kind, `${e.message}; ${work.unknown}`);
    }
    throw e;
  }
}

/**
 * A replay's counts as its heartbeats carry them (core/ingest `ReplayProgress`): `; 20000 of
 * 200000 letters, 12 still failing`. Nothing from a site that sends none (an older one, a dismissal).
 */
export function progressText(p: Record<string, unknown> | undefined): string {
  const count = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);
  const done = count(p?.done);
  const total = count(p?.total);
  if (done === undefined || total === undefined) return '';
  const failed = count(p?.failed) ?? 0;
  return `; ${done} of ${total} letter${total === 1 ? '' : 's'}${failed > 0 ? `, ${failed} still failing` : ''}`;
}

/** `--pin` as a person chose it: one a colleague would try first is refused (inbox users.ts). */
function refuseGuessablePin(pin: string | undefined): void {
  const why = pin === undefined ? undefined : guessablePin(pin);
  if (why) throw new CliError(EXIT.usage, `option '--pin': ${guessablePinMessage(pin!, why)}`);
}

/**
 * The user store's refusal of a secret given as an option, named as that option (`option
 * '--password': password: expected 8 to 256 characters`), as `init` names its own: the store's
 * words say the rule but not which option to fix. Any other refusal (a name, no secret at all) as
 * the store says it.
 */
function userRefusalMessage(e: unknown, a: ParsedArgs): string {
  const field = e instanceof UserError ? e.field : undefined;
  const given = (field === 'pin' || field === 'password' || field === 'badge') && a.string(field) !== undefined;
  return given ? `option '--${field}': ${(e as Error).message}` : (e as Error).message;
}

/**
 * For `users list`: a name an older version took that a new user could not have ("anna\u200B"
 * looks like "anna"), shown with its invisible characters and odd spaces as <U+XXXX>, so an admin
 * can tell it from the user it looks like. The user keeps it and signs in with it (inbox users.ts).
 */
function oddName(name: string): string {
  const problem = nameProblem(name);
  return problem === undefined ? '' : `  (name ${JSON.stringify(visibleName(name))}: ${problem}; kept for this user, refused for a new one)`;
}

export async function runUsers(argv: string[], io: CliIO): Promise<number> {
  const [sub, rest] = groupSubcommand('users', argv);
  const a = await withSubHelp('users', sub, rest, io);
  if (!a) return EXIT.ok;
  const data = existingDataDir(a.string('data'));
  // config.json read as every other command reads it: one that is not Tilstand's (another
  // program's folder) is refused (ConfigError, exit 2) before site.db and the mark are made there.
  readConfig(data);
  const siteDb = dataPaths(data).siteDb;
  const db = openDamageNamed(siteDb);
  try {
    const users = new UserStore(db);
    if (sub === 'list') {
      const list = users.list();
      if (a.boolean('json')) await print(io.stdout, [json(list)]);
      else if (list.length === 0) await print(io.stdout, ['no users']);
      else {
        await print(
          io.stdout,
          list.map((u) => `${u.name}  ${u.role}${u.disabled ? '  DISABLED' : ''}${u.lockedUntilMs ? `  locked until ${new Date(u.lockedUntilMs).toISOString()}` : ''}  sign-in: ${[u.hasPin && 'pin', u.hasPassword && 'password', u.hasBadge && 'badge'].filter(Boolean).join(', ')}${oddName(u.name)}`),
        );
      }
      return EXIT.ok;
    }
    if (sub === 'add') {
      const role = a.required('role');
      if (!(ROLES as readonly string[]).includes(role)) throw new CliError(EXIT.usage, `option '--role': expected one of ${ROLES.join(', ')}, got '${role}'`);
      const pin = a.string('pin');
      refuseGuessablePin(pin);
      const password = a.string('password');
      const badge = a.string('badge');
      try {
        const u = await users.add({ name: a.required('name'), role: role as Role, ...(pin !== undefined ? { pin } : {}), ...(password !== undefined ? { password } : {}), ...(badge !== undefined ? { badge } : {}) });
        await print(io.stdout, [`added user ${u.name} (${u.role})`]);
      } catch (e) {
        const kind = (e as { kind?: string }).kind;
        throw new CliError(kind === 'AlreadyExists' ? EXIT.conflict : EXIT.usage, userRefusalMessage(e, a));
      }
      return EXIT.ok;
    }
    if (sub === 'reset') {
      const name = a.required('name');
      const pin = a.string('pin');
      const password = a.string('password');
      if ((pin === undefined) === (password === undefined)) throw new CliError(EXIT.usage, "users reset: give exactly one of '--pin' or '--password'");
      refuseGuessablePin(pin);
      try {
        const u = await users.resetSecret(name, pin !== undefined ? { pin } : { password: password! });
        await print(io.stdout, [`new ${pin !== undefined ? 'PIN' : 'password'} set for ${u.name}${u.disabled ? ' (the user is disabled: tilstand users enable)' : ''}; it replaces their ${pin !== undefined ? 'password' : 'PIN'}, if they had one; a lockout is lifted`]);
      } catch (e) {
        const kind = (e as { kind?: string }).kind;
        throw new CliError(kind === 'NotFound' ? EXIT.notFound : EXIT.usage, userRefusalMessage(e, a));
      }
      return EXIT.ok;
    }
    if (sub === 'disable' || sub === 'enable') {
      try {
        const u = sub === 'disable' ? users.disable(a.required('name')) : users.enable(a.required('name'));
        await print(io.stdout, [`${sub}d user ${u.name}`]);
      } catch (e) {
        if ((e as { kind?: string }).kind === 'NotFound') throw new CliError(EXIT.notFound, (e as Error).message);
        throw e;
      }
      return EXIT.ok;
    }
    throw new CliError(EXIT.usage, `expected 'tilstand users list|add|disable|enable|reset', got ${sub === undefined ? 'nothing' : `'${sub}'`}`);
  } catch (e) {
    throw damageIn(siteDb, e);
  } finally {
    db.close();
  }
}

/**
 * `modules list|password`: the embedded broker's module users (site.db `broker_credentials`, scrypt
 * hashes only). `password` makes a new random password, stores its hash and prints it once; a
 * secrets/modules.json still there (a demo site's modules read it) gets it too. A running site's
 * broker checks each CONNECT against site.db, so the module's next connection needs the new one;
 * its current connection stays. With an external broker the passwords are the broker's own.
 */
export async function runModules(argv: string[], io: CliIO): Promise<number> {
  const [sub, rest] = groupSubcommand('modules', argv);
  const a = await withSubHelp('modules', sub, rest, io);
  if (!a) return EXIT.ok;
  if (sub !== 'list' && sub !== 'password') throw new CliError(EXIT.usage, `expected 'tilstand modules list|password', got ${sub === undefined ? 'nothing' : `'${sub}'`}`);
  const data = existingDataDir(a.string('data'));
  const config = readConfig(data);
  if (config.broker.mode !== 'embedded') {
    throw new CliError(EXIT.usage, `this site uses an external broker (config broker.mode '${config.broker.mode}'): the modules' passwords are that broker's (for mosquitto: mosquitto_passwd -b <its password file> <module> <password>, then reload mosquitto)`);
  }
  const p = dataPaths(data);
  const db = openDamageNamed(p.siteDb);
  try {
    const creds = new ModuleCredentials(db);
    if (sub === 'list') {
      const modules = creds.principals().filter((x) => x.kind === 'module');
      await print(io.stdout, modules.length === 0 ? ['no module users'] : modules.map((x) => `${x.name}  password set ${new Date(x.setAtMs).toISOString()}`));
      return EXIT.ok;
    }
    // sub === 'password'
    const module = a.required('module');
    // Any module the site adds gets a user, not only the seed ones: a new module (a yard system, a
    // QC station) had no way to connect at all. Its name is the topic level and source.module of
    // its events (core/ingest/CONTRACTS.md), so it must be one; the site's own users are not.
    if (!NAME_PATTERN.test(module)) throw new CliError(EXIT.usage, `option '--module': expected a module name ([A-Za-z0-9][A-Za-z0-9_-]{0,63}, the <module> level of its topics), got ${JSON.stringify(module)}`);
    if (RESERVED_USERS.includes(module)) throw new CliError(EXIT.usage, `option '--module': '${module}' is the site's own broker user, not a module; expected a module name such as ${SITE_MODULES.join(', ')} or one of your own`);
    const known = creds.principals().some((x) => x.name === module);
    const password = randomBytes(18).toString('base64url');
    await creds.set(modulePrincipal(module), password);
    const lines = [`new broker password for module ${module} (user '${module}'): ${password}`];
    if (!known) lines.push(`  '${module}' is a new module user: it may publish on tilstand/<site>/events/${module}/<stream> and tilstand/<site>/acks/${module}, and subscribe to tilstand/<site>/commands/${module} and tilstand/<site>/resync/${module} (docs/modules.md)`);
    if (existsSync(p.moduleSecrets)) {
      updateModuleSecret(p.moduleSecrets, module, password);
      lines.push(`  also written to ${p.moduleSecrets} (delete it once the module has its password)`);
    }
    if (known) lines.push(`  the module's next connection needs it (with the old one it is refused: the module_refused alarm); a connection open now stays until it ends`);
    await print(io.stdout, lines);
    return EXIT.ok;
  } catch (e) {
    throw damageIn(p.siteDb, e);
  } finally {
    db.close();
  }
}

/**
 * site.db opened for a command that reads or changes it; one that is not SQLite's at all fails
 * here (its journal mode set), and is said to be site.db: SQLite's own words name no file.
 */
function openDamageNamed(path: string): ReturnType<typeof openSiteDb> {
  try {
    return openSiteDb(path);
  } catch (e) {
    throw damageIn(path, e);
  }
}

/** Broker users that are the site's own (site-db.ts principal kinds), never a module's. */
const RESERVED_USERS: readonly string[] = ['tilstand', 'admin'];

/** Sets one module's password in secrets/modules.json, replacing the file whole (mode 0600). */
function updateModuleSecret(path: string, module: string, password: string): void {
  let secrets;
  try {
    secrets = readModuleSecrets(path);
  } catch (e) {
    throw new CliError(EXIT.corruption, `${(e as Error).message}; the new password is stored, but ${path} was left as it is: repair or delete it`);
  }
  secrets.modules[module] = { username: module, password };
  // core/lsm's atomic replace (temporary file, fsync, rename, fsync of the folder); it makes the
  // file 0644, inside secrets/ (0700, `tilstand init`), and it is 0600 again at once.
  localFileIO.replaceAtomic(path, Buffer.from(`${JSON.stringify(secrets, null, 2)}\n`));
  chmodSync(path, 0o600);
}

/**
 * `tilstand ingest resume`: the running site resumes ingest that stopped on an error now (Site
 * `ingest.resume`; core/site/DESIGN.md, "Ingest that stopped"), after the cause was fixed — also
 * after a damaged file, which the site does not retry by itself. Ingest that runs: said, exit 0.
 */
export async function runIngest(argv: string[], io: CliIO): Promise<number> {
  const [sub, rest] = groupSubcommand('ingest', argv);
  const a = await withSubHelp('ingest', sub, rest, io);
  if (!a) return EXIT.ok;
  if (sub !== 'resume') throw new CliError(EXIT.usage, `expected: tilstand ingest resume [--data <dir>], got ${sub === undefined ? 'nothing' : `'${sub}'`}`);
  const data = existingDataDir(a.string('data'));
  const socket = await runningSocket(data);
  if (!socket) throw new CliError(EXIT.notFound, `no site is running on ${data}: a start opens ingest afresh, reading the journal`);
  try {
    await controlRequest(socket, 'ingest.resume');
  } catch (e) {
    if (e instanceof ControlError && (e.kind as string) === 'Conflict') {
      await print(io.stdout, [e.message]);
      return EXIT.ok;
    }
    throw e;
  }
  await print(io.stdout, [`ingest resumed on the site running on ${data}: the events journaled meanwhile are applied`]);
  return EXIT.ok;
}

export async function runDemo(argv: string[], io: CliIO): Promise<number> {
  const a = await withHelp(argv, { ...DATA, 'mqtt-url': { type: 'string', value: '<url>' }, seed: { type: 'string', value: '<n>' }, 'step-ms': { type: 'string', value: '<ms>' } }, 'demo', io);
  if (!a) return EXIT.ok;
  const url = a.required('mqtt-url');
  if (!/^mqtts?:\/\/[^/]+/.test(url)) throw new CliError(EXIT.usage, `option '--mqtt-url': expected mqtt://host:port, got '${url}'`);
  const seed = positiveInt(a.string('seed'), 'seed');
  const stepMs = positiveInt(a.string('step-ms'), 'step-ms', DEMO_MIN_STEP_MS, DEMO_MAX_STEP_MS);
  const data = dataDir(a.string('data'));
  // The mark first, as every command that opens a directory (data-format.ts): the modules keep
  // their outboxes and state under <data>/demo/ and a newer program may have changed those, or
  // secrets/modules.json, in ways this one misreads.
  checkDataFormat(data);
  const p = dataPaths(data);
  let secrets;
  try {
    secrets = readModuleSecrets(p.moduleSecrets);
  } catch (e) {
    throw new CliError(EXIT.notFound, (e as Error).message);
  }
  // The yard module only where config.json defines yard_doors and binds it (demo/site.ts
  // `demoYardMissing`): elsewhere the site would dead-letter every event it sends. A config.json
  // that cannot be read does not stop the seed modules.
  let noYard: string | undefined;
  try {
    noYard = demoYardMissing(readConfig(data), secrets.modules, p.moduleSecrets);
  } catch (e) {
    noYard = `config.json cannot be read: ${(e as Error).message}`;
  }
  const signal = nextSignal();
  // A second Ctrl-C (npm forwards one of its own) does not cut the modules' stop short.
  const again = repeatedStopSignals(io);
  try {
    const demo = runDemoModules({
      url,
      site: secrets.site,
      credentials: secrets.modules,
      outboxDir: p.demo,
      yard: noYard === undefined,
      ...(seed !== undefined ? { seed } : {}),
      ...(stepMs !== undefined ? { stepMs } : {}),
      onWarning: (m) => io.stderr.write(`tilstand demo: ${m}\n`),
    });
    await print(io.stdout, [
      `tilstand demo: modules of site ${secrets.site} publishing to ${url}; stop with Ctrl-C`,
      ...(noYard === undefined ? [] : [`tilstand demo: the yard module does not run here (${noYard}); a new demo directory has it`]),
    ]);
    const s = await signal;
    await demo.stop();
    await print(io.stdout, [`tilstand demo: received ${s}; stopped`, ...demo.stats().map(demoStatsLine)]);
    return EXIT.ok;
  } finally {
    signal.cancel();
    again.close();
  }
}

/** One demo module's counts as `tilstand demo` ends: `  operations: 40/41 acknowledged, 1 command`. */
export function demoStatsLine(x: DemoModuleStats): string {
  return `  ${x.module}: ${x.acked}/${x.published} acknowledged, ${x.commands} command${x.commands === 1 ? '' : 's'}`;
}

/** How long `sync now` waits for a running site's answer (its rounds are bounded by --max-rounds). */
const SYNC_NOW_TIMEOUT_MS = 30 * 60_000;

/**
 * `tilstand sync …` (core/sync/cli/sync.ts), except `sync now` on a directory whose site is
 * running and syncing: that site's engine holds the sender lock, so the site is asked to sync now
 * (control op `sync.now`) instead of a second engine being refused. A running site without an HQ
 * target leaves the lock free: the command then syncs the directory itself, as with no site.
 */
export async function runSiteSync(argv: string[], io: CliIO): Promise<number> {
  // The command may follow the flags (`sync --data X now`), as core/sync finds it.
  const [sub, rest] = syncSubcommand(argv);
  // config.json read as every site command reads it: another program's is refused (exit 2) before site.db is made.
  // A demo's hq.target is its <data>/demo-hq (DESIGN.md, the data directory's layout): the one HQ inside it `sync now` takes.
  const opts: SyncCommandOptions = { dataFormat: programDataFormat(), checkConfig: (d) => void readConfig(d), hqFolderInData: DEMO_HQ_DIR };
  if (sub !== 'now') {
    // `sync status` reads the outbox, whose meaning a newer format may have changed.
    if (sub === 'status') gateDataFlag(rest, DEFAULT_DATA_DIR);
    return runSync(argv, io, opts);
  }
  const a = parseArgs(rest, SYNC_FLAGS['sync now'], 'sync now');
  if (a.help) return runSync(['help'], io);
  refuseExtraArguments(a, 'sync now');
  checkTakeOverFlags(a);
  const rounds = maxRounds(a.string('max-rounds'));
  const data = dataDir(a.string('data'));
  checkDataFormat(data);
  const socket = await runningSocket(data);
  if (!socket) return runSync(argv, io, opts);
  const hq = a.string('hq');
  let place: string | undefined;
  try {
    place = hq === undefined ? undefined : targetPlace(hq);
  } catch (e) {
    throw new CliError(EXIT.usage, `option '--hq': ${(e as Error).message}`);
  }
  const takeOver = a.boolean('take-over');
  const keys = (['access-key', 'secret-key'] as const).filter((k) => a.string(k) !== undefined).map((k) => `'--${k}'`);
  // A site that syncs does so with its own configuration (DESIGN.md, "Control socket protocol"):
  // what a flag here would change is checked against it before anything is asked or written.
  // A site that syncs nowhere answers `sync.now` NotConfigured, and the command syncs itself, with every flag.
  const running = keys.length > 0 || takeOver ? ((await controlRequest(socket, 'status')) as SiteStatus) : undefined;
  if (running?.sync) {
    if (keys.length > 0 && !takeOver) throw new CliError(EXIT.usage, keysBesideRunningSite(data, running, keys));
    if (takeOver) takeOverTargetCheck(data, running, place);
  }
  // The running site's engine holds the sender lock: the marker is written from here with its
  // sender id, and the engine reads it before its next step (core/sync/DESIGN.md, "One sender per site at HQ").
  const tookOver = takeOver ? await takeOverRunningSite(data, a) : undefined;
  // `refused` (HQ's sender marker names another data directory) is absent from an older site's answer.
  let r: SyncNowResult & { refused?: boolean };
  try {
    r = (await controlRequest(socket, 'sync.now', { maxRounds: rounds, ...(place === undefined ? {} : { hq: place }) }, SYNC_NOW_TIMEOUT_MS)) as SyncNowResult & { refused?: boolean };
  } catch (e) {
    if (e instanceof ControlError && e.kind === 'NotConfigured') return runSync(argv, io, opts);
    throw e;
  }
  if (a.boolean('json')) await print(io.stdout, [JSON.stringify(r.status)]);
  else await print(io.stdout, [...(tookOver === undefined ? [] : [tookOver]), `${syncNowLine(r)} (by the site running on ${data})`, ...syncStatusLines(r.status)]);
  // Keys given with --take-over reached HQ for the marker alone: the site sent with its own.
  if (keys.length > 0) {
    await print(io.stderr, [`tilstand: ${keys.join(', ')} ${tookOver === undefined ? 'were not used' : "wrote HQ's sender marker"}; the site running on ${data} syncs with the S3 keys of its own environment (docs/operations.md, "Connecting to headquarters")`]);
  }
  // As `sync now` with no site running: refused by HQ's sender marker is exit 3, not 5 (steps
  // pending), and a failing exit says why on stderr in the same words.
  const failed = syncNowFailure(readConfig(data).site, r.status, r.rounds, r.refused === true);
  if (failed === undefined) return EXIT.ok;
  await print(io.stderr, [failed.note]);
  return failed.code;
}

/**
 * `sync now --access-key/--secret-key` beside a site that syncs: the command only asks the site to
 * sync, and the site syncs with its own target and the keys of its own environment, so the keys
 * typed would not be used (they were dropped without a word while the person believed them used).
 * Never names the keys themselves.
 */
function keysBesideRunningSite(data: string, s: SiteStatus, keys: string[]): string {
  const one = keys.length === 1;
  const flags = `option ${keys.join(', ')}: `;
  const unused = `and \`sync now\` only asks it to sync, so ${one ? 'it' : 'they'} would not be used`;
  const desc = s.syncDescription;
  if (desc?.startsWith('dir:') === true) {
    return `${flags}the site running on ${data} syncs to the directory ${desc.slice('dir:'.length)}, which takes no S3 keys (it is written with the site's file permissions), ${unused}; leave ${one ? 'it' : 'them'} out`;
  }
  return (
    `${flags}the site running on ${data} syncs to ${s.sync!.target} with the S3 keys of its own environment (TILSTAND_HQ_ACCESS_KEY and TILSTAND_HQ_SECRET_KEY as it was started), ${unused}; ` +
    `leave ${one ? 'it' : 'them'} out, give the site its keys in its environment and restart it (docs/operations.md, "Connecting to headquarters"), or stop the site and run \`sync now\` with ${one ? 'it' : 'them'}`
  );
}

/**
 * `sync now --take-over` beside a site that syncs writes HQ's sender marker from the command, at
 * HQ as the command finds it (`--hq`, else config.json's `hq.target`): refused (exit 2) before the
 * write when that is not where the site syncs — the site refused a foreign `--hq` only after the
 * marker had been written there, and a site started with `--hq` would still be refused at its own
 * HQ. Compared as `tilstand status` compares them (`targetDescription`); an older site that gives
 * no `syncDescription` is not checked.
 */
function takeOverTargetCheck(data: string, s: SiteStatus, place: string | undefined): void {
  const site = s.syncDescription;
  if (site === undefined || site === null) return;
  if (place !== undefined) {
    if (targetDescription(place) !== site) throw new CliError(EXIT.usage, `option '--hq': the site running on ${data} syncs to ${s.sync!.target}, not ${redactTarget(place)}; --take-over writes HQ's sender marker where the site syncs: leave out --hq, or stop the site first`);
    return;
  }
  const configured = readConfig(data).hq.target;
  if (configured !== null && targetDescription(configured) !== site) {
    throw new CliError(
      EXIT.usage,
      `--take-over: the site running on ${data} syncs to ${s.sync!.target} (given with --hq at its start, or config.json edited since), not to config.json's hq.target ${redactTarget(configured)}, where the take-over would write HQ's sender marker; give --hq with the site's target, or stop the site first`,
    );
  }
}

/**
 * The value of `--data` (or another path flag: `--warehouse`) in a command's arguments as core/lsm's
 * parser reads it (`--data <dir>` or `--data=<dir>`; a value that starts with `--` needs the `=`
 * form), or `fallback`; undefined when the usage is asked for or the value is empty (the command
 * then says what it expects).
 */
function dataFlagOf(argv: readonly string[], fallback?: string, flag = 'data'): string | undefined {
  if (argv.some((x) => x === '--help' || x === '-h')) return undefined;
  let v: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i]!;
    if (x === '--') break;
    if (x.startsWith(`--${flag}=`)) v = x.slice(`--${flag}=`.length);
    else if (x === `--${flag}` && argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) v = argv[i + 1];
  }
  if (v !== undefined && v.trim() === '') return undefined;
  return v ?? fallback;
}

/**
 * The data format gate (data-format.ts) for a command core/site hands on to another folder's
 * parser (`sync status`, `restore`, `replay export`), which core/sync and core/replay cannot
 * import: checked on the `--data` the command will open, before it runs.
 */
function gateDataFlag(argv: readonly string[], fallback?: string): string | undefined {
  const v = dataFlagOf(argv, fallback);
  if (v === undefined) return undefined;
  const data = resolve(v);
  checkDataFormat(data);
  return data;
}

/**
 * The data directory a `--warehouse` is the warehouse of (`<data>/warehouse`, dataPaths, with the
 * mark, site.db or config.json beside it); none for a bare Paimon warehouse. Both the path as given
 * and the one it resolves to count (so two at most): a warehouse moved to another disk and linked
 * back, or one reached through a link to it.
 */
function dataDirsOfWarehouse(warehouse: string): string[] {
  const given = resolve(warehouse);
  let real = given;
  try {
    real = realpathSync(given);
  } catch {
    // Not there (yet: `table create` makes it); the path as given.
  }
  const out: string[] = [];
  for (const w of new Set([given, real])) {
    const data = dirname(w);
    const p = dataPaths(data);
    if (p.warehouse === w && [dataFormatPath(data), p.siteDb, p.config].some((f) => existsSync(f))) out.push(data);
  }
  return out;
}

/**
 * Is `path` (or what it links to) a Tilstand data directory: its data format mark, site.db or
 * journal.db there as files? (config.json alone could be another program's; a folder `site.db/`
 * or `journal.db/` is a warehouse's database of that name.)
 */
function isDataDir(path: string): boolean {
  const data = resolve(path);
  const p = dataPaths(data);
  return [dataFormatPath(data), p.siteDb, p.journal].some((f) => statSync(f, { throwIfNoEntry: false })?.isFile() === true);
}

/**
 * `tilstand table …` (core/lsm/cli, which imports nothing of the site): on the warehouse of a data
 * directory, that directory's data format mark is read first, as by every command that opens it
 * (refused: exit 2 too new, 4 damaged, before the table store opens anything). Its writing
 * commands (compact, expire, tag create/delete, rollback, put, alter, drop) would change tables a
 * newer program may have changed in ways this one misreads, and its reading ones misreport them.
 * A warehouse with no data directory around it is read as before.
 */
export async function runSiteTable(argv: string[], io: CliIO): Promise<number> {
  const warehouse = dataFlagOf(argv, undefined, 'warehouse');
  // The data directory itself given for its warehouse: `create` made site_<id>.db/ beside
  // site.db, where the site never looks, and `list` showed nothing of the site's tables.
  if (warehouse !== undefined && isDataDir(warehouse)) {
    throw new CliError(EXIT.usage, `option '--warehouse': ${warehouse} is a Tilstand data directory, not its warehouse; its tables are in ${join(warehouse, 'warehouse')}`);
  }
  if (warehouse !== undefined) for (const data of dataDirsOfWarehouse(warehouse)) checkDataFormat(data);
  return runTableCli(argv, io);
}

/**
 * `tilstand restore` (core/sync): refused on a directory a newer program requires; once it has
 * rebuilt the directory, it gets this version's data format mark, as init's would.
 */
export async function runSiteRestore(argv: string[], io: CliIO): Promise<number> {
  const data = gateDataFlag(argv);
  // A site running on the directory, found by its control socket as a second start finds it.
  // core/sync's restore meets a syncing site's sync lock and, when it removes a database folder, the
  // writer lock of each table there; a site running without sync holds no sync lock, and not every
  // table's lock (a table config.json does not define; another site's restore into its directory
  // removes none of its tables, yet drops its outbox's record and writes beside its tables).
  if (data !== undefined) {
    const socket = await runningSocket(data);
    if (socket) throw new CliError(EXIT.conflict, `a site is running on ${data} (${socket} answers): stop it first; a restore replaces the tables it writes`);
  }
  // With this program's data format: HQ's data format mark is read first, and an HQ a newer
  // program sent to is refused before anything is written (core/sync/DESIGN.md).
  const code = await runRestore(argv, io, { dataFormat: programDataFormat() });
  if (code === EXIT.ok && data !== undefined && existsSync(data)) raiseDataFormat(data);
  return code;
}

/**
 * `tilstand replay …` (core/replay): `export` reads the site's tables and tags them, so it passes
 * the gate first, and says which rule file is not the code the site last started with.
 */
export async function runSiteReplay(argv: string[], io: CliIO): Promise<number> {
  if (argv[0] === 'export') {
    const data = gateDataFlag(argv.slice(1));
    if (data !== undefined) {
      const record = startRecord(data);
      if (record) await noteRuleFilesSinceStart(data, record, io);
      // The zone the site runs in, not this shell's (a service's TZ is not the admin's).
      if (record?.timeZone) return runReplayCli(argv, io, { siteTimeZone: record.timeZone });
    }
  }
  return runReplayCli(argv, io);
}

/**
 * The site's record of its last start (site.db, `LOADED_RULE_FILES_KEY`), or undefined without one
 * that reads as one (a site that never started with this version, or a value of another shape). A
 * damaged site.db is refused as corruption (exit 4): taken for "no record", the export recorded
 * this shell's time zone for the site's and said nothing.
 */
function startRecord(data: string): LoadedRuleFilesRecord | undefined {
  const path = join(data, 'site.db');
  try {
    const db = openSiteDb(path, { readonly: true });
    try {
      const v = siteMeta(db, LOADED_RULE_FILES_KEY);
      return v === undefined ? undefined : loadedRuleFilesRecord(JSON.parse(v));
    } finally {
      db.close();
    }
  } catch (e) {
    if (isSqliteCorruption(e)) throw damageIn(path, e);
    return undefined; // no site.db (the export says so), or none readable: nothing to compare with
  }
}

/**
 * `replay export` copies the rule files config.json names, as they are at the export (core/replay
 * export.ts), while the live proposals of the period came from the code the site loaded at its
 * start (a file edited, named or taken off the list since runs from the next start). Said on
 * stderr for each file whose code now differs from the record of the last start (site.db,
 * `LOADED_RULE_FILES_KEY`), each file config.json names that the start did not load (the fixture
 * holds code the live agent never ran) and each the start loaded that config.json no longer names
 * (the fixture lacks code the live agent ran); the export goes on: the fixture is still a fixture
 * of the files as they are, which is what a replay then tries.
 */
async function noteRuleFilesSinceStart(data: string, record: LoadedRuleFilesRecord, io: CliIO): Promise<void> {
  // The list the export copies; when config.json does not read, the export says why.
  let named: readonly string[] | undefined;
  try {
    named = readConfig(data).agent.ruleFiles ?? [];
  } catch {
    named = undefined;
  }
  const since = new Date(record.startedAtMs).toISOString();
  const note = (line: string) => io.stderr.write(`tilstand: note: ${line}\n`);
  for (const f of record.files) {
    if (named !== undefined && !named.includes(f.path)) {
      note(`rule file ${f.path} ran since the site's start at ${since} (sha256 ${f.sha256.slice(0, 12)}…), but config.json no longer names it: the fixture does not hold it, while live proposals of the period came from it`);
      continue;
    }
    let now: string | undefined;
    try {
      now = (await ruleFileCode(resolve(data, f.path))).sha256;
    } catch {
      now = undefined; // the export refuses it, saying why
    }
    if (now === f.sha256) continue;
    note(
      `rule file ${f.path} is not the code the site started with at ${since} (sha256 ${f.sha256.slice(0, 12)}…; the file now: ${now === undefined ? 'cannot be loaded' : `sha256 ${now.slice(0, 12)}…`}): ` +
        `the fixture holds the file as it is now, while the live proposals of the period came from the code loaded at that start`,
    );
  }
  for (const path of named ?? []) {
    if (record.files.some((f) => f.path === path)) continue;
    note(`rule file ${path} was not loaded at the site's start at ${since} (config.json named it since; it runs from the next start): the fixture holds it, while no live proposal of the period came from it`);
  }
}

/** A `LoadedRuleFilesRecord` as site.db holds it (JSON parsed), or undefined when the value has another shape. */
function loadedRuleFilesRecord(v: unknown): LoadedRuleFilesRecord | undefined {
  const r = v as Partial<LoadedRuleFilesRecord> | null;
  if (r === null || typeof r !== 'object' || typeof r.startedAtMs !== 'number' || !Number.isFinite(new Date(r.startedAtMs).getTime()) || !Array.isArray(r.files)) return undefined;
  if (!r.files.every((f: unknown) => f !== null && typeof f === 'object' && typeof (f as { path?: unknown }).path === 'string' && typeof (f as { sha256?: unknown }).sha256 === 'string')) return undefined;
  return { startedAtMs: r.startedAtMs, ...(isTimeZone(r.timeZone) ? { timeZone: r.timeZone } : {}), files: r.files };
}
