// The agent and inbox commands of `tilstand` (dispatched from main.ts through AGENT_COMMANDS):
//
//   tilstand proposals [--data <dir>] [--status <s>] [--limit <n>] [--json]
//   tilstand decide <proposal> approve|reject|defer --user <name> --pin <pin> [--comment <text>] [--data <dir>] [--json]
//   tilstand agent run [--data <dir>] [--json]
//   tilstand evidence <proposal> [--data <dir>] [--all] [--json]
//
// Reading (proposals, evidence) works on the directory whether or not a site runs (readers need
// no lock). Changing (decide, agent run) goes through the running site's control socket (ops
// `inbox.decide`, `agent.run`, registered with `agentControlHandlers`); when no site runs it
// opens the directory itself: the ingest half (journal replay; freshen = commitAll), the inbox
// and the agent. An approval made that way has no broker to send on: its command stays
// `pending` and is sent by the site's WriteBack.resume() at its next start.

import { CliError, EXIT, parseArgs, type FlagSpecs, type ParsedArgs } from '../../lsm/cli/args.ts';
import { bidiControlIn, bidiControlProblem } from '../api-validate.ts';
import { Catalog } from '../../lsm/index.ts';
import { Agent, rulesInForce, type RunResult } from '../../agents/index.ts';
import {
  APPROVAL_INBOX_TABLE,
  DECISIONS,
  evidenceReport,
  formatEvidence,
  Inbox,
  InboxError,
  PROPOSAL_STATUSES,
  readProposals,
  UserStore,
  type DecideResult,
  type DecisionVerb,
  type Proposal,
  type ProposalStatus,
} from '../../inbox/index.ts';
import { catalogOptions, dataPaths, decisionOptions, loadSiteRuleFiles, readConfig, siteTableNames } from '../config.ts';
import { controlRequest, ControlError, type ControlHandler } from '../control.ts';
import { openIngest } from '../open-ingest.ts';
import { openSiteDb } from '../site-db.ts';
import { existingDataDir, json, positiveInt, print, refuseExtraArguments, runningSocket, subcommand, type CliIO } from './common.ts';

export const agentUsage = [
  '  tilstand proposals [--data <dir>] [--status open|deferred|approved|rejected|stale|withdrawn] [--limit <n>] [--json]   without --status: those waiting for a decision (open, deferred) first, then the rest; newest first in each',
  '  tilstand decide <proposal> approve|reject|defer --user <name> --pin <pin> [--comment <text>] [--data <dir>] [--json]',
  '  tilstand agent run [--data <dir>] [--json]      one agent run now',
  '  tilstand evidence <proposal> [--data <dir>] [--all] [--json]   what the agent saw, what an approval was checked against, and the decision trail (--all: also every row of each cited table at its tag)',
];

const DATA: FlagSpecs = { data: { type: 'string', value: '<dir>' } };
const JSON_FLAG: FlagSpecs = { json: { type: 'boolean' } };

/** The flags each command takes; its usage line in `agentUsage` shows each (usage-flags.test.ts). */
export const AGENT_FLAGS = {
  proposals: { ...DATA, status: { type: 'string', value: '<status>' }, limit: { type: 'string', value: '<n>' }, ...JSON_FLAG },
  decide: { ...DATA, user: { type: 'string', value: '<name>' }, pin: { type: 'string', value: '<pin>' }, comment: { type: 'string', value: '<text>' }, ...JSON_FLAG },
  agent: { ...DATA, ...JSON_FLAG },
  evidence: { ...DATA, all: { type: 'boolean' }, ...JSON_FLAG },
} as const satisfies Record<string, FlagSpecs>;

/** The parsed flags, or undefined when the usage was asked for (and printed); arguments beyond the `takes` the command reads are refused. */
async function parse(argv: string[], specs: FlagSpecs, command: string, io: CliIO, takes = 0): Promise<ParsedArgs | undefined> {
  const a = parseArgs(argv, specs, command);
  if (a.help) {
    await print(io.stdout, ['usage:', ...agentUsage.filter((l) => l.includes(`tilstand ${command.split(' ')[0]} `))]);
    return undefined;
  }
  refuseExtraArguments(a, command, takes);
  return a;
}

/** A proposal id argument; an empty one (`"$ID"` unset) was looked up and "proposal  does not exist", exit 1. */
function proposalId(id: string): string {
  if (id.trim() === '') throw new CliError(EXIT.usage, `expected a proposal id (\`tilstand proposals\` lists them), got '${id}'`);
  return id;
}

function cliErrorOf(e: unknown): unknown {
  if (e instanceof InboxError) {
    const code = e.kind === 'NotFound' ? EXIT.notFound : e.kind === 'InvalidArgument' ? EXIT.usage : EXIT.conflict;
    return new CliError(code, e.message);
  }
  if (e instanceof ControlError && e.kind === 'UnknownOp') {
    return new CliError(EXIT.conflict, `the running site does not offer this yet (${e.message}); it needs agentControlHandlers registered — or stop it and run the command on the directory`);
  }
  // InboxError kinds travel through the control socket as the error's kind.
  const kind = e instanceof ControlError ? (e.kind as string) : undefined;
  if (kind === 'Refused' || kind === 'Conflict' || kind === 'NotFound') return new CliError(kind === 'NotFound' ? EXIT.notFound : EXIT.conflict, (e as Error).message);
  return e;
}

/** The site PC's local time with its UTC offset (`2026-12-01 17:07:50 +01:00`): what the floor's clocks say, and unambiguous. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const p2 = (n: number) => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${sign}${p2(Math.floor(a / 60))}:${p2(a % 60)}`;
}

function proposalLines(list: readonly Proposal[]): string[] {
  if (list.length === 0) return ['no proposals'];
  return list.map((p) => {
    const progress = p.command ? ` [${p.command.state}]` : '';
    const by = p.decision && p.status !== 'withdrawn' ? ` by ${p.decision.by}` : '';
    return `${p.id}  ${p.status}${by}${progress}  ${localTime(p.createdAtMs)}  ${p.risk}  ${p.action} ${JSON.stringify(p.params)}\n    ${p.explanation}`;
  });
}

export async function runProposals(argv: string[], io: CliIO): Promise<number> {
  const a = await parse(argv, AGENT_FLAGS.proposals, 'proposals', io);
  if (!a) return EXIT.ok;
  const status = a.string('status');
  if (status !== undefined && !(PROPOSAL_STATUSES as readonly string[]).includes(status)) throw new CliError(EXIT.usage, `option '--status': expected one of ${PROPOSAL_STATUSES.join(', ')}, got '${status}'`);
  // Checked here, not where it is used: a new site has no approval_inbox table yet.
  const limit = positiveInt(a.string('limit'), 'limit', 1) ?? 100;
  const data = existingDataDir(a.string('data'));
  const config = readConfig(data);
  const p = dataPaths(data, config.site);
  const catalog = new Catalog(p.warehouse, catalogOptions(config));
  const id = { database: p.database!, table: APPROVAL_INBOX_TABLE };
  // Without --status, every status: those waiting for a decision first, then the decided,
  // withdrawn and stale ones, newest first in each (one read, at one snapshot). Newest first over
  // all of them buried an open proposal under the withdrawn ones an agent run leaves (a busy demo
  // withdraws several a minute), and a shift lead asks this list what waits for them.
  const list = !catalog.tableExists(id) ? [] : readProposals(catalog.getTable(id), status ? { status: status as ProposalStatus, limit } : { waitingFirst: true, limit });
  await print(io.stdout, a.boolean('json') ? [json(list)] : proposalLines(list));
  return EXIT.ok;
}

export async function runEvidence(argv: string[], io: CliIO): Promise<number> {
  const a = await parse(argv, AGENT_FLAGS.evidence, 'evidence', io, 1);
  if (!a) return EXIT.ok;
  const [proposal] = a.positionals;
  if (proposal === undefined) throw new CliError(EXIT.usage, 'expected: tilstand evidence <proposal> [--data <dir>] [--all] [--json]');
  proposalId(proposal);
  const data = existingDataDir(a.string('data'));
  const config = readConfig(data);
  const p = dataPaths(data, config.site);
  try {
    const r = evidenceReport(new Catalog(p.warehouse, catalogOptions(config)), p.database!, proposal, { allRows: a.boolean('all') });
    await print(io.stdout, a.boolean('json') ? [json(r)] : evidenceLines(r));
  } catch (e) {
    throw cliErrorOf(e);
  }
  return EXIT.ok;
}

/**
 * Says once, under the report's header line, which zone its times are in. Its instants end in Z,
 * but a row's TIMESTAMP value carries no zone (`"due_at":"2026-12-06T05:52:37.135"`: the table
 * keeps the UTC wall clock, core/lsm types.ts), and beside an explanation's `…Z` it read as the
 * PC's local time. The rows stay as stored, and --json as it is: machines read it.
 */
export const EVIDENCE_TIMES_LINE = "  times      UTC: the instants (…Z) and the rows' TIMESTAMP values, which carry no zone";

function evidenceLines(r: ReturnType<typeof evidenceReport>): string[] {
  const [header, ...rest] = formatEvidence(r);
  return header === undefined ? [] : [header, EVIDENCE_TIMES_LINE, ...rest];
}

/** The directory opened in-process when no site runs: ingest (for freshness), inbox, agent. */
async function withOffline<T>(data: string, f: (x: { inbox: Inbox; agent: Agent }) => Promise<T>): Promise<T> {
  const config = readConfig(data);
  // The rules the site runs, its rule files' too (config agent.ruleFiles): with the installed ones
  // alone an approval of a file rule's proposal was found stale ("not installed any more"), and a
  // run withdrew its open proposals. Loaded before anything opens; a refused file is a bad config.
  const rules = rulesInForce((await loadSiteRuleFiles(config, data)).rules);
  const p = dataPaths(data, config.site);
  const ingest = openIngest(data, config, { onWarning: () => undefined });
  const db = openSiteDb(p.siteDb);
  let inbox: Inbox | undefined;
  try {
    ingest.ingestor.commitAll();
    let agent!: Agent;
    inbox = Inbox.open({
      catalog: ingest.catalog,
      database: p.database!,
      users: new UserStore(db),
      freshen: () => ingest.ingestor.commitAll(),
      recheck: (x) => agent.recheck(x),
      reevaluate: () => void agent.run(),
      decisionEvidenceRetentionMs: decisionOptions(config).decisionEvidenceRetentionMs,
      onWarning: () => undefined,
    });
    // Every rule the site runs, as the site's agent (core/site decisions.ts): a run withdraws the
    // open proposals of a rule not among them.
    agent = new Agent({ catalog: ingest.catalog, database: p.database!, inbox, config: decisionOptions(config).agent, rules, siteTables: siteTableNames(config), withdrawNotInstalled: true, onWarning: () => undefined });
    return await f({ inbox, agent });
  } finally {
    inbox?.close();
    ingest.ingestor.close();
    ingest.journal.close();
    db.close();
  }
}

export async function runDecide(argv: string[], io: CliIO): Promise<number> {
  const a = await parse(argv, AGENT_FLAGS.decide, 'decide', io, 2);
  if (!a) return EXIT.ok;
  const [proposal, verb] = a.positionals;
  if (proposal === undefined || verb === undefined) throw new CliError(EXIT.usage, 'expected: tilstand decide <proposal> approve|reject|defer --user <name> --pin <pin>');
  proposalId(proposal);
  if (!(DECISIONS as readonly string[]).includes(verb)) throw new CliError(EXIT.usage, `expected approve, reject or defer, got '${verb}'`);
  const comment = a.string('comment');
  const bidi = comment === undefined ? undefined : bidiControlIn(comment);
  if (bidi !== undefined) throw new CliError(EXIT.usage, `option '--comment': ${bidiControlProblem(bidi)}`);
  const args = { proposal, decision: verb, user: a.required('user'), pin: a.required('pin'), ...(comment !== undefined ? { comment } : {}) };
  const data = existingDataDir(a.string('data'));
  const socket = await runningSocket(data);
  let r: DecideResult;
  try {
    r = socket
      ? ((await controlRequest(socket, 'inbox.decide', args, 60_000)) as DecideResult)
      : await withOffline(data, ({ inbox }) => inbox.decide(proposal, verb as DecisionVerb, { user: args.user, pin: args.pin, ...(args.comment !== undefined ? { comment: args.comment } : {}) }));
  } catch (e) {
    throw cliErrorOf(e);
  }
  if (a.boolean('json')) await print(io.stdout, [json(r)]);
  else {
    const lines = [`${r.proposal.id}: ${r.outcome}${r.outcome === 'stale' ? ` — ${r.reason}; nothing was sent, the agent looks again` : ''}`];
    if (r.outcome === 'approved' && r.proposal.command) lines.push(`  command ${r.proposal.command.state} on ${r.proposal.command.topic}${socket ? '' : ' (no site running: it is sent when the site starts)'}`);
    await print(io.stdout, lines);
  }
  return r.outcome === 'stale' ? EXIT.conflict : EXIT.ok;
}

/** What the running site's `agent.run` op answers. */
type RunSummary = { ok: true; runId: string; created: number; withdrawn: number } | { ok: false; message: string };

function runLines(r: RunResult): string[] {
  return [
    `agent run ${r.runId}: ${r.created.length} new, ${r.duplicates.length} already open, ${r.suppressed.length} recently decided, ${r.withdrawn.length} withdrawn`,
    `  snapshots ${Object.entries(r.snapshots).map(([t, s]) => `${t}=${s ?? '-'}`).join(' ')} (tag agent-${r.runId})`,
    ...r.created.map((p) => `  + ${p.id} ${p.action} ${JSON.stringify(p.params)}`),
    ...r.withdrawn.map((p) => `  - ${p.id} ${p.withdrawnReason}`),
    ...r.ruleErrors.map((e) => `  ! rule ${e.ruleId}: ${e.message}`),
    // What a rule left out and why (absent from a site older than RunResult.notes).
    ...(r.notes ?? []).map((n) => `  note from rule ${n.ruleId}: ${n.message}`),
  ];
}

export async function runAgent(argv: string[], io: CliIO): Promise<number> {
  // The subcommand as the other groups take it (`agent --data X run`, `agent --help`).
  const [sub, rest] = subcommand(argv, AGENT_FLAGS.agent);
  const a = await parse(rest, AGENT_FLAGS.agent, 'agent', io);
  if (!a) return EXIT.ok;
  if (sub !== 'run') throw new CliError(EXIT.usage, `expected 'tilstand agent run', got ${sub === undefined ? 'nothing' : `'${sub}'`}`);
  const data = existingDataDir(a.string('data'));
  const socket = await runningSocket(data);
  let r: RunResult | RunSummary;
  try {
    r = socket ? ((await controlRequest(socket, 'agent.run', {}, 60_000)) as RunResult | RunSummary) : await withOffline(data, async ({ agent }) => agent.run());
  } catch (e) {
    throw cliErrorOf(e);
  }
  // The running site answers with a summary (core/site/decisions.ts), the directory with a RunResult.
  if ('ok' in r && r.ok === false) throw new CliError(EXIT.io, `agent run failed in the site: ${r.message}`);
  const lines = typeof r.created === 'number' ? [`agent run ${(r as { runId: string }).runId}: ${r.created} new, ${String(r.withdrawn)} withdrawn (in the running site)`] : runLines(r as RunResult);
  await print(io.stdout, a.boolean('json') ? [json(r)] : lines);
  return 'ruleErrors' in r && r.ruleErrors.length > 0 ? EXIT.io : EXIT.ok;
}

/** The dispatcher's entries (main.ts spreads them into its command table). */
export const AGENT_COMMANDS: Record<string, (argv: string[], io: CliIO) => Promise<number>> = {
  proposals: runProposals,
  decide: runDecide,
  agent: runAgent,
  evidence: runEvidence,
};

/** Control-socket ops a running site registers so the CLI reaches its agent and inbox. */
export function agentControlHandlers(agent: Agent, inbox: Inbox): [string, ControlHandler][] {
  return [
    ['agent.run', () => agent.run()],
    [
      'inbox.decide',
      // An InboxError keeps its `kind` (NotFound, InvalidArgument, Refused, Conflict) on the socket.
      // A comment with a bidi control is refused as the API and the CLI refuse it.
      (a) => {
        const bidi = typeof a.comment === 'string' ? bidiControlIn(a.comment) : undefined;
        if (bidi !== undefined) throw Object.assign(new Error(`comment: ${bidiControlProblem(bidi)}`), { kind: 'InvalidArgument' });
        return inbox.decide(String(a.proposal), String(a.decision) as DecisionVerb, { user: String(a.user), pin: String(a.pin), ...(typeof a.comment === 'string' ? { comment: a.comment } : {}) });
      },
    ],
    ['inbox.list', (a) => inbox.list({ ...(typeof a.status === 'string' ? { status: a.status as ProposalStatus } : {}) })],
  ];
}
