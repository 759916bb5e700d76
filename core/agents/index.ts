// core/agents — the work-queue agent and its rules (one file per rule). Agents read state
// through read-only handles and write proposals to core/inbox, never state. See DESIGN.md.
export { Agent, checkRuleSet, siteTablesRead, runIdAt, compareRunIds, newestRunTag, AGENT_TAG_PREFIX, DEFAULT_RECHECK_INTERVAL_MS, type AgentOptions, type AgentInbox, type RunResult } from './agent.ts';
export { position as stockPosition } from './rows.ts';
export { agentConfig, AgentConfigError, AGENT_CONFIG_KEYS, DEFAULT_AGENT_CONFIG, reorderLookup, reorderPolicy, reorderScope, jobDurationMs, type AgentConfig, type AgentConfigInput, type ItemReorderPolicy, type ReorderPolicy } from './config.ts';
export { AgentError, type AgentErrorKind } from './errors.ts';
export { readOnlyTable, type ReadOnlyTable, type Row, type RowChange, type ChangeKind } from './read-only-table.ts';
export { STATE_TABLES, HOLDS, gone, type Rule, type RuleContext, type ProposalDraft, type Recheck, type StateTable } from './rule.ts';
export { DEFAULT_RULES, assignJob, releaseBlockedJob, escalateLateJob, idleResource, stockReorder } from './rules/index.ts';
export { MESSAGE_LANGS, SHARED_MESSAGES, msg, renderMessage, messageCatalog, placeholders, translations, type MessageLang, type MessageTemplates, type ProposalTexts } from './messages.ts';
export { loadRuleFiles, ruleOrigins, rulesInForce, ruleProblem, RuleFileError, type LoadedRuleFiles, type RuleFile, type RuleOrigin } from './rule-files.ts';
