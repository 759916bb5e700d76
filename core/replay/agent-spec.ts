// Which agent a replay runs: `default` (every installed rule, with the thresholds the live agent
// ran with), or a rules config file (JSON):
//
//   { "label": "reorder-8",                          // names the run in reports (default: file name)
//     "rules": ["assign-job", {"id": "stock-reorder", "version": "2"}],   // default: all rules
//     "config": { "defaultReorder": {"reorderPoint": 8, "orderUpTo": 20} } }   // AgentConfigInput
//
// A rule given with a version must be installed at that version (the replay refuses to pretend
// another version ran). Thresholds and the other tunables are core/agents' AgentConfig keys,
// validated by `agentConfig`. They change what the live agent ran with (the fixture's
// `liveAgent.config`, the site's config.json `agent` section at the export), key by key: a key
// given replaces the live one whole (`reorderByItem` too), the keys not given stay as live.

import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { agentConfig, AgentConfigError, DEFAULT_RULES, type AgentConfig, type AgentConfigInput, type Rule } from '../agents/index.ts';
import { repeatedKeyPath } from '../lsm/json-keys.ts';

export interface AgentSpec {
  label: string;
  rules: readonly Rule[];
  /** The thresholds that differ from the live agent's (runReplay: `agentConfigFor`). */
  overrides: AgentConfigInput;
  /** What was asked for (file content or "default"), for the run manifest. */
  source: unknown;
}

export function defaultAgentSpec(): AgentSpec {
  return { label: 'default', rules: DEFAULT_RULES, overrides: {}, source: 'default' };
}

/** Parses a rules config object (see the file header). */
export function agentSpecFrom(raw: unknown, fallbackLabel: string): AgentSpec {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('agent rules config: expected a JSON object with label, rules, config');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!['label', 'rules', 'config'].includes(k)) throw new Error(`agent rules config: unknown key '${k}' (expected label, rules, config)`);
  const label = o.label === undefined ? fallbackLabel : o.label;
  if (typeof label !== 'string' || label.length === 0) throw new Error('agent rules config label: expected a non-empty string');
  let rules: Rule[] = [...DEFAULT_RULES];
  if (o.rules !== undefined) {
    if (!Array.isArray(o.rules)) throw new Error('agent rules config rules: expected an array of rule ids or {id, version}');
    rules = o.rules.map((r, i) => {
      const id = typeof r === 'string' ? r : (r as { id?: unknown })?.id;
      const version = typeof r === 'string' ? undefined : (r as { version?: unknown })?.version;
      const rule = DEFAULT_RULES.find((x) => x.id === id);
      if (!rule) throw new Error(`agent rules config rules[${i}]: unknown rule ${JSON.stringify(id)} (installed: ${DEFAULT_RULES.map((x) => `${x.id}@${x.version}`).join(', ')})`);
      if (version !== undefined && String(version) !== rule.version) throw new Error(`agent rules config rules[${i}]: ${rule.id} is installed at version ${rule.version}, not ${JSON.stringify(version)}`);
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
  return { label, rules, overrides, source: raw };
}

/** The config a replay's agent runs with: the live agent's (as the fixture recorded it) with the spec's overrides. */
export function agentConfigFor(spec: AgentSpec, live: AgentConfigInput | undefined): AgentConfig {
  return agentConfig({ ...live, ...spec.overrides });
}

/** `default`, or a path to a rules config file. */
export function loadAgentSpec(arg: string | undefined): AgentSpec {
  if (arg === undefined || arg === 'default') return defaultAgentSpec();
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
  try {
    return agentSpecFrom(raw, basename(arg).replace(/\.json$/, ''));
  } catch (e) {
    throw new Error(`--agent ${arg}: ${(e as Error).message}`);
  }
}
