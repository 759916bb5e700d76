// Which agent a replay runs: `default` (the rules the live site ran, with the thresholds the live
// agent ran with), or a rules config file (JSON):
//
//   { "label": "reorder-8",                          // names the run in reports (default: file name)
//     "base": "live",                                // what its rules start from (below; default "live")
//     "ruleFiles": ["./my-rule.ts"],                 // rules of one's own (below), relative to this file
//     "rules": ["assign-job", {"id": "stock-reorder", "version": "2"}],   // default: all rules
//     "config": { "defaultReorder": {"reorderPoint": 8, "orderUpTo": 20} } }   // AgentConfigInput
//
// A candidate is the live agent with the config's changes, its rules as its thresholds. `base`
// says what its rules start from: "live" (the default), the rules the live site ran — the
// installed ones with the live site's own rule files the fixture holds (`liveAgent.ruleFiles`),
// composed by core/agents `rulesInForce` as the site composed them —, or "installed", the
// installed rules only. The config's own rule files go on top of that (`withLiveRules`). The live
// site's files are code that came with the fixture: a replay runs them only when told
// (`--run-rule-files`), for a rules config as for `default`. A fixture without them runs the same
// rules whatever the base. `rules` picks from the composed set, so a rule only a live file has can
// be named; until the fixture is opened an entry none of the installed rules and the config's
// files has is `pending` (refused then if the live files do not have it either).
//
// A rule given with a version must be in force at that version (the replay refuses to pretend
// another version ran). Thresholds and the other tunables are core/agents' AgentConfig keys,
// validated by `agentConfig`. They change what the live agent ran with (the fixture's
// `liveAgent.config`, the site's config.json `agent` section at the export), key by key: a key
// given replaces the live one whole (`reorderByItem` too), the keys not given stay as live.
//
// A rule file is a module whose default export is one Rule or an array of Rules (core/agents
// rule.ts), loaded and checked by core/agents' `loadRuleFiles` (rule-files.ts), which a site's
// config.json `agent.ruleFiles` goes through too. It is code the operator's own command runs on
// their own machine, as the rules config is: it is not sandboxed. A rule with an installed rule's
// id — or, on base "live", a live rule file's — is a new version of it and takes its place in this
// run (core/agents `rulesInForce`, the composition a site runs), only under a version of its own:
// two codes under one version would make the report call them the same. The run manifest records
// each file's path (as the config gives it) and the SHA-256 of its bytes beside its rules, so a
// report names the code that ran, and an edited file differs from the one before it.

import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { agentConfig, AgentConfigError, DEFAULT_RULES, loadRuleFiles, rulesInForce, type AgentConfig, type AgentConfigInput, type LoadedRuleFiles, type Rule, type RuleFile } from '../agents/index.ts';
import { repeatedKeyPath } from '../lsm/json-keys.ts';

export type { LoadedRuleFiles, RuleFile };

/** What a rules config's rules start from (`base`): the rules the live site ran, or the installed rules only. */
export type AgentBase = 'live' | 'installed';
const BASES: readonly AgentBase[] = ['live', 'installed'];

export interface AgentSpec {
  label: string;
  /**
   * The rules it runs: before the fixture is opened, those of the installed rules and the config's
   * own files (what it runs on a fixture without live rule files, or on base "installed");
   * `withLiveRules` composes them with the fixture's live rule files.
   */
  rules: readonly Rule[];
  /** The thresholds that differ from the live agent's (runReplay: `agentConfigFor`). */
  overrides: AgentConfigInput;
  /** What was asked for (file content or "default"), for the run manifest. */
  source: unknown;
  /** The rule files whose rules it runs, in their order: the live site's (once composed), then the config's (none for `default`). */
  ruleFiles: readonly RuleFile[];
  /** What its rules start from; `default` is the live site's rules. */
  base: AgentBase;
  /** The rules of the config's own files (loadRuleFiles), which go on top of the base. */
  ownRules: readonly Rule[];
  /** The live site's rule files among `ruleFiles` (set by `withLiveRules`, when they run). */
  liveRuleFiles?: readonly RuleFile[];
  /** The config's `rules` as given (absent: every rule in force), applied again to the composed set. */
  select?: readonly unknown[];
  /** The rules config file (`--agent <file>`), which the refusals made once the fixture is opened name. */
  file?: string;
  /**
   * A `rules` entry that neither the installed rules nor the config's own files have at that
   * version, on base "live": the refusal, made once the fixture is opened unless the fixture's live
   * rule files have it (`withLiveRules`).
   */
  pending?: string;
}

/**
 * A rules config refused once the fixture is opened: a `rules` entry the composed rules do not
 * have, or a config's rule file rule under a live rule file's version. A bad option, as the
 * refusals before it are.
 */
export class AgentSpecRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentSpecRefused';
  }
}

export function defaultAgentSpec(): AgentSpec {
  return { label: 'default', rules: DEFAULT_RULES, overrides: {}, source: 'default', ruleFiles: [], base: 'live', ownRules: [] };
}

const CONFIG_KEYS = ['label', 'base', 'ruleFiles', 'rules', 'config'];

/**
 * The rules a config's `rules` (`select`, as given: ids or {id, version}) picks from `inForce`
 * (every one of them without `select`), each in force at the version it names; `fileOf` names the
 * rule file a rule came from, and whether it is the live site's, for the refusals. An entry it
 * cannot pick is refused (thrown), unless `canWait` says the live site's rule files, not loaded
 * yet, may have it: the first such refusal is `pending`, and the entry is left out.
 */
function selectRules(
  inForce: readonly Rule[],
  select: readonly unknown[] | undefined,
  fileOf: ReadonlyMap<string, { path: string; live: boolean }>,
  canWait: (id: unknown) => boolean = () => false,
): { rules: Rule[]; pending?: string } {
  if (select === undefined) return { rules: [...inForce] };
  const byId = new Map(inForce.map((r) => [r.id, r]));
  const from = (id: string) => {
    const f = fileOf.get(id)!;
    return f.live ? `the live site's rule file ${f.path}` : f.path;
  };
  const named = (r: Rule) => `${r.id}@${r.version}${fileOf.has(r.id) ? ` (${from(r.id)})` : ''}`;
  const files = [...fileOf.values()];
  const kinds = ['installed', ...(files.some((f) => f.live) ? ["from the live site's rule files"] : []), ...(files.some((f) => !f.live) ? ['from the rule files'] : [])];
  const known = kinds.length === 1 ? kinds[0] : `${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}`;
  const rules: Rule[] = [];
  let pending: string | undefined;
  /** The entry that named each id first: one named again would run twice in one agent, refused by it only once the fixture was opened. */
  const namedAt = new Map<string, number>();
  for (const [i, r] of select.entries()) {
    const id = typeof r === 'string' ? r : (r as { id?: unknown })?.id;
    const version = typeof r === 'string' ? undefined : (r as { version?: unknown })?.version;
    if (typeof id === 'string') {
      if (namedAt.has(id)) throw new Error(`agent rules config rules[${i}]: ${id} is named twice (rules[${namedAt.get(id)}] names it)`);
      namedAt.set(id, i);
    }
    const rule = typeof id === 'string' ? byId.get(id) : undefined;
    let problem: string | undefined;
    if (!rule) problem = `agent rules config rules[${i}]: unknown rule ${JSON.stringify(id)} (${known}: ${inForce.map(named).join(', ')})`;
    else if (version !== undefined && String(version) !== rule.version) problem = `agent rules config rules[${i}]: ${rule.id} is ${fileOf.has(rule.id) ? `at version ${rule.version} in ${from(rule.id)}` : `installed at version ${rule.version}`}, not ${JSON.stringify(version)}`;
    if (problem === undefined) rules.push(rule!);
    else if (!canWait(id)) throw new Error(problem);
    else pending ??= problem;
  }
  return { rules, ...(pending !== undefined ? { pending } : {}) };
}

/** The rule file each rule of `files` came from (a later file's in place of an earlier one's: the composition's order). */
function filesOf(files: readonly RuleFile[], live: readonly RuleFile[]): Map<string, { path: string; live: boolean }> {
  return new Map(files.flatMap((f) => f.rules.map((id) => [id, { path: f.path, live: live.includes(f) }] as const)));
}

/**
 * Parses a rules config object (see the file header). A config that names rule files needs their
 * rules, `loaded` (openAgentSpec loads them; the parse itself runs no code). `file`, the config's
 * path, names it in the refusals made later (`withLiveRules`), as the caller names it in those
 * thrown here (`--agent <file>: …`).
 */
export function agentSpecFrom(raw: unknown, fallbackLabel: string, loaded?: LoadedRuleFiles, file?: string): AgentSpec {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('agent rules config: expected a JSON object with label, base, ruleFiles, rules, config');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!CONFIG_KEYS.includes(k)) throw new Error(`agent rules config: unknown key '${k}' (expected ${CONFIG_KEYS.join(', ')})`);
  const label = o.label === undefined ? fallbackLabel : o.label;
  if (typeof label !== 'string' || label.length === 0) throw new Error('agent rules config label: expected a non-empty string');
  const base = o.base === undefined ? 'live' : o.base;
  if (!BASES.includes(base as AgentBase)) throw new Error(`agent rules config base: expected "live" (the rules the live site ran: the installed ones and the site's own rule files the fixture holds; the default) or "installed" (the installed rules only), got ${JSON.stringify(base)}`);
  if (o.ruleFiles !== undefined && loaded === undefined) throw new Error('agent rules config ruleFiles: rule files are loaded by openAgentSpec, not by this synchronous reader');
  if (o.rules !== undefined && !Array.isArray(o.rules)) throw new Error('agent rules config rules: expected an array of rule ids or {id, version}');
  const select = o.rules as unknown[] | undefined;
  // The rules in force without the live site's files: the installed ones, a file's new version in
  // its installed rule's place (the order the agent runs them in stays), a file's new rule after
  // them. On base "live" withLiveRules composes them again once the fixture's files are loaded.
  // On base "live" the fixture's live rule files may have a rule the entry names (at that
  // version), known once the fixture is opened: refused then if they do not. Not one of the
  // config's own files' rules, which go on top of the live ones whatever they hold.
  const files = loaded?.files ?? [];
  const own = new Set((loaded?.rules ?? []).map((r) => r.id));
  const picked = selectRules(rulesInForce(loaded?.rules ?? []), select, filesOf(files, []), (id) => base === 'live' && typeof id === 'string' && !own.has(id));
  const rules = picked.rules;
  const pending = picked.pending === undefined ? undefined : `${file !== undefined ? `--agent ${file}: ` : ''}${picked.pending}`;
  const overrides = (o.config ?? {}) as AgentConfigInput;
  try {
    agentConfig(overrides); // refused here, before a fixture is opened, not at the first run
  } catch (e) {
    // Named by its path in this file, as site config names it `agent.…` in config.json: the
    // thresholds sit under `config`, and agentConfig's "(top level)" is that key here.
    if (!(e instanceof AgentConfigError)) throw e;
    throw new Error(`agent rules config ${e.key === '(top level)' ? 'config' : `config.${e.key}`}: ${e.problem}`);
  }
  return {
    label,
    rules,
    overrides,
    source: raw,
    ruleFiles: files,
    base: base as AgentBase,
    ownRules: loaded?.rules ?? [],
    ...(select !== undefined ? { select } : {}),
    ...(file !== undefined ? { file } : {}),
    ...(pending !== undefined ? { pending } : {}),
  };
}

/**
 * The spec a replay runs on a fixture: with `live`, the live site's rule files (loaded from the
 * fixture, named by their paths on the site) when they run — the spec's base is "live" and the
 * fixture holds some —, undefined otherwise. On base "live" the rules are the installed ones with
 * the live files' (core/agents `rulesInForce`, as the site composed them) and the config's own
 * files' on top, in one composition: a config's rule with a live rule's id is a new version of it
 * in its place, and must have a version of its own (as a new version of an installed rule must,
 * loadRuleFiles); then `rules` picks from that. Refusals are AgentSpecRefused.
 */
export function withLiveRules(spec: AgentSpec, live: LoadedRuleFiles | undefined): AgentSpec {
  const where = spec.file !== undefined ? `--agent ${spec.file}: ` : '';
  if (live === undefined || spec.base !== 'live') {
    if (spec.pending !== undefined) throw new AgentSpecRefused(spec.pending);
    return spec;
  }
  const liveRule = new Map(live.rules.map((r) => [r.id, r]));
  const liveFile = filesOf(live.files, live.files);
  for (const f of spec.ruleFiles) {
    for (const id of f.rules) {
      const own = spec.ownRules.find((r) => r.id === id);
      const was = liveRule.get(id);
      if (own === undefined || was === undefined || own.version !== was.version) continue;
      throw new AgentSpecRefused(
        `${where}rule file ${f.path}: rule ${id} has the version ${was.version} of the live site's rule file ${liveFile.get(id)!.path}; a new version of a live rule needs a version of its own (expected another than ${was.version}), or "base": "installed" to run the config's rules without the live site's rule files`,
      );
    }
  }
  const ruleFiles = [...live.files, ...spec.ruleFiles];
  let rules: Rule[];
  try {
    rules = selectRules(rulesInForce([...live.rules, ...spec.ownRules]), spec.select, filesOf(ruleFiles, live.files)).rules;
  } catch (e) {
    throw new AgentSpecRefused(`${where}${(e as Error).message}`);
  }
  const composed: AgentSpec = { ...spec, rules, ruleFiles, liveRuleFiles: live.files };
  delete composed.pending;
  return composed;
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
    return agentSpecFrom(raw, label, undefined, arg);
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
    return agentSpecFrom(raw, label, list === undefined ? undefined : await configRuleFiles(list, dirname(arg)), arg);
  } catch (e) {
    throw new Error(`--agent ${arg}: ${(e as Error).message}`);
  }
}

/**
 * Loads and checks a rules config's `ruleFiles` (paths relative to `dir`, the config's folder)
 * through core/agents' loader, as a site loads its config.json `agent.ruleFiles`. Each refusal
 * names the file and what was expected.
 */
async function configRuleFiles(list: unknown, dir: string): Promise<LoadedRuleFiles> {
  if (!Array.isArray(list) || list.some((p) => typeof p !== 'string' || p.length === 0)) throw new Error('agent rules config ruleFiles: expected an array of paths to rule files (.ts, .mts, .js, .mjs), relative to the rules config');
  return loadRuleFiles(list as string[], dir);
}
