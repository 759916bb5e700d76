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
// rule.ts), loaded and checked by core/agents' `loadRuleFiles` (rule-files.ts), which a site's
// config.json `agent.ruleFiles` goes through too. It is code the operator's own command runs on
// their own machine, as the rules config is: it is not sandboxed. A rule with an installed rule's
// id is a new version of it and takes its place in this run (core/agents `rulesInForce`, the
// composition a site runs), only under a version of its own: two codes under one version would
// make the report call them the same. The run manifest records
// each file's path (as the config gives it) and the SHA-256 of its bytes beside its rules, so a
// report names the code that ran, and an edited file differs from the one before it.

import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { agentConfig, AgentConfigError, DEFAULT_RULES, loadRuleFiles, rulesInForce, type AgentConfig, type AgentConfigInput, type LoadedRuleFiles, type Rule, type RuleFile } from '../agents/index.ts';
import { repeatedKeyPath } from '../lsm/json-keys.ts';

export type { LoadedRuleFiles, RuleFile };

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
  const inForce = new Map(rulesInForce(loaded?.rules ?? []).map((r) => [r.id, r]));
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
    return agentSpecFrom(raw, label, list === undefined ? undefined : await configRuleFiles(list, dirname(arg)));
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
