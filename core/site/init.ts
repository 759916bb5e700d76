// `tilstand init`: makes a new data directory with the layout of DESIGN.md ("Shared names").
//
//   config.json                   defaultConfig(site) (see config.ts)
//   warehouse/site_<id>.db/<t>/   the seed state tables and dead_letters, empty (schema-0 only)
//   journal.db                    the ingest journal, empty
//   site.db                       broker credentials (scrypt hashes) and users (core/inbox)
//   data-format.json              the data format mark (data-format.ts), written before the rest
//   contracts/                    the seed contracts, v1 each (and `contracts`: the demo's yard.doors)
//   logs/
//   secrets/modules.json          plaintext broker passwords, written once (dir 0700, file 0600)
//   rules/door-down.mts           a demo's rule of its own (below, DEMO_RULE_FILE), named in agent.ruleFiles
// The data directory itself is made 0700 (one that existed too).
//
// Order: everything else first, config.json last, so a directory with config.json is complete;
// an init that failed half-way can be run again (it refuses only a directory with config.json; an
// admin an earlier run added gets the PIN given now, and another admin name is refused naming that
// one, so the site starts with the one admin the person chose; of two admins an older init left,
// the one named is kept and the other removed).
// A directory without config.json whose site.db shows that a site started there (a start recorded,
// someone signed in, a user an admin added) lost its config.json: init is refused there, whatever
// the admin name — it would replace the modules' broker passwords under a default config.json.
// A directory that already holds a site's tables — `tilstand restore` fills one before init, on a
// replacement PC — is initialized only under that site's id: under another id the site would
// start empty beside the restored state, and its restore note would ask the wrong modules.

import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localFileIO } from '../lsm/index.ts';
import { UserStore, nameProblem, type Role } from '../inbox/users.ts';
import type { ScryptParams } from '../inbox/secret-hash.ts';
import type { Refusal } from './api.ts';
import { dataPaths, defaultConfig, siteIdProblem, siteTableDefinitions, writeConfig, ConfigError, type SiteConfig } from './config.ts';
import { DEMO_YARD_TABLE } from './demo/site.ts';
import { readRestoreNote, unfinishedRestore } from '../sync/restore.ts';
import { openIngest } from './open-ingest.ts';
import { ContractRegistry, type Contract } from '../ingest/contracts.ts';
import { ModuleCredentials, SITE_MODULES, TILSTAND_PRINCIPAL, modulePrincipal, openSiteDb, tilstandPrincipal } from './site-db.ts';
import { checkDataFormat, raiseDataFormat } from './data-format.ts';

export interface InitOptions {
  data: string;
  site: string;
  admin?: { name: string; pin: string };
  /** Adjust the default config before it is written (tests: ephemeral ports). */
  config?: (c: SiteConfig) => SiteConfig;
  scrypt?: ScryptParams;
  /** Module users besides the seed modules (the demo's yard system), in site.db and secrets/modules.json. */
  modules?: readonly string[];
  /** Contracts registered besides the seed ones, before the bindings are opened (the demo's yard.doors). */
  contracts?: readonly Contract[];
  /**
   * The demo's rule of its own (DEMO_RULE_FILE) is written and named in `agent.ruleFiles`: a new
   * demo directory (Site.start with `demo`). The config must define the yard_doors it reads.
   */
  demoRule?: boolean;
}

export interface ModuleSecrets {
  site: string;
  note: string;
  modules: Record<string, { username: string; password: string }>;
}

export class InitError extends Error {
  readonly kind: 'InvalidArgument' | 'AlreadyExists';
  /** The InitOptions input the message is about, when it is one (the CLI names its option). */
  readonly input: 'site' | 'admin' | 'pin' | undefined;
  /** The refusal's code and params, for the first-run screen to word it (api.ts RefusalCode `init.*`). */
  readonly refusal: Refusal | undefined;
  constructor(kind: 'InvalidArgument' | 'AlreadyExists', message: string, input?: 'site' | 'admin' | 'pin', refusal?: Refusal) {
    super(message);
    this.name = `InitError(${kind})`;
    this.kind = kind;
    this.input = input;
    this.refusal = refusal;
  }
}

export interface InitResult {
  data: string;
  config: SiteConfig;
  secretsPath: string;
  /** The admins site.db holds: the one given, or one an earlier init that did not finish added. */
  admins: string[];
}

/**
 * The rule of a site's own that a new demo directory runs, as its path in the data directory (in
 * config.json `agent.ruleFiles`): docs/examples/rules/door-down.mts, a notice for each dock door
 * the yard system reports down, so a newcomer sees a rule from a file live beside the installed
 * ones (`tilstand status`, the inbox).
 */
export const DEMO_RULE_FILE = 'rules/door-down.mts';

/**
 * Where the demo rule's text is read from, in order. Its one source is the example in docs/; the
 * site's bundle does not carry docs/ everywhere it runs (the packaged app holds core/ and dist/
 * only), so the build copies the example beside the bundle (scripts/build-site.mjs, BUNDLES.site
 * `copies`). Both are found from this file's place: in the bundle `import.meta.url` is this
 * source's URL too (build-site.mjs), so the paths are the same under tsx and in the bundle.
 */
export const DEMO_RULE_SOURCES: readonly string[] = [
  fileURLToPath(new URL('../../docs/examples/rules/door-down.mts', import.meta.url)),
  fileURLToPath(new URL('../../dist/site/examples/rules/door-down.mts', import.meta.url)),
];

/** The demo rule's text from the first of `sources` that can be read; an Error naming them all when none can. */
export function readDemoRule(sources: readonly string[] = DEMO_RULE_SOURCES): string {
  for (const s of sources) {
    try {
      return readFileSync(s, 'utf8');
    } catch {
      // the next one
    }
  }
  throw new Error(`the demo's rule file cannot be read from ${sources.join(' or ')} (run \`npm run build\`, which copies it beside the site's bundle)`);
}

export async function initDataDir(o: InitOptions): Promise<InitResult> {
  const sp = siteIdProblem(o.site);
  if (sp) throw new InitError('InvalidArgument', `site id ${JSON.stringify(o.site)}: ${sp}`, 'site');
  if (o.admin) {
    const np = nameProblem(o.admin.name);
    if (np) throw new InitError('InvalidArgument', `admin name ${JSON.stringify(o.admin.name)}: ${np}`, 'admin');
    if (!/^[0-9]{4,12}$/.test(o.admin.pin)) throw new InitError('InvalidArgument', 'admin PIN: expected 4 to 12 digits', 'pin');
  }
  const data = resolve(o.data);
  const p = dataPaths(data, o.site);
  if (existsSync(p.config)) throw new InitError('AlreadyExists', `${data} is already a Tilstand data directory (it has config.json)`, undefined, { code: 'init.exists' });
  // A directory a newer program marked (its restore, or its init stopped half-way) is refused unchanged.
  checkDataFormat(data);
  refuseAnotherSitesState(data, p.warehouse, o.site, `${p.database!}.db`);
  refuseStartedSite(data, p.siteDb);
  let config = defaultConfig(o.site);
  if (o.config) config = o.config(config);
  if (config.site !== o.site) throw new ConfigError('site', 'the config adjustment must not change the site id');
  // Read before anything is made: a demo without its rule is refused whole, not made half.
  let demoRule: string | undefined;
  if (o.demoRule) {
    // The rule reads the demo's yard_doors: without it the start would refuse the file.
    if (!siteTableDefinitions(config).some((d) => d.name === DEMO_YARD_TABLE)) throw new ConfigError('tables', `the demo's rule file reads ${DEMO_YARD_TABLE}, which the config does not define`);
    demoRule = readDemoRule();
    config = { ...config, agent: { ...config.agent, ruleFiles: [...(config.agent.ruleFiles ?? []), DEMO_RULE_FILE] } };
  }

  // The site's user's only (0700, also a directory that was there): site.db holds the users' PIN
  // hashes (4 to 12 digits, quickly tried offline by anyone who can read it), journal.db the
  // events, logs/ names. Under the usual umask (022) the directory was readable by every local user.
  mkdirSync(data, { recursive: true });
  chmodSync(data, 0o700);
  // This version's data format mark, before any file it describes (data-format.ts).
  raiseDataFormat(data);
  for (const dir of [p.warehouse, p.contracts, p.logs]) mkdirSync(dir, { recursive: true });
  mkdirSync(p.secrets, { recursive: true, mode: 0o700 });
  chmodSync(p.secrets, 0o700);

  const registry = new ContractRegistry(p.contracts);
  for (const c of o.contracts ?? []) registry.register(c);
  // The Ingestor creates the tables (dead_letters too) and registers nothing it has not got:
  // opening and closing it once leaves journal.db, contracts/ and the empty tables in place.
  const ingest = openIngest(data, config);
  ingest.ingestor.close();
  ingest.journal.close();

  const db = openSiteDb(p.siteDb);
  const secrets: ModuleSecrets = {
    site: o.site,
    note: 'Broker passwords of the site modules, written once by `tilstand init`. site.db keeps only their scrypt hashes. Hand each to its module installer, then delete this file.',
    modules: {},
  };
  let admins: string[];
  try {
    const creds = new ModuleCredentials(db, o.scrypt);
    const users = new UserStore(db, o.scrypt ? { scrypt: o.scrypt } : {});
    const leftOver = o.admin ? refuseAnotherAdmin(users, o.admin.name, data) : [];
    for (const m of [...new Set([...SITE_MODULES, ...(o.modules ?? [])]), TILSTAND_PRINCIPAL]) {
      const password = randomBytes(18).toString('base64url');
      await creds.set(m === TILSTAND_PRINCIPAL ? tilstandPrincipal : modulePrincipal(m), password);
      secrets.modules[m] = { username: m, password };
    }
    if (o.admin) {
      // An init stopped after this (a kill, a failed write of the files below) left the admin in
      // site.db but no config.json: run again, it takes the PIN given now instead of failing on
      // "already exists" for good.
      if (users.get(o.admin.name)?.role === 'admin') await users.resetSecret(o.admin.name, { pin: o.admin.pin });
      else await users.add({ name: o.admin.name, role: 'admin' satisfies Role, pin: o.admin.pin });
      // The other admins an older init added beside this one (it took every name it was run
      // with): nobody has signed in as them (refuseStartedSite), no decision names them, and
      // kept, the site would start with a second admin the person gave up. UserStore has no
      // removal (a user who decided stays, disabled), hence the statement here.
      const remove = db.prepare("DELETE FROM users WHERE name = ? AND role = 'admin' AND last_sign_in_ms IS NULL");
      db.transaction(() => {
        for (const n of leftOver) remove.run(n);
      })();
    }
    admins = adminsOf(users);
  } finally {
    db.close();
  }
  // Both through core/lsm's atomic replace (a temporary file fsynced, renamed, its folder fsynced),
  // as config.json is: written plainly, a power cut soon after init could leave either empty or
  // missing, and the next start read the rule file config.json names as broken. The replace makes
  // the file 0644 inside secrets/ (0700): 0600 at once, and fsynced again so the mode lasts too.
  localFileIO.replaceAtomic(p.moduleSecrets, Buffer.from(`${JSON.stringify(secrets, null, 2)}\n`));
  chmodSync(p.moduleSecrets, 0o600);
  fsyncFile(p.moduleSecrets);
  // rules/ is made by the replace, which then fsyncs the data directory that names it.
  if (demoRule !== undefined) localFileIO.replaceAtomic(join(data, DEMO_RULE_FILE), Buffer.from(demoRule));

  writeConfig(data, config);
  return { data, config, secretsPath: p.moduleSecrets, admins };
}

const adminsOf = (users: UserStore): string[] => users.list().filter((u) => u.role === 'admin').map((u) => u.name);

/**
 * Refuses `name` as the first admin when an earlier init of this directory that did not finish
 * (no config.json: nobody has signed in yet) added another: taking both, the site started with two
 * admins, one of them a name the person had given up. The message names the one there; run again
 * under that name, the init takes the PIN given in that run. `name` one of several admins (an
 * older init took each name it was run with, and each name was then refused naming the other):
 * the others, for the caller to remove.
 */
function refuseAnotherAdmin(users: UserStore, name: string, data: string): string[] {
  // get() finds a name by its composed form too: the same person typed it again.
  const same = users.get(name);
  const others = adminsOf(users).filter((n) => n !== same?.name);
  if (others.length === 0 || same?.role === 'admin') return others;
  const quoted = others.map((n) => `'${n}'`).join(', ');
  throw new InitError(
    'AlreadyExists',
    `an earlier init of ${data} that did not finish added the admin${others.length === 1 ? '' : 's'} ${quoted}: run it again with ${others.length === 1 ? 'that admin name' : 'one of those names'} (the PIN given now is taken), so the site starts with one admin`,
    'admin',
    { code: 'init.adminExists', params: { admin: others.join(', ') } },
  );
}

/**
 * Refuses a directory without config.json whose site.db is that of a site that started: a start
 * recorded in `site_meta` (Site.start writes `agent_config` and `rule_files_loaded`), a user who
 * has signed in, or a user other than an admin (only a site's admin adds them). Its config.json
 * was lost or removed; an init there would write a default one and replace every module's broker
 * password, and the refusal said "an earlier init … did not finish".
 */
function refuseStartedSite(data: string, siteDb: string): void {
  if (!existsSync(siteDb)) return;
  const db = openSiteDb(siteDb, { readonly: true });
  const signs: string[] = [];
  try {
    const has = (table: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
    if (has('site_meta') && db.prepare("SELECT 1 FROM site_meta WHERE key IN ('agent_config', 'rule_files_loaded')").get() !== undefined) signs.push('it records a start');
    if (has('users')) {
      const signedIn = db.prepare('SELECT name FROM users WHERE last_sign_in_ms IS NOT NULL ORDER BY name').pluck().all() as string[];
      const added = db.prepare("SELECT name FROM users WHERE role <> 'admin' ORDER BY name").pluck().all() as string[];
      const some = (names: string[]) => `${names.slice(0, 3).map((n) => `'${n}'`).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}`;
      if (signedIn.length > 0) signs.push(`${some(signedIn)} signed in`);
      if (added.length > 0) signs.push(`it has users an admin added (${some(added)})`);
    }
  } finally {
    db.close();
  }
  if (signs.length === 0) return;
  throw new InitError(
    'AlreadyExists',
    `${data} has no config.json, but its site.db is that of a site that has started here (${signs.join('; ')}): config.json was lost or removed. ` +
      'Stop anything that runs the site, then put config.json back from a backup (docs/operations.md, "Backing up a site"), or write it again by hand as it was (bindings, budgets, broker, hq). ' +
      'init is refused here: it would replace every module\'s broker password. To set the site up anew instead, move site.db out of the directory first (its users and module passwords go with it).',
    undefined,
    { code: 'init.configLost' },
  );
}

/** Fsyncs a file's own metadata (its mode, after a chmod). */
function fsyncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Refuses to initialize `data` as `site` when it holds another site's state: a restore note
 * (`tilstand restore`) naming another site, or a `site_<id>.db` database of another id in the
 * warehouse.
 */
function refuseAnotherSitesState(data: string, warehouse: string, site: string, ownDatabaseDir: string): void {
  // A half copy: set up on it, the site would miss the rest, and the restore's rerun would remove it.
  const unfinished = unfinishedRestore(data);
  if (unfinished !== undefined) {
    // A mark that does not read ('?'): the restore refuses it without --force (core/sync restore.ts).
    const again = unfinished === '?' ? `its mark does not read: run \`tilstand restore --force\` into it (it replaces the mark and that site's database folder; other database folders stay)` : `run \`tilstand restore\` into it again (it does the copy again)`;
    throw new InitError('InvalidArgument', `${data} holds a restore that did not finish (restore-unfinished.json, site '${unfinished}'): ${again}, or use another directory for a new site`, undefined, { code: 'init.restoreUnfinished' });
  }
  let restored: string | undefined;
  try {
    restored = readRestoreNote(data)?.site;
  } catch (e) {
    throw new InitError('InvalidArgument', `${data} has an unreadable restore-note.json (${(e as Error).message}); check it, or remove it if the directory is not a restore`, undefined, { code: 'init.restoreNote' });
  }
  if (restored !== undefined && restored !== site) {
    throw new InitError('InvalidArgument', `${data} holds a restore of site '${restored}' (restore-note.json): initialize it with site id '${restored}', or use another directory for a new site`, undefined, { code: 'init.restoredOther', params: { site: restored } });
  }
  const others = existsSync(warehouse) ? readdirSync(warehouse).filter((n) => /^site_.+\.db$/.test(n) && n !== ownDatabaseDir) : [];
  if (others.length > 0) {
    const ids = others.map((n) => `'${n.slice('site_'.length, -'.db'.length)}'`).join(', ');
    throw new InitError('InvalidArgument', `${warehouse} already holds the tables of site ${ids}: initialize it with that site id, or use another directory for a new site`, undefined, {
      code: 'init.otherSite',
      params: { sites: others.map((n) => n.slice('site_'.length, -'.db'.length)).join(',') },
    });
  }
}
