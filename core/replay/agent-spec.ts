// Which agent a replay runs: `default` (every installed rule, with the thresholds the live agent
// ran with), or a rules config file (JSON):
//
//   { "label": "reorder-8",                          // names the run in reports (default: file name)
//     "ruleFiles": ["./my-rule.ts"],                 // rules of one's own (below), relative to this file
//     "rules": ["assign-job", {"id": "stock-reorder", "version": "2"}],   // default: all rules
//     "config": { "defaultReorder": {"reorderPoint": 8, "orderUpTo": 20} } }   // AgentConfigInput
//
// A rule given with a version must be in force at that version (the replay refuses to pretend
// another version ran). Thresholds and the other tunables are core/agents' AgentConfig keys,
// validated by `agentConfig`. They change what the live agent ran with (the fixture's
// `liveAgent.config`, the site's config.json `agent` section at the export), key by key: a key
// given replaces the live one whole (`reorderByItem` too), the keys not given stay as live.
//
// A rule file is a module whose default export is one Rule or an array of Rules (core/agents
// rule.ts), loaded with import() (.ts and .mts through tsx's tsImport, also in the site's bundle). It is
// code the operator's own command runs on their own machine, as the rules config is: it is not
// sandboxed. Each rule is held to what the installed ones are: the checks the Agent makes when it
// starts (an id of lower-case letters, digits and '-', once; message ids under the rule's id),
// the Rule's fields and functions, and its messages in every language with the same parameters
// (as core/agents messages.test.ts checks the installed ones). A rule with an installed rule's id
// is a new version of it and takes its place in this run, only under a version of its own: two
// codes under one version would make the report call them the same. The run manifest records
// each file's path (as the config gives it) and the SHA-256 of its bytes beside its rules, so a
// report names the code that ran, and an edited file differs from the one before it.

import { readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentConfig, AgentConfigError, checkRuleSet, DEFAULT_RULES, MESSAGE_LANGS, placeholders, type AgentConfig, type AgentConfigInput, type Rule } from '../agents/index.ts';
import { repeatedKeyPath } from '../lsm/json-keys.ts';
import { sha256 } from './json.ts';

export interface AgentSpec {
  label: string;
  rules: readonly Rule[];
  /** The thresholds that differ from the live agent's (runReplay: `agentConfigFor`). */
  overrides: AgentConfigInput;
  /** What was asked for (file content or "default"), for the run manifest. */
  source: unknown;
  /** The rule files the config names, in its order (none for `default`). */
  ruleFiles: readonly RuleFile[];
}

/** A rule file as the run manifest records it: its path as the config gives it, its bytes' SHA-256, the ids of its rules. */
export interface RuleFile {
  path: string;
  sha256: string;
  rules: string[];
}

/** The rules of a config's rule files (openAgentSpec), and the files. */
export interface LoadedRuleFiles {
  files: RuleFile[];
  rules: Rule[];
}

export function defaultAgentSpec(): AgentSpec {
  return { label: 'default', rules: DEFAULT_RULES, overrides: {}, source: 'default', ruleFiles: [] };
}

const CONFIG_KEYS = ['label', 'ruleFiles', 'rules', 'config'];

/**
 * Parses a rules config object (see the file header). A config that names rule files needs their
 * rules, `loaded` (openAgentSpec loads them; the parse itself runs no code).
 */
export function agentSpecFrom(raw: unknown, fallbackLabel: string, loaded?: LoadedRuleFiles): AgentSpec {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('agent rules config: expected a JSON object with label, ruleFiles, rules, config');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!CONFIG_KEYS.includes(k)) throw new Error(`agent rules config: unknown key '${k}' (expected ${CONFIG_KEYS.join(', ')})`);
  const label = o.label === undefined ? fallbackLabel : o.label;
  if (typeof label !== 'string' || label.length === 0) throw new Error('agent rules config label: expected a non-empty string');
  if (o.ruleFiles !== undefined && loaded === undefined) throw new Error('agent rules config ruleFiles: rule files are loaded by openAgentSpec, not by this synchronous reader');
  // The rules in force: the installed ones, a file's new version in its installed rule's place
  // (the order the agent runs them in stays), a file's new rule after them.
  const inForce = new Map(DEFAULT_RULES.map((r) => [r.id, r]));
  for (const r of loaded?.rules ?? []) inForce.set(r.id, r);
  const fromFile = new Map((loaded?.files ?? []).flatMap((f) => f.rules.map((id) => [id, f.path] as const)));
  const named = (r: Rule) => `${r.id}@${r.version}${fromFile.has(r.id) ? ` (${fromFile.get(r.id)})` : ''}`;
  let rules: Rule[] = [...inForce.values()];
  if (o.rules !== undefined) {
    if (!Array.isArray(o.rules)) throw new Error('agent rules config rules: expected an array of rule ids or {id, version}');
    rules = o.rules.map((r, i) => {
      const id = typeof r === 'string' ? r : (r as { id?: unknown })?.id;
      const version = typeof r === 'string' ? undefined : (r as { version?: unknown })?.version;
      const rule = typeof id === 'string' ? inForce.get(id) : undefined;
      if (!rule) throw new Error(`agent rules config rules[${i}]: unknown rule ${JSON.stringify(id)} (installed${fromFile.size > 0 ? ' or from the rule files' : ''}: ${[...inForce.values()].map(named).join(', ')})`);
      if (version !== undefined && String(version) !== rule.version) throw new Error(`agent rules config rules[${i}]: ${rule.id} is ${fromFile.has(rule.id) ? `at version ${rule.version} in ${fromFile.get(rule.id)}` : `installed at version ${rule.version}`}, not ${JSON.stringify(version)}`);
      return rule;
    });
  }
  const overrides = (o.config ?? {}) as AgentConfigInput;
  try {
    agentConfig(overrides); // refused here, before a fixture is opened, not at the first run
  } catch (e) {
    // Named by its path in this file, as site config names it `agent.…` in config.json: the
    // thresholds sit under `config`, and agentConfig's "(top level)" is that key here.
    if (!(e instanceof AgentConfigError)) throw e;
    throw new Error(`agent rules config ${e.key === '(top level)' ? 'config' : `config.${e.key}`}: ${e.problem}`);
  }
  return { label, rules, overrides, source: raw, ruleFiles: loaded?.files ?? [] };
}

/** The config a replay's agent runs with: the live agent's (as the fixture recorded it) with the spec's overrides. */
export function agentConfigFor(spec: AgentSpec, live: AgentConfigInput | undefined): AgentConfig {
  return agentConfig({ ...live, ...spec.overrides });
}

/** A rules config file's JSON and the label its name gives. */
function readRulesConfig(arg: string): { raw: unknown; label: string } {
  let text: string;
  try {
    text = readFileSync(arg, 'utf8');
  } catch (e) {
    throw new Error(`--agent ${arg}: expected 'default' or a rules config file (${(e as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`--agent ${arg}: not JSON (${(e as Error).message})`);
  }
  const twice = repeatedKeyPath(text);
  if (twice !== undefined) throw new Error(`--agent ${arg}: '${twice}' is given twice; expected each key once (JSON would keep only the last)`);
  return { raw, label: basename(arg).replace(/\.json$/, '') };
}

/** `default`, or a path to a rules config file without rule files (one with them: openAgentSpec). */
export function loadAgentSpec(arg: string | undefined): AgentSpec {
  if (arg === undefined || arg === 'default') return defaultAgentSpec();
  const { raw, label } = readRulesConfig(arg);
  try {
    return agentSpecFrom(raw, label);
  } catch (e) {
    throw new Error(`--agent ${arg}: ${(e as Error).message}`);
  }
}

/** `default`, or a path to a rules config file, its rule files loaded and checked (what `replay run --agent` reads). */
export async function openAgentSpec(arg: string | undefined): Promise<AgentSpec> {
  if (arg === undefined || arg === 'default') return defaultAgentSpec();
  const { raw, label } = readRulesConfig(arg);
  try {
    const list = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>).ruleFiles : undefined;
    return agentSpecFrom(raw, label, list === undefined ? undefined : await loadRuleFiles(list, dirname(arg)));
  } catch (e) {
    throw new Error(`--agent ${arg}: ${(e as Error).message}`);
  }
}

const RULE_FILE = /\.(ts|mts|js|mjs)$/;
const RULE_SHAPE = 'a Rule (id, version, description, messages, evaluate, recheck, effectSeen; core/agents rule.ts)';

/**
 * Loads and checks a rules config's `ruleFiles` (paths relative to `dir`, the config's folder).
 * Each refusal names the file and what was expected.
 */
export async function loadRuleFiles(list: unknown, dir: string): Promise<LoadedRuleFiles> {
  if (!Array.isArray(list) || list.some((p) => typeof p !== 'string' || p.length === 0)) throw new Error('agent rules config ruleFiles: expected an array of paths to rule files (.ts, .mts, .js, .mjs), relative to the rules config');
  const files: RuleFile[] = [];
  const rules: Rule[] = [];
  const fileOf = new Map<string, string>();
  for (const path of list as string[]) {
    if (!RULE_FILE.test(path)) throw new Error(`rule file ${path}: expected a .ts, .mts, .js or .mjs file`);
    const abs = resolve(dir, path);
    let bytes: Buffer;
    try {
      bytes = readFileSync(abs);
    } catch (e) {
      throw new Error(`rule file ${path}: cannot be read (${(e as Error).message})`);
    }
    const hash = sha256(bytes);
    if (path.endsWith('.ts') && !inModuleScope(abs)) throw new Error(`rule file ${path}: a .ts file is loaded only under a package.json with "type": "module" (elsewhere Node takes it as CommonJS, and its default export is not the rule); name it .mts, or give it such a package.json`);
    let mod: { default?: unknown };
    try {
      // The hash in the URL: the code imported is the code hashed, also when the file was changed
      // since this process imported it (a module is imported once per URL).
      const url = `${pathToFileURL(abs).href}?sha256=${hash}`;
      mod = (/\.m?ts$/.test(path) ? await importTypeScript(url) : await import(url)) as { default?: unknown };
    } catch (e) {
      throw new Error(`rule file ${path}: cannot be loaded (${(e as Error).message.split('\n')[0]})`);
    }
    const exported = mod.default;
    if (exported === undefined) throw new Error(`rule file ${path}: expected a default export that is ${RULE_SHAPE} or an array of them; it has none`);
    const many = Array.isArray(exported);
    const own = (many ? exported : [exported]) as unknown[];
    if (own.length === 0) throw new Error(`rule file ${path}: expected a default export that is ${RULE_SHAPE} or an array of them; it is an empty array`);
    own.forEach((r, i) => {
      const problem = ruleProblem(r);
      if (problem !== undefined) throw new Error(`rule file ${path}: ${many ? `default export [${i}]` : 'default export'}: ${problem}`);
    });
    const fileRules = own as Rule[];
    try {
      // The checks the agent makes of its rules when it is made.
      checkRuleSet(fileRules);
    } catch (e) {
      throw new Error(`rule file ${path}: ${(e as Error).message}`);
    }
    const ids: string[] = [];
    for (const r of fileRules) {
      const installed = DEFAULT_RULES.find((x) => x.id === r.id);
      if (installed === r) continue; // the installed rule itself, exported again: nothing new
      if (installed?.version === r.version) throw new Error(`rule file ${path}: rule ${r.id} has the installed version ${r.version}; a new version of an installed rule needs a version of its own (expected another than ${r.version})`);
      const other = fileOf.get(r.id);
      if (other !== undefined) throw new Error(`rule file ${path}: rule ${r.id} is also in rule file ${other}; expected each rule once`);
      fileOf.set(r.id, path);
      ids.push(r.id);
      rules.push(r);
    }
    files.push({ path, sha256: hash, rules: ids });
  }
  return { files, rules };
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
function inModuleScope(file: string): boolean {
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
function ruleProblem(r: unknown): string | undefined {
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return `expected ${RULE_SHAPE}, got ${r === null ? 'null' : Array.isArray(r) ? 'an array' : typeof r}`;
  const o = r as Record<string, unknown>;
  const got = (v: unknown) => (typeof v === 'function' ? 'a function' : JSON.stringify(v) ?? String(v));
  if (typeof o.id !== 'string' || o.id.length === 0) return `id: expected a non-empty string of lower-case letters, digits and '-', got ${got(o.id)}`;
  if (typeof o.version !== 'string' || o.version.length === 0) return `rule ${o.id}: version: expected a non-empty string, got ${got(o.version)}`;
  if (typeof o.description !== 'string') return `rule ${o.id}: description: expected a string, got ${got(o.description)}`;
  for (const f of ['evaluate', 'recheck', 'effectSeen']) if (typeof o[f] !== 'function') return `rule ${o.id}: ${f}: expected a function, got ${got(o[f])}`;
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
