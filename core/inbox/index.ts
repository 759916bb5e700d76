// core/inbox — proposals, decisions, users and roles, write-back commands. This file names its
// public surface: users and roles; proposals, decisions, the decision log and the write-back.
export { UserStore, UserError, ROLES, nameProblem, isPin, guessablePin, guessablePinMessage, type Role, type User, type NewUser, type SignInResult, type UserStoreOptions } from './users.ts';
export { hashSecret, verifySecret, lookupHash, DEFAULT_SCRYPT, type ScryptParams } from './secret-hash.ts';
// Proposals, decisions and the write-back (the approval inbox; see DESIGN.md).
export { InboxError, type InboxErrorKind, type RefusalReason } from './errors.ts';
export {
  PROPOSAL_STATUSES,
  RISK_LEVELS,
  DECISIONS,
  COMMAND_STATES,
  statusOf,
  isActive,
  PROPOSAL_MESSAGE_KEYS,
  isMessage,
  situationKey,
  canonicalJson,
  writeBackWords,
  type Json,
  type ProposalStatus,
  type RiskLevel,
  type DecisionVerb,
  type DecisionKind,
  type CommandState,
  type EvidenceRow,
  type EvidenceTable,
  type ProposalInput,
  type Message,
  type ProposalMessages,
  type Proposal,
  type Decision,
  type CommandProgress,
} from './proposal.ts';
export {
  APPROVAL_INBOX_TABLE,
  DECISION_LOG_TABLE,
  APPROVAL_INBOX_SPEC,
  DECISION_LOG_SPEC,
  agentColumns,
  decisionColumns,
  proposalFromRow,
  rowRecord,
  type InboxRow,
} from './inbox-tables.ts';
export {
  Inbox,
  DECIDER_ROLES,
  commandTopic,
  siteOfDatabase,
  openInboxTables,
  readProposal,
  readProposals,
  readActiveCounts,
  newestFirst,
  decisionTagName,
  DECISION_TAG_PREFIX,
  checkedTagName,
  CHECKED_TAG_PREFIX,
  FAILURES_TO_QUIET,
  HELD_BASELINES_PROPERTY,
  type CommandFailure,
  type EndedCommand,
  type InboxOptions,
  type DecideOptions,
  type DecideResult,
  type RecheckOutcome,
  type Snapshots,
  type HeldBaselines,
  type SubmitBatch,
  type SubmitResult,
  type ProposalFilter,
  type ActiveCounts,
} from './inbox.ts';
export { CONFIG_CHANGED_EVENT, DecisionLog, decisionLogNextId, readConfigChanges, readDecisionLog, type ConfigChange, type DecisionLogEntry } from './decision-log.ts';
export { LOST_APPROVAL_ACK_WINDOW_MS, proposalsWithoutCommandAt, WriteBack, type WriteBackOptions } from './write-back.ts';
export { checkedReport, compareCited, evidenceReport, evidenceRows, formatEvidence, sequenceColumns, type EvidenceCheckedReport, type EvidenceReport, type EvidenceTableReport } from './evidence.ts';
