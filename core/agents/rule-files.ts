// Rules of one's own, from files: a module whose default export is one Rule or an array of Rules
// (rule.ts), loaded with import() (.ts and .mts, and any file with local imports, through tsx's
// tsImport, also in the site's bundle; .js and .mjs as they are). A replay's rules config names
// them (`ruleFiles`, core/replay agent-spec.ts) and so does a site's config.json
// (`agent.ruleFiles`, core/site config.ts): both load and check them here, and run `rulesInForce`
// of them. See DESIGN.md, "Rules from files" and "A rule file's imports, and its SHA-256".
//
// A rule file is code the operator's own command (or the site, started by whoever may edit its
// config.json) runs with that process's rights: it is not sandboxed. Each rule is held to what the
// installed ones are: the checks the Agent makes when it starts (checkRuleSet: an id of lower-case
// letters, digits and '-', once; message ids under the rule's id), the Rule's fields and functions,
// and its messages in every language with the same parameters (as messages.test.ts checks the
// installed ones). A rule with an installed rule's id is a new version of it and takes its place,
// only under a version of its own: two codes under one version would make a report, and a stored
// proposal, call them the same. What ran is named by a SHA-256 over the file and every local file
// it imports (`ruleFileCode`: its module graph as esbuild bundles it, type-only imports erased), so
// an edited helper is a change of the rule file's code too, and an export can copy the helpers.
// An import by a name computed when the file runs is in no graph and refused; a file written
// between its hash and its import is caught by reading the files again after the import.
// A site holds the modules it imported (`RuleFileModules`), so a reload imports again only a file
// whose SHA-256 changed.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkRuleSet } from './agent.ts';
import { MESSAGE_LANGS, placeholders } from './messages.ts';
import type { Rule } from './rule.ts';
import { DEFAULT_RULES } from './rules/index.ts';

/** A local file a rule file imports: its path relative to the rule file's folder ('/'-separated; `../` when outside it) and its bytes' SHA-256 (hex). */
export interface RuleFileImport {
  path: string;
  sha256: string;
}

/**
 * A rule file as loaded: its path as given, the SHA-256 (hex) of what ran (`ruleFileHash`: its
 * bytes' SHA-256 when it imports no local file), the ids of the rules it adds or replaces, and,
 * when it has any, the local files it imports (sorted by path) and the packages it imports (bare
 * specifiers other than Node's built-ins; not hashed: they are not the file's own code).
 */
export interface RuleFile {
  path: string;
  sha256: string;
  rules: string[];
  imports?: RuleFileImport[];
  packages?: string[];
}

/** The rules of a list of rule files (`loadRuleFiles`), in file order, and the files. */
export interface LoadedRuleFiles {
  files: RuleFile[];
  rules: Rule[];
}

/**
 * A rule file refused: `index` in the list given, `path` as given. The message is
 * `rule file <path>: <what is wrong, and what was expected>`; a caller names its own key
 * (`agent.ruleFiles[<index>]`, `--agent <file>`).
 */
export class RuleFileError extends Error {
  readonly index: number;
  readonly path: string;
  readonly problem: string;
  constructor(index: number, path: string, problem: string) {
    super(`rule file ${path}: ${problem}`);
    this.name = 'RuleFileError';
    this.index = index;
    this.path = path;
    this.problem = problem;
  }
}

const RULE_FILE = /\.(ts|mts|js|mjs)$/;
/** Node's CommonJS module cache (require.cache), the one `import()` of a CommonJS file goes through too. */
const requireCache = createRequire(import.meta.url).cache;
const RULE_SHAPE = 'a Rule (id, version, description, messages, evaluate, recheck, effectSeen; core/agents rule.ts)';

/**
 * The modules one loader imported (a running site's: it loads its rule files at start and at each
 * reload), one per rule file path, under the SHA-256 of the code imported (`ruleFileHash`). A
 * reload that finds a file's code unchanged takes its module from here instead of importing it
 * again: tsImport loads the whole graph anew at each call, and Node keeps every module it ever
 * imported, so each reload of an unchanged file grew the site and took the time of a compile.
 * Held per loader, not per process: a replay loads without one and imports what its fixture holds.
 */
export class RuleFileModules {
  private readonly held = new Map<string, { sha256: string; module: { default?: unknown } }>();

  /** The module of the rule file at `abs` if the one held is of the code `sha256` names. */
  get(abs: string, sha256: string): { default?: unknown } | undefined {
    const h = this.held.get(abs);
    return h?.sha256 === sha256 ? h.module : undefined;
  }

  /** Holds `module` as the rule file at `abs`, of the code `sha256` names, in place of the one held before. */
  set(abs: string, sha256: string, module: { default?: unknown }): void {
    this.held.set(abs, { sha256, module });
  }

  /** Lets go of the modules of the files not in `abs` (no longer named). */
  keepOnly(abs: readonly string[]): void {
    for (const k of [...this.held.keys()]) if (!abs.includes(k)) this.held.delete(k);
  }

  /** How many modules are held (tests). */
  get size(): number {
    return this.held.size;
  }
}

/**
 * Loads and checks rule files (`paths` relative to `dir`, or absolute), in order. A refusal is a
 * RuleFileError naming the file and what was expected. With `modules`, a file whose code (its
 * SHA-256, with its imports) is the one held there is not imported again: its module is checked
 * as if new; a file imported anew takes the place of its former module there once it passes these
 * checks (a refused edit leaves the good module held), and after a load that took every file, the
 * modules of files no longer named are let go.
 */
export async function loadRuleFiles(paths: readonly string[], dir: string, modules?: RuleFileModules): Promise<LoadedRuleFiles> {
  const files: RuleFile[] = [];
  const rules: Rule[] = [];
  const fileOf = new Map<string, string>();
  const loadedAbs: string[] = [];
  for (const [index, path] of paths.entries()) {
    const refuse = (problem: string) => new RuleFileError(index, path, problem);
    if (!RULE_FILE.test(path)) throw refuse('expected a .ts, .mts, .js or .mjs file');
    const abs = resolve(dir, path);
    const code = await ruleFileCode(abs).catch((e: unknown) => {
      throw e instanceof RuleFileCodeError ? refuse(e.message) : e;
    });
    const hash = code.sha256;
    if (path.endsWith('.ts') && !inModuleScope(abs)) throw refuse('a .ts file is loaded only under a package.json with "type": "module" (elsewhere Node takes it as CommonJS, and its default export is not the rule); name it .mts, or give it such a package.json');
    // The module of this very code, when the loader holds it (a site's reload of an unchanged file).
    const held = modules?.get(abs, hash);
    let mod: { default?: unknown };
    if (held !== undefined) {
      mod = held;
    } else {
      // Node keeps a CommonJS module (a .js file where no package.json says "type": "module", and
      // what it requires) by its file name, whatever the URL's query: an edited one imported again
      // in this process was the module of its first import, checked under the new SHA-256 (a
      // site's reload passed an edit its next start refuses). Forgotten first, as Node lets one.
      for (const f of [abs, ...code.imports.map((m) => m.abs)]) delete requireCache[f];
      const hashed = `${pathToFileURL(abs).href}?sha256=${hash}`;
      const refused = misloaded.get(hashed) ?? 0;
      try {
        // The hash in the URL: the code imported is the code hashed, also when the file was changed
        // since this process imported it (a module is imported once per URL, so a .js or .mjs file
        // of an unchanged hash is the module Node already holds). A file with imports of its own
        // goes through tsImport whatever its kind: each call loads the whole graph anew (tsx's
        // namespace per call), where import() would keep a helper as first imported. After a load
        // of this hash refused as changed meanwhile, Node holds the code it read then under that
        // URL: the next import takes one of its own (`misloaded`).
        const url = refused === 0 ? hashed : `${hashed}&load=${refused + 1}`;
        mod = (/\.m?ts$/.test(path) || code.imports.length > 0 ? await importTypeScript(url) : await import(url)) as { default?: unknown };
      } catch (e) {
        throw refuse(`cannot be loaded (${(e as Error).message.split('\n')[0]})`);
      }
      // The import read the files again: one written since they were hashed (an editor saving
      // during a reload) ran code the hash does not name. Such a load is refused; the next one
      // hashes what is there then.
      const changed = changedSinceRead(abs, code);
      if (changed !== undefined) {
        misloaded.set(hashed, refused + 1);
        throw refuse(`${changed} changed while it was being loaded (it is no longer the file hashed); load it again`);
      }
    }
    const exported = mod.default;
    if (exported === undefined) throw refuse(`expected a default export that is ${RULE_SHAPE} or an array of them; it has none`);
    const many = Array.isArray(exported);
    const own = (many ? exported : [exported]) as unknown[];
    if (own.length === 0) throw refuse(`expected a default export that is ${RULE_SHAPE} or an array of them; it is an empty array`);
    own.forEach((r, i) => {
      const problem = ruleProblem(r);
      if (problem !== undefined) throw refuse(`${many ? `default export [${i}]` : 'default export'}: ${problem}`);
    });
    const fileRules = own as Rule[];
    try {
      // The checks the agent makes of its rules when it is made.
      checkRuleSet(fileRules);
    } catch (e) {
      throw refuse((e as Error).message);
    }
    const ids: string[] = [];
    for (const r of fileRules) {
      const installed = DEFAULT_RULES.find((x) => x.id === r.id);
      if (installed === r) continue; // the installed rule itself, exported again: nothing new
      if (installed?.version === r.version) throw refuse(`rule ${r.id} has the installed version ${r.version}; a new version of an installed rule needs a version of its own (expected another than ${r.version})`);
      const other = fileOf.get(r.id);
      if (other !== undefined) throw refuse(`rule ${r.id} is also in rule file ${other}; expected each rule once`);
      fileOf.set(r.id, path);
      ids.push(r.id);
      rules.push(r);
    }
    if (held === undefined) modules?.set(abs, hash, mod);
    loadedAbs.push(abs);
    files.push({ path, sha256: hash, rules: ids, ...(code.imports.length > 0 ? { imports: code.imports.map(({ path: p, sha256 }) => ({ path: p, sha256 })) } : {}), ...(code.packages.length > 0 ? { packages: code.packages } : {}) });
  }
  modules?.keepOnly(loadedAbs);
  return { files, rules };
}

/**
 * The SHA-256 (hex) that names a rule file's code: with no local imports, its bytes' SHA-256 (as
 * before rule files could import: an older run.json or fixture names the same file the same);
 * with some, the SHA-256 of the lines `<sha256>  <path>\n` (sha256sum's output) of the rule file
 * (`name`, its file name) and then each import in `imports` order (sorted by path), i.e.
 * `cd <its folder> && sha256sum <name> <imports…> | sha256sum`.
 */
export function ruleFileHash(name: string, sha256: string, imports: readonly RuleFileImport[]): string {
  if (imports.length === 0) return sha256;
  const lines = [{ path: name, sha256 }, ...imports].map((f) => `${f.sha256}  ${f.path}\n`).join('');
  return createHash('sha256').update(lines).digest('hex');
}

/** A rule file's code as read (`ruleFileCode`): the bytes hashed, so a copy holds exactly what was hashed. */
export interface RuleFileCode {
  /** `ruleFileHash` of the file and its imports. */
  sha256: string;
  /** The rule file's bytes. */
  bytes: Buffer;
  /** The local files it imports, sorted by path (relative to its folder, '/'-separated), with their bytes. */
  imports: (RuleFileImport & { abs: string; bytes: Buffer })[];
  /** The packages it imports (bare specifiers, Node's built-ins left out), sorted. */
  packages: string[];
}

/** ruleFileCode's esbuild builds under way in this process: the service is stopped when none is. */
let graphsInFlight = 0;

/** A rule file or one of its imports could not be read or resolved: the message is the problem, as a RuleFileError takes it. */
export class RuleFileCodeError extends Error {
  constructor(problem: string) {
    super(problem);
    this.name = 'RuleFileCodeError';
  }
}

/**
 * Reads a rule file (`path`: absolute, or from the working directory) and every local file it
 * imports, found exactly as a bundler finds them: esbuild bundles it (nothing written, packages left external) and its metafile's
 * inputs are the module graph; type-only imports (and a TypeScript import used only as a type)
 * are erased before, as tsx erases them when it runs the file, so they do not count. Runs none of
 * the code. esbuild is imported here, at run time, so the site's bundle (which keeps packages
 * external) loads it only when a site has rule files.
 */
export async function ruleFileCode(path: string): Promise<RuleFileCode> {
  const abs = resolve(path);
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch (e) {
    throw new RuleFileCodeError(`cannot be read (${(e as Error).message})`);
  }
  const folder = dirname(abs);
  const esbuild = await import('esbuild');
  let meta: import('esbuild').Metafile;
  let computed: import('esbuild').Message | undefined;
  graphsInFlight++;
  try {
    const r = await esbuild.build({ entryPoints: [abs], absWorkingDir: folder, bundle: true, write: false, metafile: true, format: 'esm', platform: 'node', packages: 'external', logLevel: 'silent', logOverride: COMPUTED_IMPORTS });
    meta = r.metafile;
    computed = r.warnings.find((w) => w.id in COMPUTED_IMPORTS && (w.location === null || !w.location.file.startsWith('../')));
  } catch (e) {
    const first = (e as { errors?: { text: string; location: { file: string; line: number; column: number } | null }[] }).errors?.[0];
    if (first === undefined) throw new RuleFileCodeError(`cannot be loaded (${(e as Error).message.split('\n')[0]})`);
    throw new RuleFileCodeError(`cannot be loaded (${first.text}${first.location ? ` at ${first.location.file}:${first.location.line}:${first.location.column}` : ''})`);
  } finally {
    // esbuild's API runs its service as a child process (≈ 12 MB) that would stay for the life of
    // a site that read its rule files once at start: stopped when no graph is being found (the
    // next call starts it again, ≈ 70 ms).
    if (--graphsInFlight === 0) await esbuild.stop();
  }
  if (computed !== undefined) {
    const at = computed.location ? ` at ${computed.location.file}:${computed.location.line}:${computed.location.column} (${computed.location.lineText.trim()})` : '';
    throw new RuleFileCodeError(`imports a module whose name is computed when it runs,${at}: its SHA-256 cannot cover that code; import it by a literal path (import('./lib/x.ts'), require('./lib/x.js'))`);
  }
  const entry = abs;
  const imports: RuleFileCode['imports'] = [];
  for (const input of Object.keys(meta.inputs)) {
    // Inputs are paths relative to absWorkingDir ('/'-separated); another namespace (`ns:…`) is none of ours.
    const file = resolve(folder, input);
    if (file === entry) continue;
    let b: Buffer;
    try {
      b = readFileSync(file);
    } catch (e) {
      throw new RuleFileCodeError(`imports ${input}, which cannot be read (${(e as Error).message})`);
    }
    const rel = relative(folder, file);
    imports.push({ path: isAbsolute(rel) ? rel : rel.split(sep).join('/'), sha256: sha256Of(b), abs: file, bytes: b });
  }
  imports.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // What the bundle still imports from outside: the packages (a relative external is an import
  // TypeScript erased, listed by esbuild but never loaded).
  const packages = new Set<string>();
  for (const out of Object.values(meta.outputs)) {
    for (const i of out.imports) if (i.external && !/^[./]/.test(i.path) && !isAbsolute(i.path) && !isBuiltin(i.path)) packages.add(i.path);
  }
  return { sha256: ruleFileHash(basename(abs), sha256Of(bytes), imports), bytes, imports, packages: [...packages].sort() };
}

/**
 * Per file URL with its hash (`…?sha256=<hash>`), the imports of it refused because a file changed
 * while it was loaded. Node keeps a module per URL, here the code it read, not the code hashed; a
 * later import of the same hash (the edit undone) takes a URL of its own. One entry per refusal,
 * which takes a write during a load: a handful in a site's life.
 */
const misloaded = new Map<string, number>();

/**
 * esbuild's notes (by id, raised to warnings: by default they are not said) of an import or
 * require whose name is not a literal, or of `require` passed around: the module it loads is found
 * only when the file runs, so it is in no module graph and no SHA-256. A rule file with one, or a
 * file of its folder it imports, is refused (`ruleFileCode`). Code outside its folder is not held
 * to it: the checkout a development rule file imports (core/agents, whose loader imports rule
 * files and packages by computed names); a site's rule file may import nothing outside its folder
 * (`outsideImportProblem`).
 */
const COMPUTED_IMPORTS = { 'unsupported-dynamic-import': 'warning', 'unsupported-require-call': 'warning', 'indirect-require': 'warning' } as const;

/**
 * The first of a rule file's files — itself, then its imports — whose bytes are no longer the ones
 * `code` read and hashed (or that cannot be read), by its path from the rule file's folder;
 * undefined when none changed.
 */
function changedSinceRead(abs: string, code: RuleFileCode): string | undefined {
  const same = (file: string, bytes: Buffer): boolean => {
    try {
      return readFileSync(file).equals(bytes);
    } catch {
      return false;
    }
  };
  if (!same(abs, code.bytes)) return basename(abs);
  return code.imports.find((i) => !same(i.abs, i.bytes))?.path;
}

/**
 * Why a rule file that must travel (a site's: `replay export` copies it into a fixture) cannot:
 * it imports a file outside its own folder, which has no place beside it in the fixture (its
 * relative path would climb out of it). Undefined when every import is under its folder.
 */
export function outsideImportProblem(imports: readonly RuleFileImport[]): string | undefined {
  const out = imports.find((i) => i.path.startsWith('../') || isAbsolute(i.path));
  if (out === undefined) return undefined;
  return `imports ${out.path}, outside the rule file's folder: only the files under that folder travel with it into a replay fixture; expected every file it imports under its folder (move ${out.path} there)`;
}

const sha256Of = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/**
 * The rules in force with rule files' rules: the installed ones (DEFAULT_RULES) in their order, a
 * file's new version of an installed rule in that rule's place, a file's new rule after them. What
 * a site's agent runs and what a replay runs, so both run the same rules in the same order.
 */
export function rulesInForce(fromFiles: readonly Rule[]): Rule[] {
  const inForce = new Map(DEFAULT_RULES.map((r) => [r.id, r]));
  for (const r of fromFiles) inForce.set(r.id, r);
  return [...inForce.values()];
}

/** A rule as a run or a site names it: its id and version, and the rule file it came from (path, SHA-256, the local files it imports), if one. */
export interface RuleOrigin {
  id: string;
  version: string;
  file?: { path: string; sha256: string; imports?: RuleFileImport[] };
}

/** `rules` (in their order) with the file of each that came from one of `files` (`loadRuleFiles`). */
export function ruleOrigins(rules: readonly Rule[], files: readonly RuleFile[]): RuleOrigin[] {
  const fileOf = new Map(files.flatMap((f) => f.rules.map((id) => [id, { path: f.path, sha256: f.sha256, ...(f.imports ? { imports: f.imports.map((i) => ({ ...i })) } : {}) }] as const)));
  return rules.map((r) => {
    const file = fileOf.get(r.id);
    return file ? { id: r.id, version: r.version, file } : { id: r.id, version: r.version };
  });
}

/**
 * Imports a TypeScript rule file through tsx's `tsImport`, which compiles it (and what it imports)
 * whether or not this process runs under tsx: the site's bundle (dist/site/tilstand.mjs, what an
 * installed appliance runs) has tsx's loader switched off, and a plain import() of a .ts file
 * failed there with "Unknown file extension". The specifier is built at run time so the bundle
 * keeps tsx a package it loads, not the no-op it puts in place of the entry's `register`.
 */
async function importTypeScript(url: string): Promise<unknown> {
  const spec = ['tsx', 'esm', 'api'].join('/');
  const { tsImport } = (await import(spec)) as { tsImport: (specifier: string, parent: string) => Promise<unknown> };
  return tsImport(url, import.meta.url);
}

/**
 * Whether Node takes a file as an ES module by its folder: the nearest package.json says
 * `"type": "module"`. Elsewhere tsx compiles a .ts file as CommonJS, whose exports come wrapped
 * (the default export is `{ default: rule }`); a .mts file is always an ES module.
 */
export function inModuleScope(file: string): boolean {
  let dir = dirname(file);
  for (let up = 0; up < 256; up++) {
    let text: string | undefined;
    try {
      text = readFileSync(join(dir, 'package.json'), 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      try {
        return (JSON.parse(text) as { type?: unknown })?.type === 'module';
      } catch {
        return false;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
  return false;
}

/** What is wrong with a rule file's export as a Rule, or undefined. The id's shape and the message ids' prefix are the Agent's to check. */
export function ruleProblem(r: unknown): string | undefined {
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return `expected ${RULE_SHAPE}, got ${r === null ? 'null' : Array.isArray(r) ? 'an array' : typeof r}`;
  const o = r as Record<string, unknown>;
  const got = (v: unknown) => (typeof v === 'function' ? 'a function' : JSON.stringify(v) ?? String(v));
  if (typeof o.id !== 'string' || o.id.length === 0) return `id: expected a non-empty string of lower-case letters, digits and '-', got ${got(o.id)}`;
  if (typeof o.version !== 'string' || o.version.length === 0) return `rule ${o.id}: version: expected a non-empty string, got ${got(o.version)}`;
  if (typeof o.description !== 'string') return `rule ${o.id}: description: expected a string, got ${got(o.description)}`;
  for (const f of ['evaluate', 'recheck', 'effectSeen']) if (typeof o[f] !== 'function') return `rule ${o.id}: ${f}: expected a function, got ${got(o[f])}`;
  // Whether the site has the tables is the caller's to say (core/agents siteTablesRead: the Agent, a site's config).
  if (o.reads !== undefined && (!Array.isArray(o.reads) || o.reads.some((t) => typeof t !== 'string' || t.length === 0))) return `rule ${o.id}: reads: expected an array of names of the site's own tables (config.json \`tables\` entries with columns), got ${got(o.reads)}`;
  const m = o.messages;
  const langs = MESSAGE_LANGS.join(', ');
  if (m === null || typeof m !== 'object' || Array.isArray(m) || Object.keys(m).length === 0) return `rule ${o.id}: messages: expected the templates of its messages, id → {${langs}}, as the installed rules carry them; got ${m === undefined ? 'none' : got(m)}`;
  for (const [id, t] of Object.entries(m as Record<string, unknown>)) {
    const where = `rule ${o.id}: messages[${JSON.stringify(id)}]`;
    if (t === null || typeof t !== 'object' || Array.isArray(t)) return `${where}: expected a template in each of ${langs}, got ${got(t)}`;
    const tt = t as Record<string, unknown>;
    const missing = MESSAGE_LANGS.filter((l) => typeof tt[l] !== 'string' || (tt[l] as string).trim().length === 0);
    if (missing.length > 0) return `${where}: expected a template in each of ${langs}; none in ${missing.join(', ')}`;
    const extra = Object.keys(tt).filter((k) => !(MESSAGE_LANGS as readonly string[]).includes(k));
    if (extra.length > 0) return `${where}: expected the languages ${langs}, got also ${extra.join(', ')}`;
    const en = placeholders(tt.en as string);
    const said = (ps: string[]) => (ps.length === 0 ? 'none' : ps.map((x) => `{${x}}`).join(', '));
    for (const l of MESSAGE_LANGS) {
      const p = placeholders(tt[l] as string);
      if (p.join() !== en.join()) return `${where}.${l}: expected the parameters of en (${said(en)}), got ${said(p)}`;
    }
  }
  return undefined;
}
