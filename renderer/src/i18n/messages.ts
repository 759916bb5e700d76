// Every text the UI shows, in English, Norwegian Bokmål and German. A missing key is a type error.
import type { Alarm, ProposalView } from '../../../core/site/api.ts';

export type Lang = 'en' | 'nb' | 'de';
export const LOCALES: Record<Lang, string> = { en: 'en-GB', nb: 'nb-NO', de: 'de-DE' };
export const LANG_NAMES: Record<Lang, string> = { en: 'English', nb: 'Norsk bokmål', de: 'Deutsch' };

const en = {
  'app.title': 'Tilstand',
  'app.unread': 'The site does not answer; asking again every {every}.',
  'nav.inbox': 'Inbox',
  'nav.work': 'Work queue',
  'nav.stock': 'Stock',
  'nav.tables': 'Tables',
  'nav.history': 'History',
  'nav.sync': 'Sync',
  'nav.deadLetters': 'Dead letters',
  'nav.users': 'Users',
  // The navigation's name for a screen reader ("Main navigation").
  'nav.label': 'Main',
  'signIn.title': 'Sign in',
  'signIn.idle': 'Signed out after {after} without use. Sign in again to go on.',
  'signIn.noAnswer': 'the site did not answer the sign-in within {after}; sign in again, and tell IT if it keeps happening',
  'signIn.user': 'Name',
  'signIn.secret': 'PIN or password',
  'signIn.badge': 'Or scan your badge',
  'signIn.submit': 'Sign in',
  // The PIN pad on a touch screen (components/PinPad.tsx): its name for a screen reader, Clear's word on the key and its name (which holds the word), the backspace's name (the key shows ⌫).
  'signIn.pad': 'PIN pad',
  'signIn.padClearKey': 'Clear',
  'signIn.padClear': 'Clear PIN',
  'signIn.padBack': 'Delete last digit',
  'signOut': 'Sign out',
  'signedInAs': 'Signed in as {name}',
  'signedInAsRole': 'Signed in as {name} ({role})',
  'language': 'Language',
  'inbox.empty': 'Nothing waits for a decision.',
  'inbox.waiting': '{n} waiting for a decision',
  'inbox.waitingDeferred': '{n} waiting for a decision, {d} of them deferred',
  // Where the count takes the singular (pluralKey): "1 wartet", not "1 warten"; with one waiting, it is the deferred one.
  'inbox.waiting_one': '{n} waiting for a decision',
  'inbox.waitingDeferred_one': '{n} waiting for a decision, deferred',
  'inbox.mostUrgent': 'The {n} most urgent are listed, of {all} that wait: decide these first.',
  'inbox.risk': 'Risk',
  'inbox.age': 'Waiting',
  'inbox.action': 'Proposal',
  'inbox.status': 'Status',
  'inbox.showWaiting': 'Waiting',
  'inbox.showDecided': 'Decided',
  'inbox.decidedHeading': 'Decided or withdrawn, newest first',
  'inbox.decidedNone': 'Nothing decided or withdrawn yet.',
  'inbox.decidedCut': 'Only the newest decisions are listed (at most {n}).',
  'inbox.decidedAt': 'When',
  // The Decided list without the withdrawn ones (shown on request, `showWithdrawn`), its third column and the control's words ({n}: how many, "50+" at the cut).
  'inbox.decidedOnlyHeading': 'Decided, newest first',
  'inbox.decidedOnlyNone': 'Nothing decided yet.',
  'inbox.outcome': 'Outcome',
  'inbox.showWithdrawn': 'Also what the agent withdrew ({n})',
  'inbox.pick': 'Pick a proposal in the list, or press N to open the most urgent.',
  'inbox.openMostUrgent': 'Open the most urgent',
  'inbox.pickDecided': 'Pick a decision in the list to see its trail and what the module did.',
  // The Decided list's withdrawn rows (the agent found the reason gone) and the empty inbox.
  'inbox.agent': 'the agent',
  // The empty inbox: how often the agent looks (config agent.intervalMs) and when it last did (the site's status).
  'inbox.agentLooks': 'The agent looks every {interval}; last at {time}, {age} ago.',
  'inbox.agentLooksNotYet': 'The agent looks every {interval}; it has not finished a look since the site started.',
  'inbox.agentOff': 'The agent does not run on its own on this site (started without its timer): it looks only when someone runs it.',
  'inbox.agentOffLast': 'The agent does not run on its own on this site (started without its timer): it looks only when someone runs it. Last at {time}, {age} ago.',
  'detail.readAt': 'As the agent read it at {time}, {age} ago.',
  'detail.explanation': 'Why',
  'detail.evidence': 'What the agent saw',
  'detail.snapshot': 'Snapshot {id}, tag {tag}',
  'detail.rule': 'Rule {id} v{version}',
  'detail.ruleFile': "this site's own rule, from {path}",
  'detail.comment': 'Comment (optional)',
  'detail.approve': 'Approve',
  'detail.reject': 'Reject',
  'detail.defer': 'Defer',
  'detail.next': 'Next',
  'detail.backToList': 'Back to the list',
  'detail.willSend': 'Approving sends “{action}” ({command}) to {module}.',
  'detail.willSendUnnamed': 'Approving sends “{command}” to {module}.',
  'detail.willSendNothing': 'A notice: approving sends nothing to a module; it records that you saw to it.',
  'detail.stale': 'Not sent: the situation changed since the agent looked. {reason}',
  'detail.withdrawn': 'Withdrawn by the agent: {reason}',
  'detail.failedBefore': 'Approved before, and the module did not carry it out ({n}×):',
  'detail.failedNoReason': 'no reason given',
  'inbox.failedBefore': 'not carried out {n}× before',
  'detail.command': 'Command: {progress}',
  'detail.trail': 'Trail',
  'trail.proposed': 'proposed',
  'trail.refused': 'refused',
  'trail.command': 'command: {progress}',
  'trail.field.reason': 'reason',
  'trail.field.comment': 'comment',
  'trail.field.detail': 'detail',
  'trail.field.decision': 'decision',
  'trail.field.action': 'action',
  'trail.refusal.unknown_user': 'unknown user',
  'trail.refusal.disabled': 'user disabled',
  'trail.refusal.locked': 'user locked after wrong PINs',
  'trail.refusal.wrong_pin': 'wrong PIN',
  'trail.refusal.no_pin': 'user has no PIN',
  'trail.refusal.role': 'role may not decide',
  'trail.writeBack.notApplied': 'not applied {seconds} s after it was sent (last state: {state})',
  'trail.writeBack.notSent': 'not sent within {window} s of the approval ({ago} s ago): nothing was done; decide again if it still holds',
  'trail.approvalNotOnRecord': 'not on record: the module answered its command, approved before the site was restored from an earlier state (the approval was lost with the old PC); who approved it and when is not known',
  'detail.shortcuts': 'Keys: A approve · R reject · D defer · N next',
  'progress.pending': 'waiting to be sent',
  'firstRun.title': 'Set up this site',
  'firstRun.intro': 'This is a new Tilstand data directory. Give the site its id and create the first administrator.',
  'firstRun.siteId': 'Site id (letters, digits, - and _)',
  'firstRun.adminName': 'Administrator name',
  'firstRun.adminPin': 'Administrator PIN (4–12 digits)',
  'firstRun.adminPin2': 'PIN again',
  'firstRun.mismatch': 'The two PINs differ.',
  'firstRun.submit': 'Set up the site',
  'firstRun.starting': 'Site {site} is set up. Starting it…',
  'firstRun.restored': 'This directory holds site {site}, restored from headquarters. It starts as {site} with the restored state; add its users again after setup.',
  'detail.noSnapshot': 'no snapshot',
  'detail.checked': 'What the approval was checked against',
  'detail.checkedStale': 'What the approval was checked against (found stale)',
  'detail.checkedSame': 'The rows cited are as the agent read them.',
  'detail.checkedChanged': 'The rows cited had changed since the agent read them:',
  'detail.checkedChangedColumns': 'The rows cited had changed since the agent read them (changed: {columns}):',
  'detail.checkedSameSequence': 'The rows cited are as the agent read them; only the modules’ sequence numbers moved.',
  'detail.notDecider': 'Only a shift lead or an admin decides; you are signed in as {name} ({role}).',
  'detail.checkedTagGone': 'the tag is no longer kept',
  'progress.sent': 'sent',
  'progress.acknowledged': 'acknowledged by the module',
  'progress.applied': 'applied',
  'progress.failed': 'failed',
  'progress.timed_out': 'timed out',
  'status.open': 'open',
  'status.deferred': 'deferred',
  'status.approved': 'approved',
  'status.rejected': 'rejected',
  'status.stale': 'stale',
  'status.withdrawn': 'withdrawn',
  'risk.low': 'low',
  'risk.medium': 'medium',
  'risk.high': 'high',
  'work.jobs': 'Jobs',
  'work.resources': 'Machines and teams',
  'work.job': 'Job',
  'work.status': 'Status',
  'work.blocked': 'Blocked because',
  'work.capability': 'Capability',
  'work.priority': 'Priority',
  'work.due': 'Due',
  'work.assigned': 'Assigned to',
  'work.resource': 'Resource',
  'work.state': 'State',
  'work.since': 'Since',
  'work.overdue': 'overdue',
  'work.waiting': 'Waiting for a decision',
  'work.search': 'Search job, item, resource or status',
  'work.more': 'The first {n} jobs, blocked and released first: search to find the others.',
  'waiting.open': 'Open proposal {id} in the inbox',
  'waiting.action.assign_job': 'Assignment proposed',
  'waiting.action.release_job': 'Release proposed',
  'waiting.action.escalate_job': 'Escalation proposed',
  'waiting.action.flag_idle_resource': 'Idle notice',
  'waiting.action.replenish': 'Reorder proposed',
  'action.assign_job': 'Assignment',
  'action.release_job': 'Release',
  'action.escalate_job': 'Escalation',
  'action.flag_idle_resource': 'Idle notice',
  'action.replenish': 'Reorder',
  'work.status.released': 'released',
  'work.status.blocked': 'blocked',
  'work.status.in_progress': 'in progress',
  'work.status.done': 'done',
  'work.state.free': 'free',
  'work.state.busy': 'busy',
  'work.state.down': 'down',
  'stock.search': 'Search item or location',
  'stock.more': 'The first {n} rows by item and location: search for an item or a location to find the others.',
  'stock.item': 'Item',
  'stock.location': 'Location',
  'stock.onHand': 'On hand',
  'stock.reserved': 'Reserved',
  'stock.inbound': 'Inbound',
  'stock.available': 'Available',
  'stock.projected': 'Projected',
  'stock.reorderPoint': 'Reorder point',
  'stock.orderUpTo': 'The agent proposes to order up to {n} ({scope})',
  'stock.below': 'below',
  'stock.belowOnly': 'Only below the reorder point',
  'stock.editPolicy': 'Change the reorder point of {item} at {location}',
  'stock.policyFor': 'Reorder point of {item} at {location}',
  'stock.scopeLocation': 'Only at {location}',
  'stock.scopeItem': 'Every location of {item} without its own',
  'stock.scope.location': 'set for this location',
  'stock.scope.item': 'set for the item',
  'stock.scope.default': 'the site default',
  'stock.scopeTag.location': 'location',
  'stock.scopeTag.item': 'item',
  'stock.setBy': 'set by {name}, {time}',
  'stock.changes': 'Changes to reorder points',
  'stock.noChanges': 'None made from this screen yet',
  'stock.changeAtLocation': '{item} at {location}',
  'stock.changeForItem': '{item} (every location without its own)',
  'stock.notSet': 'not set',
  'stock.levels': '{point}, up to {upTo}',
  'stock.orderUpToField': 'Order up to',
  'stock.savePolicy': 'Save',
  'stock.removePolicy': 'Remove this setting',
  'stock.cancel': 'Cancel',
  'stock.policyNote': 'Saved in config.json under your name; the agent checks every row against it at once.',
  'stock.upToNotAbove': '“Order up to” must be more than the reorder point ({point}).',
  'rows.noMatch': 'No rows match.',
  'tables.table': 'Table',
  'tables.age': 'Age',
  'tables.budget': 'Budget',
  'tables.pending': 'Pending events',
  'tables.snapshots': 'Snapshots',
  'tables.tags': 'Tags',
  'tables.size': 'Size',
  'tables.debt': 'Compaction debt',
  'tables.freshness': 'Freshness',
  'tables.within': 'within budget',
  // The header while no status has come for a few of the site's intervals (store `siteQuiet`); {time}: formatClock.
  'app.siteQuiet': 'No word from the site since {time}',
  'app.siteQuietHint': 'The site does not answer: the ages shown are its last ones grown by this PC’s clock',
  'sync.unknown': 'not known',
  'tables.breach': 'OVER BUDGET',
  'tables.unfed': 'no source',
  'tables.unfedHint': 'no binding in config.json feeds this table: nothing updates it, so it has no age to show',
  'streams.title': 'Module streams',
  'streams.stream': 'Stream',
  'streams.lastEvent': 'Last event',
  'streams.seq': 'Seq',
  'streams.allowed': 'Alarm after silence of',
  'streams.ago': '{d} ago',
  'streams.none': 'none since start',
  'streams.never': 'never',
  'streams.silent': 'SILENT: is the module running?',
  'streams.gap': 'seq {from}–{to} missing for {d}: asked for again',
  'history.table': 'Table',
  'history.point': 'As it was at',
  'history.latest': 'Latest',
  'history.tag': 'Tag',
  'history.snapshot': 'Snapshot',
  'history.time': 'Time',
  'history.show': 'Show',
  'history.compare': 'Compare with latest',
  'history.change': 'Change',
  // The comparison table's name for a screen reader.
  'history.changesLabel': '{table}, changes',
  'history.kind.+I': 'added',
  'history.kind.-U': 'before',
  'history.kind.+U': 'after',
  'history.kind.-D': 'removed',
  'history.tagSearch': 'Tag name contains',
  'history.noTagMatch': 'No tag of {table} has “{q}” in its name: Show and Compare need a tag.',
  'history.noTags': '{table} has no tags yet: Show and Compare need a tag.',
  'history.snapshotMissing': 'Type a snapshot’s number (such as 42) for Show and Compare.',
  'history.timeMissing': 'Pick a date and time for Show and Compare.',
  'history.tagsNewest': 'The newest {n} tags are listed: type part of a name (a run id, a proposal id, a date) to find an older one.',
  'history.contains': 'Rows containing',
  'history.containsPlaceholder': 'e.g. ITEM-008 or J-0023',
  'history.containsHint': 'Part of an item, a location, a job or a status: any cell, as stored; a status also as shown (in progress or in_progress)',
  'history.at': '{table} at snapshot #{id}, committed {time}. Rows: {n}',
  'history.atMore': '{table} at snapshot #{id}, committed {time}. Rows: the first {n}. There are more: narrow them with “Rows containing”.',
  'history.empty': '{table} has no snapshot yet: nothing has been written to it.',
  'history.changes': '{table} from snapshot #{from} ({fromTime}) to the latest, #{to} ({toTime}). Changes: {n}',
  'history.changesMore': '{table} from snapshot #{from} ({fromTime}) to the latest, #{to} ({toTime}). Changes: the first {n}. There are more: narrow them with “Rows containing”.',
  'history.noChanges': '{table}: no changes from snapshot #{from} ({fromTime}) to the latest, #{to} ({toTime})',
  'history.filtered': 'Only rows with a cell that contains “{q}”.',
  'history.sequenceOnly': 'seq. no. only',
  'history.sequenceOnlyTitle': 'Only the modules’ sequence numbers changed: the row came again with the same values.',
  'sync.online': 'Online',
  'sync.offline': 'OFFLINE',
  'sync.notConfigured': 'No headquarters target is configured: the site works alone. An administrator sets hq.target in the data directory’s config.json (docs/operations.md, “Connecting to headquarters”).',
  // Health is more than "the line is down" (core/sync statusOf): the headline is neutral, the
  // reason follows where the sync view names one (its first `problems`, the sync_stalled alarm's reason).
  'sync.unhealthy': 'NOT HEALTHY',
  // The header's chip when the view's problems say 'refused': "Online" was true of the line and said nothing of the refusal.
  'sync.refused': 'REFUSED BY HQ',
  // …and when HQ no longer holds what this PC sent there (the share not mounted, or the copy deleted).
  'sync.gone': 'HQ FOLDER EMPTY',
  'sync.reason.refused': 'Headquarters refuses this PC: another PC sends for this site. If that PC replaced this one, retire this one; if this one is to send, an administrator takes over (docs/operations.md, “Two PCs for one site”).',
  'sync.reason.gone': 'Headquarters’ folder no longer holds this site’s sender marker, which this PC wrote there: is the headquarters share mounted on this PC (or was headquarters’ copy of the site deleted)? Nothing is sent until it is back, and sending resumes by itself then. If headquarters’ copy was removed on purpose, an administrator takes over, which sends everything again (docs/operations.md, “HQ’s folder is empty”).',
  'sync.reason.credentials': 'Headquarters refuses this site’s access key (wrong, expired or revoked, or headquarters’ policy for the site does not allow the request), or, when headquarters is a folder, the site may not write that folder (its permissions, or mounted read-only). An administrator checks the key given to the service and the policy at headquarters, or the folder’s permissions; sending resumes by itself once it is accepted. The last error says which requests were refused.',
  'sync.reason.step': 'One step has failed for {window} or more while headquarters took other requests (a share that damages one file); the last error names it.',
  'sync.reason.waiting': 'Steps have waited {window} or more and nothing reached headquarters.',
  'sync.reason.planning': 'A table or contract file has been left out of sending for {window} or more; the last error names it.',
  'sync.lastError': 'Last error',
  'sync.pending': '{items} steps, {bytes} pending',
  'sync.pending_one': '{items} step, {bytes} pending',
  'sync.target': 'Syncing to',
  'sync.recent': 'In the last {window}: {items} steps done, {bytes} sent',
  'sync.recent_one': 'In the last {window}: {items} step done, {bytes} sent',
  'sync.lastSuccess': 'Last success',
  'sync.oldest': 'Oldest unsent step has waited',
  'sync.current': 'Sending {file}',
  // Tags dropped rather than sent (core/site syncView `dropped`, the last day): no health problem, but HQ will not have them.
  'sync.dropped.title': 'Not sent to headquarters',
  'sync.dropped.deleted': 'Tag {tag} of table {table} was deleted on the site before it reached headquarters, so it was not sent (dropped {when}). Headquarters will not have it.',
  // A kind a newer site gives: the site's own sentence (English) after it.
  'sync.dropped.other': 'Tag {tag} of table {table} was not sent to headquarters (dropped {when}): {why}',
  // A table `tilstand restore --fall-back-to-tag` rolled back to an older tag, HQ's latest copy of it damaged (the site status's `restoredFromTag`, a week after the restore):
  // {restored} when the restore ran, {from} the tag's commit, {until} the damaged copy's, {lost} the time between. The inbox's tables are the site's own writing, which nothing resends.
  'sync.restored.title': 'Restored from an older tag',
  'sync.restored.table': 'Table {table} was restored on {restored} from its tag {tag}, because its latest copy at headquarters was damaged. What it recorded from {from} to {until} ({lost}) is lost, except what its modules sent again.',
  'sync.restored.approval_inbox': 'Table {table} was restored on {restored} from its tag {tag}, because its latest copy at headquarters was damaged. The proposals, decisions and command progress from {from} to {until} ({lost}) are lost and were not sent again: a command approved then is no longer followed, unless its module answers it (then it shows as approved by “?”).',
  'sync.restored.decision_log': 'Table {table} was restored on {restored} from its tag {tag}, because its latest copy at headquarters was damaged. The decision log’s entries from {from} to {until} ({lost}) are lost.',
  'dead.reason': 'Reason',
  'dead.why.too_large': 'too large',
  'dead.why.bad_json': 'not JSON',
  'dead.why.unsafe_json': 'unsafe JSON',
  'dead.why.bad_envelope': 'envelope incomplete or wrong',
  'dead.why.topic_mismatch': 'wrong topic',
  'dead.why.no_contract': 'unknown contract',
  'dead.why.contract_violation': 'does not match its contract',
  'dead.why.no_binding': 'no binding for the topic',
  'dead.why.binding_error': 'binding failed',
  'dead.why.unfit_for_table': 'value does not fit the table',
  'dead.why.late_after_gap': 'came late: the site had stopped waiting for it',
  'dead.why.seq_far_ahead': 'too far ahead: its stream went on below it for too long',
  'dead.topic': 'Topic',
  'dead.payload': 'Payload',
  'dead.received': 'Received',
  'dead.replay': 'Replay all open',
  'dead.replayGroup': 'Replay these open',
  'dead.replayed': '{n} replayed, {f} still failing',
  'dead.empty': 'No dead letters.',
  'dead.dismiss': 'Dismiss',
  'dead.alike': 'Also every other open letter from this topic with this reason ({n} listed here)',
  'dead.moreOpen': 'The oldest {n} open letters are listed, of {all}: replay or dismiss these, and the next ones show.',
  'dead.moreOpen_one': 'The oldest open letter is listed, of {all}: replay or dismiss it, and the next ones show.',
  'dead.note': 'Why (kept with your name)',
  'dead.dismissedBy': 'Dismissed by {name}, {time}: {note}',
  'dead.wasReplayed': 'Replayed',
  'dead.replayAlike': 'Replay this and every open one like it',
  'dead.replayAlikeTitle': 'Every open letter from this topic with this reason, listed here or not: once the cause is fixed (a contract version added)',
  'dead.retention': 'A replayed or dismissed letter is deleted {span} after it was closed.',
  'dead.sources': 'Open letters come from',
  'dead.fromSource': '{n} {reason} from {source}',
  'dead.sourcesMore': 'and {n} more',
  'dead.sourcesMore_one': 'and one more',
  'dead.filtered': 'Only the letters from {source} listed ({reason}).',
  'dead.showAll': 'Show all',
  'dead.emptyFiltered': 'No dead letters in this group.',
  'users.name': 'Name',
  'users.roles': 'Role',
  'users.add': 'Add user',
  'users.disable': 'Disable',
  'users.enable': 'Enable',
  'users.reset': 'Reset PIN or password',
  'users.disabled': 'disabled',
  'users.newSecret': 'PIN or password',
  'users.badge': 'Badge (optional: scan it here)',
  'users.you': 'you',
  'users.setSecret': 'Set',
  'users.cancel': 'Cancel',
  'users.pinSet': 'New PIN set for {name} (it replaces their password, if they had one).',
  'users.passwordSet': 'New password set for {name} (it replaces their PIN, if they had one).',
  // A user added: who, with the role in words (Users.tsx `UsersDone`).
  'users.added': 'Added {name} ({role}).',
  'users.hasBadge': 'Badge',
  'users.badgeYes': 'yes',
  'users.badgeNo': 'no',
  'users.secretRule': 'A PIN has 4 to 12 digits; a password at least 8 characters.',
  'role.viewer': 'Viewer',
  'role.operator': 'Operator',
  'role.shift_lead': 'Shift lead',
  'role.admin': 'Admin',
  'alarm.title': 'Needs attention',
  // The alarms a shift lead acts on, in the reader's language (core/site Alarm.params; a `…Ms`
  // value is shown as a duration). English shows the site's own message, which says more.
  'alarm.budget_breach': '{table} is {age} old; its budget is {budget}',
  // Why no commit mends it (params held, streams, stopped), each after a '; '.
  'alarm.budget_breach.held_one': '{held} event for it waits behind a missing seq',
  'alarm.budget_breach.held': '{held} events for it wait behind a missing seq',
  'alarm.budget_breach.stopped': 'ingest stopped, events are only journaled',
  'alarm.ingest_stopped': 'ingest stopped: {failure}; events are only journaled until the site is restarted',
  // What the site does about it (params resumeAtMs — {resumeAt}, formatClock —, resumeRunning 1 or
  // resumeStopped 'damaged'); a site without them gets the line above (nb, de) or its own message (en).
  'alarm.ingest_stopped.resumeAt': 'ingest stopped: {failure}; events are only journaled until ingest resumes: the site tries again at {resumeAt}',
  'alarm.ingest_stopped.resuming': 'ingest stopped: {failure}; events are only journaled until ingest resumes: the site is resuming it now, reading what was journaled meanwhile',
  'alarm.ingest_stopped.damaged': 'ingest stopped: {failure}; events are only journaled: the site does not try again with a damaged table file; once the file is fixed or restored, “tilstand ingest resume” or a restart resumes ingest',
  'alarm.dead_letters': 'dead letters waiting for a look: {n}',
  'alarm.command_failed': '{action} for {id} failed{detail}',
  'alarm.command_timed_out': '{action} for {id} timed out{detail}',
  'alarm.stream_silent': '{stream}: no event for {silent} (allowed {allowed}) — is the module running and connected? Its rows stay as they were',
  // By params.reason (core/site syncStallReason); 'alarm.sync_stalled' is "waiting".
  'alarm.sync_stalled': 'sync to HQ has made no progress within {window}',
  'alarm.sync_stalled.refused': 'sync to HQ is refused: another PC sends for this site (docs/operations.md, “Two PCs for one site”)',
  'alarm.sync_stalled.gone': 'sync to HQ is stopped: HQ no longer holds this site’s sender marker (is HQ’s share mounted? was HQ’s copy deleted?); nothing is sent until it is back (docs/operations.md, “HQ’s folder is empty”)',
  'alarm.sync_stalled.credentials': 'sync to HQ is refused: HQ does not accept this site’s access key (check the key and HQ’s policy for the site; for a folder, that the site may write it)',
  'alarm.sync_stalled.step': 'sync to HQ is not healthy: a step has failed for {window} while HQ took other requests',
  'alarm.sync_stalled.planning': 'sync to HQ is not healthy: a table or contract file has been left out of sending for {window}',
  'alarm.sync_stalled.other': 'sync to HQ is not healthy',
  // After each of them, following a '; ' (params.pending; `_one` where the count takes the singular, pluralKey).
  'alarm.sync_stalled.pending': '{pending} steps waiting',
  'alarm.sync_stalled.pending_one': '{pending} step waiting',
  'error.generic': 'Something went wrong: {message}',
  'error.internal': 'Something went wrong on the site (error {id}): if it happens again, tell IT; the site’s log has the details under that id.',
  'error.close': 'Close',
  'error.noAnswer': 'the site did not answer (it may be restarting, or the network is down); try again in a moment',
  // The site's refusals by code (core/site/api.ts RefusalCode; refusalText), in every language:
  // the site's own message (English, for logs and the CLI) is shown only for a code this UI does not know.
  'refusal.signin.wrong': 'Wrong name, PIN or password',
  'refusal.signin.badgeUnknown': 'Unknown badge',
  'refusal.signin.left': '{left} attempts left',
  'refusal.signin.left_one': '{left} attempt left',
  'refusal.signin.locked': 'Locked until {until} after too many wrong attempts',
  'refusal.signin.badgeLocked': 'Badge refused until {until} after too many wrong attempts',
  'refusal.signin.disabled': 'This user is disabled',
  'refusal.pin.guessable.repeated': 'PIN {pin}: one digit repeated is among the first a colleague would try (five wrong PINs lock the user); choose another',
  'refusal.pin.guessable.sequence': 'PIN {pin}: digits in a row are among the first a colleague would try (five wrong PINs lock the user); choose another',
  'refusal.role.refused': '{user} is {role}; this takes {allowed}',
  'refusal.proposal.notFound': 'Proposal {id} does not exist',
  'refusal.proposal.notOpen': 'Proposal {id} is already {status}; only open or deferred proposals can be decided',
  'refusal.proposal.decidedMeanwhile': '{by} marked proposal {id} as {status} while yours was being made; look at it again before you decide',
  'refusal.user.exists': 'There is already a user {name} (names that differ only in case, spaces or invisible characters read as one)',
  'refusal.user.selfDisable': 'You cannot disable yourself',
  'refusal.user.selfDemote': 'You cannot take the admin role from yourself',
  'refusal.signin.busy': 'Too many sign-ins from this PC at once; try again in a moment',
  'refusal.session.required': 'Not signed in (the session ended, or the site restarted): sign in',
  'refusal.site.notSetUp': 'This site is not set up yet: finish the first-run screen (site id and first admin)',
  'refusal.site.alreadySetUp': 'This site is already set up: reload the page to sign in',
  // The site stopping (service.ts stoppingError): a call after the stop began, and one it cut short.
  'refusal.site.stopping': 'The site is stopping: try again once it has started again',
  'refusal.site.stopped': 'The site stopped before it had finished this: once it has started again, check whether it was done, and if not, try again',
  'refusal.init.exists': 'This PC’s data directory is already set up: reload the page to sign in',
  'refusal.init.restoredOther': 'This PC holds a restore of site {site}: set it up with site id {site}',
  'refusal.init.otherSite': 'This PC already holds the tables of site {sites}: set it up with that site id, or ask IT for another data directory',
  'refusal.init.restoreNote': 'This PC’s restore note (restore-note.json) cannot be read: ask IT',
  'refusal.init.restoreUnfinished': 'The restore onto this PC did not finish: ask IT to run it again',
  'refusal.init.adminExists': 'Setting up this PC stopped after it had added the administrator {admin}: set it up again with that administrator name (the PIN given now is taken)',
  'refusal.init.configLost': 'This PC’s data directory has lost its config.json, but its users and module passwords are still there: put config.json back from a backup (setting the PC up again would replace every module’s password). Ask IT.',
  'refusal.or': ' or ',
  'refusal.session.ended.disabled': '{user} was signed out: the user has been disabled. Sign in again',
  'refusal.session.ended.locked': '{user} was signed out: the user is locked after too many wrong attempts. Sign in again',
  'refusal.session.ended.removed': '{user} was signed out: the user no longer exists. Sign in again',
  'refusal.session.ended.secretReset': '{user} was signed out: their PIN or password was reset after this sign-in. Sign in again',
  'refusal.session.ended.idle': '{user} was signed out after {after} without use of the screen. Sign in again',
  'refusal.user.nameInvalid': 'User name {name} cannot be used: 1 to 64 characters, without a slash, “..”, control characters, invisible characters, spaces other than the plain one, a space at the start or end, or a word that mixes Latin, Cyrillic and Greek letters',
  'refusal.user.noSecret': 'User {name}: give a PIN, a password or a badge',
  'refusal.user.roleInvalid': 'There is no role {role}',
  'refusal.user.pinInvalid': 'A PIN has {min} to {max} digits',
  'refusal.user.passwordLength': 'A password has {min} to {max} characters',
  'refusal.user.badgeLength': 'A badge has {min} to {max} characters',
  'refusal.user.badgeTaken': 'That badge already belongs to another user',
  'refusal.user.notFound': 'User {name} does not exist',
  'refusal.reorder.levels': '{item}: “Order up to” ({upTo}) must be more than the reorder point ({point})',
  'refusal.reorder.levels.location': '{item} at {location}: “Order up to” ({upTo}) must be more than the reorder point ({point})',
  'refusal.config.refused': 'Not saved: the site’s settings file (config.json) has an error at {key}; ask IT',
  'refusal.config.file': 'Not saved: the site’s settings file (config.json) cannot be read as settings (it must hold one JSON object); ask IT',
  // What the site refuses in a request before it looks at it (core/site api-validate.ts, `input.*`):
  // {field} is the field's name below (`field.*`), or the request's own for one no form has.
  'refusal.input.name': '{field}: 1 to {max} characters, without / or \\, .., control characters, invisible characters, spaces other than the plain one, a space at the start or end, or a word that mixes Latin, Cyrillic and Greek letters',
  'refusal.input.tooLong': '{field}: at most {max} characters',
  'refusal.input.range': '{field}: a whole number from {min} to {max}',
  'refusal.input.refused': 'The site refused the request ({field}): reload the page; if it happens again, tell IT',
  'refusal.input.refused.request': 'The site refused the request: reload the page; if it happens again, tell IT',
  // A bidi control in a comment or a note (core/site api-validate.ts `freeText`): {char} as "U+202E".
  'refusal.input.characters': '{field}: holds a character that turns the text around ({char}, often pasted with the text); type it again or delete that part',
  // The UI server's refusals of a request as a whole (core/site ui-server.ts, `request.*`): one over
  // its size ({max}: formatBytes), which a long pasted comment can be; any other only a hand-made request meets.
  'refusal.request.tooLarge': 'The site refused this: a request may be at most {max}; shorten what you typed (a comment, say) and send it again',
  'refusal.request.refused': 'The site refused the request: reload the page; if it happens again, tell IT',
  'field.name': 'User name',
  'field.secret': 'PIN or password',
  'field.pin': 'PIN',
  'field.badge': 'Badge',
  'field.comment': 'Comment',
  'field.note': 'Why',
  'field.search': 'Search',
  'field.reorderPoint': 'Reorder point',
  'field.orderUpTo': 'Order up to',
  'field.snapshot': 'Snapshot',
  'field.time': 'Time',
  'field.tag': 'Tag',
  'field.item': 'Item',
  'field.location': 'Location',
  'field.siteId': 'Site id',
  // A screen (or the whole UI) that failed to render (components/ErrorBoundary.tsx): a kiosk PC showed white until someone reloaded.
  'crash.screenTitle': 'This screen could not be shown',
  'crash.screenBody': 'The rest of the UI still works: pick another screen above, try this one again or reload the page.',
  'crash.appTitle': 'The floor UI stopped on an error',
  'crash.appBody': 'Reload the page to go on.',
  // The site logged the failure under this id (core/site ClientErrorLog): what IT looks up in logs/site.log.
  'crash.reported': 'If it happens again, tell IT: the site’s log has it as {id}.',
  'crash.notReported': 'If it happens again, tell IT: the details are in the browser’s console.',
  'crash.retry': 'Try again',
  'crash.reload': 'Reload the page',
  // The decisions core/ingest's default freshness budgets name (DEFAULT_TABLE_BUDGETS), word for
  // word: the Tables screen translates a table's decision only while it is this text (tableDecision).
  'tables.decision.approval_inbox': 'a shift lead approves or rejects a proposal on the floor PC',
  'tables.decision.work_queue': 'the work-queue agent proposes the next job every minute',
  'tables.decision.stock': 'material availability checked before a job is released',
  'tables.decision.resources': 'the work-queue agent matches jobs to free resources every minute',
  'tables.decision.dead_letters': 'an operator sees a refused event and fixes its contract or binding',
  // Column headings of Tilstand's own tables (History, the inbox's evidence; `columnHeading`) where
  // Stock's, Work queue's or another screen's words do not already say it; the stored name on hover.
  'column.materialItem': 'Material',
  'column.materialQty': 'Material qty',
  'column.opsSeq': 'Operations seq. no.',
  'column.kind': 'Kind',
  'column.inventorySeq': 'Inventory seq. no.',
  'column.commerceSeq': 'Commerce seq. no.',
  'column.procurementSeq': 'Procurement seq. no.',
  'column.position': 'Journal position',
  'column.detail': 'Detail',
  'column.path': 'Where in the payload',
  'column.bindings': 'Bindings',
  'column.module': 'Module',
  'column.stream': 'Stream',
  'column.seq': 'Module’s seq. no.',
  'column.dismissedAt': 'Dismissed',
  'column.dismissedBy': 'Dismissed by',
  'column.dismissedNote': 'Why dismissed',
  'column.proposalId': 'Proposal id',
  'column.situation': 'Situation',
  'column.rule': 'Rule',
  'column.ruleVersion': 'Rule version',
  'column.params': 'Parameters',
  'column.riskReason': 'Why this risk',
  'column.run': 'Agent run',
  'column.created': 'Proposed',
  'column.agentStatus': 'Agent’s status',
  'column.withdrawnReason': 'Why withdrawn',
  'column.agentUpdated': 'Agent updated',
  'column.logFirstEntry': 'First log entry',
  'column.agentMessages': 'Translations',
  'column.agentSeq': 'Agent seq. no.',
  'column.decision': 'Decision',
  'column.decidedBy': 'Decided by',
  'column.decidedRole': 'Role',
  'column.decidedAt': 'Decided',
  'column.decisionSnapshots': 'Snapshots checked',
  'column.decisionReason': 'Decision reason',
  'column.decisionSeq': 'Decision seq. no.',
  'column.commandState': 'Command state',
  'column.commandTopic': 'Command topic',
  'column.commandSent': 'Command sent',
  'column.commandUpdated': 'Command updated',
  'column.commandDetail': 'What the module said',
  'column.commandSeq': 'Command seq. no.',
  // Known values of Tilstand's own tables' columns that no screen words yet (`cellText`; the
  // others take the words of the screen that shows them: work.status.*, status.*, dead.why.*…).
  'value.kind.machine': 'machine',
  'value.kind.team': 'team',
  'value.letter.replayed': 'replayed',
  'value.letter.dismissed': 'dismissed',
  // The History screen's tag picker, by what made the tag (core/agents, core/inbox, core/sync).
  'history.tagGroup.agent': 'Agent runs',
  'history.tagGroup.decision': 'Decisions',
  'history.tagGroup.checked': 'Approvals checked',
  'history.tagGroup.hourly': 'Hourly',
  'history.tagGroup.other': 'Other',
  'never': 'never',
  'ago': '{t} ago',
} as const;

export type MessageKey = keyof typeof en;
type Messages = Record<MessageKey, string>;

const nb: Messages = {
  'app.title': 'Tilstand',
  'app.unread': 'Anlegget svarer ikke; spør igjen hvert {every}.',
  'nav.inbox': 'Innboks',
  'nav.work': 'Arbeidskø',
  'nav.stock': 'Lager',
  'nav.tables': 'Tabeller',
  'nav.history': 'Historikk',
  'nav.sync': 'Synkronisering',
  'nav.deadLetters': 'Avviste hendelser',
  'nav.users': 'Brukere',
  'nav.label': 'Hovedmeny',
  'signIn.title': 'Logg inn',
  'signIn.idle': 'Logget ut etter {after} uten bruk. Logg inn igjen for å fortsette.',
  'signIn.noAnswer': 'stedet svarte ikke på innloggingen innen {after}; logg inn på nytt, og si fra til IT om det skjer igjen',
  'signIn.user': 'Navn',
  'signIn.secret': 'PIN eller passord',
  'signIn.badge': 'Eller skann kortet ditt',
  'signIn.submit': 'Logg inn',
  'signIn.pad': 'Tastatur for PIN',
  'signIn.padClearKey': 'Tøm',
  'signIn.padClear': 'Tøm PIN',
  'signIn.padBack': 'Slett siste siffer',
  'signOut': 'Logg ut',
  'signedInAs': 'Innlogget som {name}',
  'signedInAsRole': 'Innlogget som {name} ({role})',
  'language': 'Språk',
  'inbox.empty': 'Ingenting venter på beslutning.',
  'inbox.waiting': '{n} venter på beslutning',
  'inbox.waitingDeferred': '{n} venter på beslutning, {d} av dem utsatt',
  'inbox.waiting_one': '{n} venter på beslutning',
  'inbox.waitingDeferred_one': '{n} venter på beslutning, utsatt',
  'inbox.mostUrgent': 'De {n} mest hastende vises, av {all} som venter: avgjør disse først.',
  'inbox.risk': 'Risiko',
  'inbox.age': 'Venter',
  'inbox.action': 'Forslag',
  'inbox.status': 'Status',
  'inbox.showWaiting': 'Venter',
  'inbox.showDecided': 'Avgjort',
  'inbox.decidedHeading': 'Avgjort eller trukket, nyeste først',
  'inbox.decidedNone': 'Ingenting avgjort eller trukket ennå.',
  'inbox.decidedCut': 'Bare de nyeste beslutningene vises (høyst {n}).',
  'inbox.decidedAt': 'Når',
  'inbox.decidedOnlyHeading': 'Avgjort, nyeste først',
  'inbox.decidedOnlyNone': 'Ingenting avgjort ennå.',
  'inbox.outcome': 'Utfall',
  'inbox.showWithdrawn': 'Også det agenten trakk tilbake ({n})',
  'inbox.pick': 'Velg et forslag i listen, eller trykk N for å åpne det mest hastende.',
  'inbox.openMostUrgent': 'Åpne det mest hastende',
  'inbox.pickDecided': 'Velg en beslutning i listen for å se sporet og hva modulen gjorde.',
  'inbox.agent': 'agenten',
  'inbox.agentLooks': 'Agenten ser over gulvet med {interval} mellomrom; sist {time}, for {age} siden.',
  'inbox.agentLooksNotYet': 'Agenten ser over gulvet med {interval} mellomrom; den har ikke gjort seg ferdig med en runde siden anlegget startet.',
  'inbox.agentOff': 'Agenten går ikke av seg selv på dette anlegget (startet uten tidsuret sitt): den ser over gulvet bare når noen kjører den.',
  'inbox.agentOffLast': 'Agenten går ikke av seg selv på dette anlegget (startet uten tidsuret sitt): den ser over gulvet bare når noen kjører den. Sist {time}, for {age} siden.',
  'detail.readAt': 'Slik agenten leste det {time}, for {age} siden.',
  'detail.explanation': 'Hvorfor',
  'detail.evidence': 'Det agenten så',
  'detail.snapshot': 'Øyeblikksbilde {id}, merke {tag}',
  'detail.rule': 'Regel {id} v{version}',
  'detail.ruleFile': 'en egen regel for dette anlegget, fra {path}',
  'detail.comment': 'Kommentar (valgfri)',
  'detail.approve': 'Godkjenn',
  'detail.reject': 'Avvis',
  'detail.defer': 'Utsett',
  'detail.next': 'Neste',
  'detail.backToList': 'Tilbake til listen',
  'detail.willSend': 'Godkjenning sender «{action}» ({command}) til {module}.',
  'detail.willSendUnnamed': 'Godkjenning sender «{command}» til {module}.',
  'detail.willSendNothing': 'Et varsel: godkjenning sender ingenting til en modul; den registrerer at du har sett til det.',
  'detail.stale': 'Ikke sendt: situasjonen har endret seg siden agenten så. {reason}',
  'detail.withdrawn': 'Trukket av agenten: {reason}',
  'detail.failedBefore': 'Godkjent før, men modulen utførte den ikke ({n}×):',
  'detail.failedNoReason': 'ingen grunn oppgitt',
  'inbox.failedBefore': 'ikke utført {n}× før',
  'detail.command': 'Kommando: {progress}',
  'detail.trail': 'Spor',
  'trail.proposed': 'foreslått',
  'trail.refused': 'nektet',
  'trail.command': 'kommando: {progress}',
  'trail.field.reason': 'grunn',
  'trail.field.comment': 'kommentar',
  'trail.field.detail': 'detalj',
  'trail.field.decision': 'beslutning',
  'trail.field.action': 'handling',
  'trail.refusal.unknown_user': 'ukjent bruker',
  'trail.refusal.disabled': 'bruker deaktivert',
  'trail.refusal.locked': 'bruker sperret etter feil PIN',
  'trail.refusal.wrong_pin': 'feil PIN',
  'trail.refusal.no_pin': 'bruker har ingen PIN',
  'trail.refusal.role': 'rollen kan ikke beslutte',
  'trail.writeBack.notApplied': 'ikke utført {seconds} s etter at den ble sendt (siste tilstand: {state})',
  'trail.writeBack.notSent': 'ikke sendt innen {window} s etter godkjenningen (for {ago} s siden): ingenting ble gjort; beslutt på nytt om det fortsatt gjelder',
  'trail.approvalNotOnRecord': 'ikke registrert: modulen svarte på kommandoen, som ble godkjent før stedet ble gjenopprettet fra en tidligere tilstand (godkjenningen gikk tapt med den gamle PC-en); hvem som godkjente den og når, er ukjent',
  'detail.shortcuts': 'Taster: A godkjenn · R avvis · D utsett · N neste',
  'progress.pending': 'venter på å bli sendt',
  'firstRun.title': 'Sett opp dette anlegget',
  'firstRun.intro': 'Dette er en ny Tilstand-datakatalog. Gi anlegget en id og opprett den første administratoren.',
  'firstRun.siteId': 'Anleggs-id (bokstaver, sifre, - og _)',
  'firstRun.adminName': 'Administratorens navn',
  'firstRun.adminPin': 'Administratorens PIN (4–12 sifre)',
  'firstRun.adminPin2': 'PIN på nytt',
  'firstRun.mismatch': 'De to PIN-kodene er ulike.',
  'firstRun.submit': 'Sett opp anlegget',
  'firstRun.starting': 'Anlegget {site} er satt opp. Starter…',
  'firstRun.restored': 'Denne katalogen inneholder anlegget {site}, gjenopprettet fra hovedkontoret. Det starter som {site} med den gjenopprettede tilstanden; legg inn brukerne på nytt etter oppsettet.',
  'detail.noSnapshot': 'ingen snapshot',
  'detail.checked': 'Det godkjenningen ble kontrollert mot',
  'detail.checkedStale': 'Det godkjenningen ble kontrollert mot (utdatert)',
  'detail.checkedSame': 'Radene det vises til er slik agenten leste dem.',
  'detail.checkedChanged': 'Radene det vises til var endret siden agenten leste dem:',
  'detail.checkedChangedColumns': 'Radene det vises til var endret siden agenten leste dem (endret: {columns}):',
  'detail.checkedSameSequence': 'Radene det vises til er slik agenten leste dem; bare modulenes sekvensnumre har endret seg.',
  'detail.notDecider': 'Bare en skiftleder eller en administrator bestemmer; du er innlogget som {name} ({role}).',
  'detail.checkedTagGone': 'merket finnes ikke lenger',
  'progress.sent': 'sendt',
  'progress.acknowledged': 'bekreftet av modulen',
  'progress.applied': 'utført',
  'progress.failed': 'feilet',
  'progress.timed_out': 'tidsavbrudd',
  'status.open': 'åpen',
  'status.deferred': 'utsatt',
  'status.approved': 'godkjent',
  'status.rejected': 'avvist',
  'status.stale': 'utdatert',
  'status.withdrawn': 'trukket',
  'risk.low': 'lav',
  'risk.medium': 'middels',
  'risk.high': 'høy',
  'work.jobs': 'Jobber',
  'work.resources': 'Maskiner og team',
  'work.job': 'Jobb',
  'work.status': 'Status',
  'work.blocked': 'Blokkert fordi',
  'work.capability': 'Ferdighet',
  'work.priority': 'Prioritet',
  'work.due': 'Frist',
  'work.assigned': 'Tildelt',
  'work.resource': 'Ressurs',
  'work.state': 'Tilstand',
  'work.since': 'Siden',
  'work.overdue': 'forsinket',
  'work.waiting': 'Venter på beslutning',
  'work.search': 'Søk etter jobb, vare, ressurs eller status',
  'work.more': 'De første {n} jobbene, blokkerte og frigitte først: søk for å finne de andre.',
  'waiting.open': 'Åpne forslag {id} i innboksen',
  'waiting.action.assign_job': 'Tildeling foreslått',
  'waiting.action.release_job': 'Frigiving foreslått',
  'waiting.action.escalate_job': 'Eskalering foreslått',
  'waiting.action.flag_idle_resource': 'Varsel: ledig',
  'waiting.action.replenish': 'Bestilling foreslått',
  'action.assign_job': 'Tildeling',
  'action.release_job': 'Frigiving',
  'action.escalate_job': 'Eskalering',
  'action.flag_idle_resource': 'Varsel om ledig ressurs',
  'action.replenish': 'Bestilling',
  'work.status.released': 'frigitt',
  'work.status.blocked': 'blokkert',
  'work.status.in_progress': 'pågår',
  'work.status.done': 'ferdig',
  'work.state.free': 'ledig',
  'work.state.busy': 'opptatt',
  'work.state.down': 'ute av drift',
  'stock.search': 'Søk vare eller lokasjon',
  'stock.more': 'De første {n} radene etter vare og lokasjon: søk etter en vare eller en lokasjon for å finne de andre.',
  'stock.item': 'Vare',
  'stock.location': 'Lokasjon',
  'stock.onHand': 'På lager',
  'stock.reserved': 'Reservert',
  // Column headings: a soft hyphen (\u00ad) lets a long word break there in a narrow column (1024
  // wide); chromium hyphenates no other way here. Not seen unless the word breaks.
  'stock.inbound': 'Inn\u00adkommende',
  'stock.available': 'Til\u00adgjengelig',
  'stock.projected': 'Prognose',
  'stock.reorderPoint': 'Bestillings\u00adpunkt',
  'stock.orderUpTo': 'Agenten foreslår å bestille opp til {n} ({scope})',
  'stock.below': 'under',
  'stock.belowOnly': 'Bare under bestillingspunktet',
  'stock.editPolicy': 'Endre bestillingspunktet for {item} på {location}',
  'stock.policyFor': 'Bestillingspunkt for {item} på {location}',
  'stock.scopeLocation': 'Bare på {location}',
  'stock.scopeItem': 'Alle lokasjoner for {item} uten eget',
  'stock.scope.location': 'satt for denne lokasjonen',
  'stock.scope.item': 'satt for varen',
  'stock.scope.default': 'anleggets standard',
  'stock.scopeTag.location': 'lokasjon',
  'stock.scopeTag.item': 'vare',
  'stock.setBy': 'satt av {name}, {time}',
  'stock.changes': 'Endringer i bestillingspunkter',
  'stock.noChanges': 'Ingen gjort fra denne skjermen ennå',
  'stock.changeAtLocation': '{item} på {location}',
  'stock.changeForItem': '{item} (alle lokasjoner uten eget)',
  'stock.notSet': 'ikke satt',
  'stock.levels': '{point}, opp til {upTo}',
  'stock.orderUpToField': 'Bestill opp til',
  'stock.savePolicy': 'Lagre',
  'stock.removePolicy': 'Fjern denne innstillingen',
  'stock.cancel': 'Avbryt',
  'stock.policyNote': 'Lagres i config.json under ditt navn; agenten sjekker alle rader mot det med en gang.',
  'stock.upToNotAbove': '«Bestill opp til» må være større enn bestillingspunktet ({point}).',
  'rows.noMatch': 'Ingen rader passer.',
  'tables.table': 'Tabell',
  'tables.age': 'Alder',
  'tables.budget': 'Budsjett',
  'tables.pending': 'Ventende hendelser',
  'tables.snapshots': 'Øyeblikks\u00adbilder',
  'tables.tags': 'Merker',
  'tables.size': 'Størrelse',
  'tables.debt': 'Kompri\u00admerings\u00adgjeld',
  'tables.freshness': 'Ferskhet',
  'tables.within': 'innenfor budsjett',
  'app.siteQuiet': 'Ikke noe svar fra stedet siden {time}',
  'app.siteQuietHint': 'Stedet svarer ikke: alderne som vises, er de siste, talt videre etter denne PC-ens klokke',
  'sync.unknown': 'ukjent',
  'tables.breach': 'OVER BUDSJETT',
  'tables.unfed': 'ingen kilde',
  'tables.unfedHint': 'ingen binding i config.json fyller denne tabellen: ingenting oppdaterer den, så den har ingen alder å vise',
  'streams.title': 'Modulstrømmer',
  'streams.stream': 'Strøm',
  'streams.lastEvent': 'Siste hendelse',
  'streams.seq': 'Sekv.',
  'streams.allowed': 'Alarm etter stillhet på',
  'streams.ago': 'for {d} siden',
  'streams.none': 'ingen siden start',
  'streams.never': 'aldri',
  'streams.silent': 'STILLE: kjører modulen?',
  'streams.gap': 'seq {from}–{to} mangler i {d}: bedt om på nytt',
  'history.table': 'Tabell',
  'history.point': 'Slik den var',
  'history.latest': 'Nyeste',
  'history.tag': 'Merke',
  'history.snapshot': 'Øyeblikksbilde',
  'history.time': 'Tidspunkt',
  'history.show': 'Vis',
  'history.compare': 'Sammenlign med nyeste',
  'history.change': 'Endring',
  'history.changesLabel': '{table}, endringer',
  'history.kind.+I': 'lagt til',
  'history.kind.-U': 'før',
  'history.kind.+U': 'etter',
  'history.kind.-D': 'fjernet',
  'history.tagSearch': 'Merkenavnet inneholder',
  'history.noTagMatch': 'Ingen merker for {table} har «{q}» i navnet: Vis og Sammenlign trenger et merke.',
  'history.noTags': '{table} har ingen merker ennå: Vis og Sammenlign trenger et merke.',
  'history.snapshotMissing': 'Skriv nummeret på et øyeblikksbilde (f.eks. 42) for Vis og Sammenlign.',
  'history.timeMissing': 'Velg dato og klokkeslett for Vis og Sammenlign.',
  'history.tagsNewest': 'De {n} nyeste taggene vises: skriv en del av et navn (en kjørings-id, en forslags-id, en dato) for å finne en eldre.',
  'history.contains': 'Rader som inneholder',
  'history.containsPlaceholder': 'f.eks. ITEM-008 eller J-0023',
  'history.containsHint': 'En del av en vare, en lokasjon, en jobb eller en status: hvilken som helst celle, slik den er lagret; en status også slik den vises (pågår eller in_progress)',
  'history.at': '{table} ved øyeblikksbilde #{id}, lagret {time}. Rader: {n}',
  'history.atMore': '{table} ved øyeblikksbilde #{id}, lagret {time}. Rader: de første {n}. Det finnes flere: avgrens med «Rader som inneholder».',
  'history.empty': '{table} har ikke noe øyeblikksbilde ennå: ingenting er skrevet til den.',
  'history.changes': '{table} fra øyeblikksbilde #{from} ({fromTime}) til det nyeste, #{to} ({toTime}). Endringer: {n}',
  'history.changesMore': '{table} fra øyeblikksbilde #{from} ({fromTime}) til det nyeste, #{to} ({toTime}). Endringer: de første {n}. Det finnes flere: avgrens med «Rader som inneholder».',
  'history.noChanges': '{table}: ingen endringer fra øyeblikksbilde #{from} ({fromTime}) til det nyeste, #{to} ({toTime})',
  'history.filtered': 'Bare rader der en celle inneholder «{q}».',
  'history.sequenceOnly': 'bare løpenr.',
  'history.sequenceOnlyTitle': 'Bare modulenes løpenumre har endret seg: raden kom på nytt med de samme verdiene.',
  'sync.online': 'Tilkoblet',
  'sync.offline': 'FRAKOBLET',
  'sync.notConfigured': 'Ingen hovedkontor-mottaker er satt opp: anlegget arbeider alene. En administrator setter hq.target i datakatalogens config.json (docs/operations.md, «Connecting to headquarters»).',
  'sync.unhealthy': 'IKKE I ORDEN',
  'sync.refused': 'AVVIST AV HOVEDKONTORET',
  'sync.gone': 'HOVEDKONTORETS MAPPE TOM',
  'sync.reason.refused': 'Hovedkontoret avviser denne PC-en: en annen PC sender for dette anlegget. Har den PC-en erstattet denne, tas denne ut av drift; skal denne sende, tar en administrator over (docs/operations.md, «Two PCs for one site»).',
  'sync.reason.gone': 'Hovedkontorets mappe har ikke lenger anleggets avsendermerke, som denne PC-en skrev der: er hovedkontorets deling montert på denne PC-en (eller ble hovedkontorets kopi av anlegget slettet)? Ingenting sendes før det er tilbake, og da fortsetter sendingen av seg selv. Ble hovedkontorets kopi fjernet med vilje, tar en administrator over, og alt sendes på nytt (docs/operations.md, «HQ’s folder is empty»).',
  'sync.reason.credentials': 'Hovedkontoret avviser anleggets tilgangsnøkkel (feil, utløpt eller tilbakekalt, eller hovedkontorets regler for anlegget tillater ikke forespørselen), eller, når hovedkontoret er en mappe, får anlegget ikke skrive i mappen (rettighetene, eller den er montert skrivebeskyttet). En administrator sjekker nøkkelen tjenesten har fått og reglene hos hovedkontoret, eller mappens rettigheter; sendingen fortsetter av seg selv når den godtas. Siste feil sier hvilke forespørsler som ble avvist.',
  'sync.reason.step': 'Ett steg har feilet i {window} eller mer mens hovedkontoret tok imot andre forespørsler (en deling som skader én fil); siste feil nevner det.',
  'sync.reason.waiting': 'Steg har ventet i {window} eller mer uten at noe nådde hovedkontoret.',
  'sync.reason.planning': 'En tabell eller kontraktfil har vært utelatt fra sendingen i {window} eller mer; siste feil nevner den.',
  'sync.lastError': 'Siste feil',
  'sync.pending': '{items} steg, {bytes} venter',
  'sync.pending_one': '{items} steg, {bytes} venter',
  'sync.target': 'Synkroniserer til',
  'sync.recent': 'Siste {window}: {items} steg utført, {bytes} sendt',
  'sync.recent_one': 'Siste {window}: {items} steg utført, {bytes} sendt',
  'sync.lastSuccess': 'Siste vellykkede',
  'sync.oldest': 'Eldste usendte steg har ventet',
  'sync.current': 'Sender {file}',
  'sync.dropped.title': 'Ikke sendt til hovedkontoret',
  'sync.dropped.deleted': 'Merket {tag} i tabellen {table} ble slettet på anlegget før det nådde hovedkontoret, så det ble ikke sendt (forkastet {when}). Hovedkontoret vil ikke ha det.',
  'sync.dropped.other': 'Merket {tag} i tabellen {table} ble ikke sendt til hovedkontoret (forkastet {when}): {why}',
  'sync.restored.title': 'Gjenopprettet fra et eldre merke',
  'sync.restored.table': 'Tabellen {table} ble gjenopprettet {restored} fra merket {tag}, fordi den nyeste kopien på hovedkontoret var skadet. Det den registrerte fra {from} til {until} ({lost}), er tapt, bortsett fra det modulene sendte på nytt.',
  'sync.restored.approval_inbox': 'Tabellen {table} ble gjenopprettet {restored} fra merket {tag}, fordi den nyeste kopien på hovedkontoret var skadet. Forslagene, beslutningene og kommandoforløpet fra {from} til {until} ({lost}) er tapt og ble ikke sendt på nytt: en kommando som ble godkjent da, blir ikke lenger fulgt, med mindre modulen svarer på den (da vises den som godkjent av «?»).',
  'sync.restored.decision_log': 'Tabellen {table} ble gjenopprettet {restored} fra merket {tag}, fordi den nyeste kopien på hovedkontoret var skadet. Beslutningsloggens oppføringer fra {from} til {until} ({lost}) er tapt.',
  'dead.reason': 'Årsak',
  'dead.why.too_large': 'for stor',
  'dead.why.bad_json': 'ikke JSON',
  'dead.why.unsafe_json': 'usikker JSON',
  'dead.why.bad_envelope': 'konvolutten mangler felt eller er feil',
  'dead.why.topic_mismatch': 'feil emne',
  'dead.why.no_contract': 'ukjent kontrakt',
  'dead.why.contract_violation': 'stemmer ikke med kontrakten',
  'dead.why.no_binding': 'ingen binding for emnet',
  'dead.why.binding_error': 'bindingen feilet',
  'dead.why.unfit_for_table': 'verdien passer ikke i tabellen',
  'dead.why.late_after_gap': 'kom for sent: anlegget hadde sluttet å vente på den',
  'dead.why.seq_far_ahead': 'for langt foran: strømmen fortsatte under den for lenge',
  'dead.topic': 'Emne',
  'dead.payload': 'Innhold',
  'dead.received': 'Mottatt',
  'dead.replay': 'Kjør alle åpne på nytt',
  'dead.replayGroup': 'Kjør disse åpne på nytt',
  'dead.replayed': '{n} kjørt på nytt, {f} feiler fortsatt',
  'dead.empty': 'Ingen avviste hendelser.',
  'dead.dismiss': 'Avskriv',
  'dead.alike': 'Også alle andre åpne hendelser fra dette emnet med denne årsaken ({n} i listen her)',
  'dead.moreOpen': 'De {n} eldste åpne hendelsene vises, av {all}: kjør dem på nytt eller avskriv dem, så vises de neste.',
  'dead.moreOpen_one': 'Den eldste åpne hendelsen vises, av {all}: kjør den på nytt eller avskriv den, så vises de neste.',
  'dead.note': 'Hvorfor (lagres med navnet ditt)',
  'dead.dismissedBy': 'Avskrevet av {name}, {time}: {note}',
  'dead.wasReplayed': 'Kjørt på nytt',
  'dead.replayAlike': 'Kjør denne og alle åpne like den på nytt',
  'dead.replayAlikeTitle': 'Alle åpne hendelser fra dette emnet med denne årsaken, i listen her eller ikke: når årsaken er rettet (en kontraktversjon lagt til)',
  'dead.retention': 'En hendelse som er kjørt på nytt eller avskrevet, slettes {span} etter at den ble lukket.',
  'dead.sources': 'Åpne hendelser kommer fra',
  'dead.fromSource': '{n} {reason} fra {source}',
  'dead.sourcesMore': 'og {n} til',
  'dead.sourcesMore_one': 'og én til',
  'dead.filtered': 'Bare hendelsene fra {source} vises ({reason}).',
  'dead.showAll': 'Vis alle',
  'dead.emptyFiltered': 'Ingen avviste hendelser i denne gruppen.',
  'users.name': 'Navn',
  'users.roles': 'Rolle',
  'users.add': 'Legg til bruker',
  'users.disable': 'Deaktiver',
  'users.enable': 'Aktiver',
  'users.reset': 'Ny PIN eller nytt passord',
  'users.disabled': 'deaktivert',
  'users.newSecret': 'PIN eller passord',
  'users.badge': 'Kort (valgfritt: skann det her)',
  'users.you': 'deg',
  'users.setSecret': 'Lagre',
  'users.cancel': 'Avbryt',
  'users.pinSet': 'Ny PIN er satt for {name} (den erstatter passordet, om brukeren hadde et).',
  'users.passwordSet': 'Nytt passord er satt for {name} (det erstatter PIN-en, om brukeren hadde en).',
  'users.added': 'Bruker {name} ({role}) er lagt til.',
  'users.hasBadge': 'Kort',
  'users.badgeYes': 'ja',
  'users.badgeNo': 'nei',
  'users.secretRule': 'En PIN har 4 til 12 sifre; et passord minst 8 tegn.',
  'role.viewer': 'Leser',
  'role.operator': 'Operatør',
  'role.shift_lead': 'Skiftleder',
  'role.admin': 'Administrator',
  'alarm.title': 'Krever oppmerksomhet',
  'alarm.budget_breach': '{table} er {age} gammel; budsjettet er {budget}',
  'alarm.budget_breach.held_one': '{held} hendelse for den venter bak en manglende seq',
  'alarm.budget_breach.held': '{held} hendelser for den venter bak en manglende seq',
  'alarm.budget_breach.stopped': 'innlesingen har stoppet, hendelser lagres bare i journalen',
  'alarm.ingest_stopped': 'innlesingen har stoppet: {failure}; hendelser lagres bare i journalen til anlegget startes på nytt',
  'alarm.ingest_stopped.resumeAt': 'innlesingen har stoppet: {failure}; hendelser lagres bare i journalen til innlesingen fortsetter: anlegget prøver igjen kl. {resumeAt}',
  'alarm.ingest_stopped.resuming': 'innlesingen har stoppet: {failure}; hendelser lagres bare i journalen til innlesingen fortsetter: anlegget prøver nå, og leser det som ble lagret i mellomtiden',
  'alarm.ingest_stopped.damaged': 'innlesingen har stoppet: {failure}; hendelser lagres bare i journalen: anlegget prøver ikke igjen med en skadet tabellfil; når filen er reparert eller gjenopprettet, fortsetter innlesingen med «tilstand ingest resume» eller en omstart',
  'alarm.dead_letters': 'avviste hendelser som venter på å bli sett på: {n}',
  'alarm.command_failed': '{action} for {id} feilet{detail}',
  'alarm.command_timed_out': '{action} for {id} fikk ikke svar i tide{detail}',
  'alarm.stream_silent': '{stream}: ingen hendelse på {silent} (tillatt {allowed}) — kjører modulen, og er den tilkoblet? Radene står som de var',
  'alarm.sync_stalled': 'synkroniseringen til hovedkontoret har stått stille i {window}',
  'alarm.sync_stalled.refused': 'hovedkontoret avviser synkroniseringen: en annen PC sender for dette anlegget (docs/operations.md, «Two PCs for one site»)',
  'alarm.sync_stalled.gone': 'synkroniseringen til hovedkontoret er stanset: hovedkontoret har ikke lenger anleggets avsendermerke (er hovedkontorets deling montert? ble hovedkontorets kopi slettet?); ingenting sendes før det er tilbake (docs/operations.md, «HQ’s folder is empty»)',
  'alarm.sync_stalled.credentials': 'hovedkontoret avviser synkroniseringen: anleggets tilgangsnøkkel godtas ikke (sjekk nøkkelen og hovedkontorets regler for anlegget; for en mappe, at anlegget får skrive i den)',
  'alarm.sync_stalled.step': 'synkroniseringen til hovedkontoret er ikke i orden: ett steg har feilet i {window} mens hovedkontoret tok imot andre forespørsler',
  'alarm.sync_stalled.planning': 'synkroniseringen til hovedkontoret er ikke i orden: en tabell eller kontraktfil har vært utelatt fra sendingen i {window}',
  'alarm.sync_stalled.other': 'synkroniseringen til hovedkontoret er ikke i orden',
  'alarm.sync_stalled.pending': '{pending} steg venter',
  'alarm.sync_stalled.pending_one': '{pending} steg venter',
  'error.generic': 'Noe gikk galt: {message}',
  'error.internal': 'Noe gikk galt på stedet (feil {id}): skjer det igjen, si fra til IT; stedets logg har detaljene under denne id-en.',
  'error.close': 'Lukk',
  'error.noAnswer': 'stedet svarte ikke (det starter kanskje på nytt, eller nettverket er nede); prøv igjen om litt',
  'refusal.signin.wrong': 'Feil navn, PIN eller passord',
  'refusal.signin.badgeUnknown': 'Ukjent kort',
  'refusal.signin.left': '{left} forsøk igjen',
  'refusal.signin.left_one': '{left} forsøk igjen',
  'refusal.signin.locked': 'Sperret til {until} etter for mange feil forsøk',
  'refusal.signin.badgeLocked': 'Kortet avvises til {until} etter for mange feil forsøk',
  'refusal.signin.disabled': 'Denne brukeren er deaktivert',
  'refusal.pin.guessable.repeated': 'PIN {pin}: ett siffer gjentatt er blant det første en kollega ville prøve (fem feil PIN-er sperrer brukeren); velg en annen',
  'refusal.pin.guessable.sequence': 'PIN {pin}: sifre på rad er blant det første en kollega ville prøve (fem feil PIN-er sperrer brukeren); velg en annen',
  'refusal.role.refused': '{user} er {role}; dette krever {allowed}',
  'refusal.proposal.notFound': 'Forslag {id} finnes ikke',
  'refusal.proposal.notOpen': 'Forslag {id} er allerede {status}; bare åpne eller utsatte forslag kan avgjøres',
  'refusal.proposal.decidedMeanwhile': '{by} satte forslag {id} til {status} mens din avgjørelse ble gjort; se på det igjen før du avgjør',
  'refusal.user.exists': 'Det finnes allerede en bruker {name} (navn som bare skiller seg i store/små bokstaver, mellomrom eller usynlige tegn, leses som ett)',
  'refusal.user.selfDisable': 'Du kan ikke deaktivere deg selv',
  'refusal.user.selfDemote': 'Du kan ikke ta administratorrollen fra deg selv',
  'refusal.signin.busy': 'For mange innlogginger fra denne PC-en samtidig; prøv igjen om et øyeblikk',
  'refusal.session.required': 'Ikke pålogget (økten er avsluttet, eller stedet startet på nytt): logg inn',
  'refusal.site.notSetUp': 'Dette stedet er ikke satt opp ennå: fullfør førstegangsoppsettet (steds-id og første administrator)',
  'refusal.site.alreadySetUp': 'Dette stedet er allerede satt opp: last inn siden på nytt for å logge inn',
  'refusal.site.stopping': 'Stedet stopper: prøv igjen når det har startet igjen',
  'refusal.site.stopped': 'Stedet stoppet før det var ferdig med dette: når det har startet igjen, sjekk om det ble gjort, og prøv igjen hvis ikke',
  'refusal.init.exists': 'Datamappen på denne PC-en er allerede satt opp: last inn siden på nytt for å logge inn',
  'refusal.init.restoredOther': 'Denne PC-en har en gjenoppretting av stedet {site}: sett den opp med steds-id {site}',
  'refusal.init.otherSite': 'Denne PC-en har allerede tabellene til stedet {sites}: sett den opp med den steds-id-en, eller be IT om en annen datamappe',
  'refusal.init.restoreNote': 'Gjenopprettingsnotatet på denne PC-en (restore-note.json) kan ikke leses: si fra til IT',
  'refusal.init.restoreUnfinished': 'Gjenopprettingen til denne PC-en ble ikke fullført: be IT kjøre den på nytt',
  'refusal.init.adminExists': 'Oppsettet av denne PC-en stoppet etter at administratoren {admin} var lagt til: sett den opp på nytt med det administratornavnet (PIN-en som gis nå, blir brukt)',
  'refusal.init.configLost': 'Datamappen på denne PC-en har mistet config.json, men brukerne og modulpassordene er der fortsatt: legg config.json tilbake fra en sikkerhetskopi (et nytt oppsett ville erstatte passordet til hver modul). Spør IT.',
  'refusal.or': ' eller ',
  'refusal.session.ended.disabled': '{user} ble logget ut: brukeren er deaktivert. Logg inn igjen',
  'refusal.session.ended.locked': '{user} ble logget ut: brukeren er sperret etter for mange feil forsøk. Logg inn igjen',
  'refusal.session.ended.removed': '{user} ble logget ut: brukeren finnes ikke lenger. Logg inn igjen',
  'refusal.session.ended.secretReset': '{user} ble logget ut: PIN-en eller passordet ble tilbakestilt etter denne innloggingen. Logg inn igjen',
  'refusal.session.ended.idle': '{user} ble logget ut etter {after} uten bruk av skjermen. Logg inn igjen',
  'refusal.user.nameInvalid': 'Brukernavnet {name} kan ikke brukes: 1 til 64 tegn, uten skråstrek, «..», kontrolltegn, usynlige tegn, andre mellomrom enn det vanlige, mellomrom først eller sist, eller ord som blander latinske, kyrilliske og greske bokstaver',
  'refusal.user.noSecret': 'Brukeren {name}: oppgi en PIN, et passord eller et kort',
  'refusal.user.roleInvalid': 'Rollen {role} finnes ikke',
  'refusal.user.pinInvalid': 'En PIN har {min} til {max} sifre',
  'refusal.user.passwordLength': 'Et passord har {min} til {max} tegn',
  'refusal.user.badgeLength': 'Et kort har {min} til {max} tegn',
  'refusal.user.badgeTaken': 'Det kortet tilhører allerede en annen bruker',
  'refusal.user.notFound': 'Brukeren {name} finnes ikke',
  'refusal.reorder.levels': '{item}: «Bestill opp til» ({upTo}) må være større enn bestillingspunktet ({point})',
  'refusal.reorder.levels.location': '{item} på {location}: «Bestill opp til» ({upTo}) må være større enn bestillingspunktet ({point})',
  'refusal.config.refused': 'Ikke lagret: stedets innstillingsfil (config.json) har en feil ved {key}; spør IT',
  'refusal.config.file': 'Ikke lagret: stedets innstillingsfil (config.json) kan ikke leses som innstillinger (den må inneholde ett JSON-objekt); spør IT',
  'refusal.input.name': '{field}: 1 til {max} tegn, uten / eller \\, .., kontrolltegn, usynlige tegn, andre mellomrom enn det vanlige, mellomrom først eller sist, eller ord som blander latinske, kyrilliske og greske bokstaver',
  'refusal.input.tooLong': '{field}: høyst {max} tegn',
  'refusal.input.range': '{field}: et helt tall fra {min} til {max}',
  'refusal.input.refused': 'Stedet avviste forespørselen ({field}): last inn siden på nytt; skjer det igjen, si fra til IT',
  'refusal.input.refused.request': 'Stedet avviste forespørselen: last inn siden på nytt; skjer det igjen, si fra til IT',
  'refusal.input.characters': '{field}: inneholder et tegn som snur teksten ({char}, ofte limt inn med teksten); skriv den på nytt eller slett den delen',
  'refusal.request.tooLarge': 'Stedet avviste dette: en forespørsel kan være på høyst {max}; gjør det du skrev kortere (for eksempel en kommentar) og send igjen',
  'refusal.request.refused': 'Stedet avviste forespørselen: last inn siden på nytt; skjer det igjen, si fra til IT',
  'field.name': 'Brukernavn',
  'field.secret': 'PIN eller passord',
  'field.pin': 'PIN',
  'field.badge': 'Kort',
  'field.comment': 'Kommentar',
  'field.note': 'Hvorfor',
  'field.search': 'Søk',
  'field.reorderPoint': 'Bestillingspunkt',
  'field.orderUpTo': 'Bestill opp til',
  'field.snapshot': 'Øyeblikksbilde',
  'field.time': 'Tidspunkt',
  'field.tag': 'Merke',
  'field.item': 'Vare',
  'field.location': 'Lokasjon',
  'field.siteId': 'Anleggs-id',
  'crash.screenTitle': 'Dette skjermbildet kunne ikke vises',
  'crash.screenBody': 'Resten av brukergrensesnittet virker: velg et annet skjermbilde over, prøv dette på nytt eller last inn siden på nytt.',
  'crash.appTitle': 'Brukergrensesnittet stoppet på en feil',
  'crash.appBody': 'Last inn siden på nytt for å fortsette.',
  'crash.reported': 'Skjer det igjen, si fra til IT: stedets logg har feilen som {id}.',
  'crash.notReported': 'Skjer det igjen, si fra til IT: detaljene står i nettleserens konsoll.',
  'crash.retry': 'Prøv igjen',
  'crash.reload': 'Last inn siden på nytt',
  'tables.decision.approval_inbox': 'en skiftleder godkjenner eller avviser et forslag på gulv-PC-en',
  'tables.decision.work_queue': 'arbeidskø-agenten foreslår neste jobb hvert minutt',
  'tables.decision.stock': 'materialtilgangen sjekkes før en jobb frigis',
  'tables.decision.resources': 'arbeidskø-agenten kobler jobber til ledige ressurser hvert minutt',
  'tables.decision.dead_letters': 'en operatør ser en avvist hendelse og retter kontrakten eller bindingen',
  'column.materialItem': 'Materiale',
  'column.materialQty': 'Material\u00admengde',
  'column.opsSeq': 'Løpenr. drift',
  'column.kind': 'Type',
  'column.inventorySeq': 'Løpenr. lager',
  'column.commerceSeq': 'Løpenr. salg',
  'column.procurementSeq': 'Løpenr. innkjøp',
  'column.position': 'Journal\u00adposisjon',
  'column.detail': 'Detalj',
  'column.path': 'Sted i innholdet',
  'column.bindings': 'Bindinger',
  'column.module': 'Modul',
  'column.stream': 'Strøm',
  'column.seq': 'Modulens løpenr.',
  'column.dismissedAt': 'Avvist',
  'column.dismissedBy': 'Avvist av',
  'column.dismissedNote': 'Hvorfor avvist',
  'column.proposalId': 'Forslags-id',
  'column.situation': 'Situasjon',
  'column.rule': 'Regel',
  'column.ruleVersion': 'Regel\u00adversjon',
  'column.params': 'Parametere',
  'column.riskReason': 'Hvorfor denne risikoen',
  'column.run': 'Agent\u00adkjøring',
  'column.created': 'Foreslått',
  'column.agentStatus': 'Agentens status',
  'column.withdrawnReason': 'Hvorfor trukket',
  'column.agentUpdated': 'Oppdatert av agenten',
  'column.logFirstEntry': 'Første logg\u00adpost',
  'column.agentMessages': 'Oversettelser',
  'column.agentSeq': 'Løpenr. agent',
  'column.decision': 'Beslutning',
  'column.decidedBy': 'Besluttet av',
  'column.decidedRole': 'Rolle',
  'column.decidedAt': 'Besluttet',
  'column.decisionSnapshots': 'Kontrollerte øyeblikks\u00adbilder',
  'column.decisionReason': 'Begrunnelse for beslutningen',
  'column.decisionSeq': 'Løpenr. beslutning',
  'column.commandState': 'Kommando\u00adstatus',
  'column.commandTopic': 'Kommando\u00ademne',
  'column.commandSent': 'Kommando sendt',
  'column.commandUpdated': 'Kommando oppdatert',
  'column.commandDetail': 'Det modulen svarte',
  'column.commandSeq': 'Løpenr. kommando',
  'value.kind.machine': 'maskin',
  'value.kind.team': 'team',
  'value.letter.replayed': 'kjørt på nytt',
  'value.letter.dismissed': 'avskrevet',
  'history.tagGroup.agent': 'Agentkjøringer',
  'history.tagGroup.decision': 'Beslutninger',
  'history.tagGroup.checked': 'Kontrollerte godkjenninger',
  'history.tagGroup.hourly': 'Hver time',
  'history.tagGroup.other': 'Andre',
  'never': 'aldri',
  'ago': 'for {t} siden',
};

const de: Messages = {
  'app.title': 'Tilstand',
  'app.unread': 'Der Standort antwortet nicht; erneute Anfrage alle {every}.',
  'nav.inbox': 'Eingang',
  'nav.work': 'Arbeitsvorrat',
  'nav.stock': 'Bestand',
  'nav.tables': 'Tabellen',
  'nav.history': 'Verlauf',
  'nav.sync': 'Synchronisation',
  'nav.deadLetters': 'Abgewiesene Ereignisse',
  'nav.users': 'Benutzer',
  'nav.label': 'Hauptmenü',
  'signIn.title': 'Anmelden',
  'signIn.idle': 'Nach {after} ohne Benutzung abgemeldet. Zum Weitermachen erneut anmelden.',
  'signIn.noAnswer': 'der Standort hat die Anmeldung nicht innerhalb von {after} beantwortet; erneut anmelden und die IT informieren, wenn es wieder passiert',
  'signIn.user': 'Name',
  'signIn.secret': 'PIN oder Passwort',
  'signIn.badge': 'Oder Ausweis scannen',
  'signIn.submit': 'Anmelden',
  'signIn.pad': 'PIN-Tastenfeld',
  'signIn.padClearKey': 'Löschen',
  'signIn.padClear': 'PIN löschen',
  'signIn.padBack': 'Letzte Ziffer löschen',
  'signOut': 'Abmelden',
  'signedInAs': 'Angemeldet als {name}',
  'signedInAsRole': 'Angemeldet als {name} ({role})',
  'language': 'Sprache',
  'inbox.empty': 'Nichts wartet auf eine Entscheidung.',
  'inbox.waiting': '{n} warten auf eine Entscheidung',
  'inbox.waitingDeferred': '{n} warten auf eine Entscheidung, {d} davon zurückgestellt',
  'inbox.waiting_one': '{n} wartet auf eine Entscheidung',
  'inbox.waitingDeferred_one': '{n} wartet auf eine Entscheidung, zurückgestellt',
  'inbox.mostUrgent': 'Die {n} dringendsten werden gezeigt, von {all}, die warten: entscheiden Sie diese zuerst.',
  'inbox.risk': 'Risiko',
  'inbox.age': 'Wartet seit',
  'inbox.action': 'Vorschlag',
  'inbox.status': 'Status',
  'inbox.showWaiting': 'Wartend',
  'inbox.showDecided': 'Entschieden',
  'inbox.decidedHeading': 'Entschieden oder zurückgezogen, neueste zuerst',
  'inbox.decidedNone': 'Noch nichts entschieden oder zurückgezogen.',
  'inbox.decidedCut': 'Nur die neuesten Entscheidungen werden gezeigt (höchstens {n}).',
  'inbox.decidedAt': 'Wann',
  'inbox.decidedOnlyHeading': 'Entschieden, neueste zuerst',
  'inbox.decidedOnlyNone': 'Noch nichts entschieden.',
  'inbox.outcome': 'Ergebnis',
  'inbox.showWithdrawn': 'Auch was der Agent zurückgezogen hat ({n})',
  'inbox.pick': 'Wählen Sie einen Vorschlag in der Liste, oder drücken Sie N für den dringendsten.',
  'inbox.openMostUrgent': 'Den dringendsten öffnen',
  'inbox.pickDecided': 'Wählen Sie eine Entscheidung in der Liste, um ihren Verlauf und das Ergebnis beim Modul zu sehen.',
  'inbox.agent': 'der Agent',
  // No full stop after {age}, as detail.readAt: a German age ends in an abbreviation's ("vor 12 Sek.").
  'inbox.agentLooks': 'Der Agent prüft die Lage alle {interval}; zuletzt {time}, vor {age}',
  'inbox.agentLooksNotYet': 'Der Agent prüft die Lage alle {interval}; seit dem Start des Standorts hat er noch keine Prüfung abgeschlossen.',
  'inbox.agentOff': 'Der Agent läuft an diesem Standort nicht von selbst (ohne seinen Zeitgeber gestartet): er prüft nur, wenn ihn jemand startet.',
  'inbox.agentOffLast': 'Der Agent läuft an diesem Standort nicht von selbst (ohne seinen Zeitgeber gestartet): er prüft nur, wenn ihn jemand startet. Zuletzt {time}, vor {age}',
  // No full stop of its own: a German age ends in an abbreviation's ("vor 12 Sek."), and two met.
  'detail.readAt': 'So las es der Agent: {time}, vor {age}',
  'detail.explanation': 'Begründung',
  'detail.evidence': 'Was der Agent sah',
  'detail.snapshot': 'Snapshot {id}, Tag {tag}',
  'detail.rule': 'Regel {id} v{version}',
  'detail.ruleFile': 'eine eigene Regel dieses Standorts, aus {path}',
  'detail.comment': 'Kommentar (optional)',
  'detail.approve': 'Genehmigen',
  'detail.reject': 'Ablehnen',
  'detail.defer': 'Zurückstellen',
  'detail.next': 'Weiter',
  'detail.backToList': 'Zurück zur Liste',
  'detail.willSend': 'Genehmigen sendet „{action}“ ({command}) an {module}.',
  'detail.willSendUnnamed': 'Genehmigen sendet „{command}“ an {module}.',
  'detail.willSendNothing': 'Ein Hinweis: Genehmigen sendet nichts an ein Modul; es hält fest, dass Sie sich darum gekümmert haben.',
  'detail.stale': 'Nicht gesendet: Die Lage hat sich geändert, seit der Agent nachsah. {reason}',
  'detail.withdrawn': 'Vom Agenten zurückgezogen: {reason}',
  'detail.failedBefore': 'Schon genehmigt, aber das Modul hat es nicht ausgeführt ({n}×):',
  'detail.failedNoReason': 'kein Grund angegeben',
  'inbox.failedBefore': 'vorher {n}× nicht ausgeführt',
  'detail.command': 'Befehl: {progress}',
  'detail.trail': 'Verlauf',
  'trail.proposed': 'vorgeschlagen',
  'trail.refused': 'verweigert',
  'trail.command': 'Befehl: {progress}',
  'trail.field.reason': 'Grund',
  'trail.field.comment': 'Kommentar',
  'trail.field.detail': 'Detail',
  'trail.field.decision': 'Entscheidung',
  'trail.field.action': 'Aktion',
  'trail.refusal.unknown_user': 'unbekannter Benutzer',
  'trail.refusal.disabled': 'Benutzer deaktiviert',
  'trail.refusal.locked': 'Benutzer nach falschen PINs gesperrt',
  'trail.refusal.wrong_pin': 'falsche PIN',
  'trail.refusal.no_pin': 'Benutzer hat keine PIN',
  'trail.refusal.role': 'Rolle darf nicht entscheiden',
  'trail.writeBack.notApplied': 'nicht ausgeführt {seconds} s nach dem Senden (letzter Stand: {state})',
  'trail.writeBack.notSent': 'nicht innerhalb von {window} s nach der Genehmigung gesendet (vor {ago} s): nichts wurde getan; erneut entscheiden, falls es noch zutrifft',
  'trail.approvalNotOnRecord': 'nicht erfasst: Das Modul hat auf den Befehl geantwortet, der genehmigt wurde, bevor der Standort aus einem früheren Stand wiederhergestellt wurde (die Genehmigung ging mit dem alten PC verloren); wer ihn wann genehmigt hat, ist nicht bekannt',
  'detail.shortcuts': 'Tasten: A genehmigen · R ablehnen · D zurückstellen · N weiter',
  'progress.pending': 'wartet auf Versand',
  'firstRun.title': 'Diesen Standort einrichten',
  'firstRun.intro': 'Dies ist ein neues Tilstand-Datenverzeichnis. Geben Sie dem Standort eine ID und legen Sie den ersten Administrator an.',
  'firstRun.siteId': 'Standort-ID (Buchstaben, Ziffern, - und _)',
  'firstRun.adminName': 'Name des Administrators',
  'firstRun.adminPin': 'PIN des Administrators (4–12 Ziffern)',
  'firstRun.adminPin2': 'PIN wiederholen',
  'firstRun.mismatch': 'Die beiden PINs stimmen nicht überein.',
  'firstRun.submit': 'Standort einrichten',
  'firstRun.starting': 'Standort {site} ist eingerichtet. Er wird gestartet…',
  'firstRun.restored': 'Dieses Verzeichnis enthält den Standort {site}, aus der Zentrale wiederhergestellt. Er startet als {site} mit dem wiederhergestellten Stand; legen Sie seine Benutzer nach der Einrichtung neu an.',
  'detail.noSnapshot': 'kein Snapshot',
  'detail.checked': 'Wogegen die Genehmigung geprüft wurde',
  'detail.checkedStale': 'Wogegen die Genehmigung geprüft wurde (veraltet)',
  'detail.checkedSame': 'Die angeführten Zeilen sind so, wie der Agent sie las.',
  'detail.checkedChanged': 'Die angeführten Zeilen hatten sich geändert, seit der Agent sie las:',
  'detail.checkedChangedColumns': 'Die angeführten Zeilen hatten sich geändert, seit der Agent sie las (geändert: {columns}):',
  'detail.checkedSameSequence': 'Die angeführten Zeilen sind so, wie der Agent sie las; nur die Sequenznummern der Module haben sich geändert.',
  'detail.notDecider': 'Nur eine Schichtleitung oder ein Administrator entscheidet; Sie sind angemeldet als {name} ({role}).',
  'detail.checkedTagGone': 'der Tag ist nicht mehr vorhanden',
  'progress.sent': 'gesendet',
  'progress.acknowledged': 'vom Modul bestätigt',
  'progress.applied': 'ausgeführt',
  'progress.failed': 'fehlgeschlagen',
  'progress.timed_out': 'Zeitüberschreitung',
  'status.open': 'offen',
  'status.deferred': 'zurückgestellt',
  'status.approved': 'genehmigt',
  'status.rejected': 'abgelehnt',
  'status.stale': 'veraltet',
  'status.withdrawn': 'zurückgezogen',
  'risk.low': 'niedrig',
  'risk.medium': 'mittel',
  'risk.high': 'hoch',
  'work.jobs': 'Aufträge',
  'work.resources': 'Maschinen und Teams',
  'work.job': 'Auftrag',
  'work.status': 'Status',
  'work.blocked': 'Blockiert wegen',
  'work.capability': 'Fähigkeit',
  'work.priority': 'Priorität',
  'work.due': 'Fällig',
  'work.assigned': 'Zugewiesen an',
  'work.resource': 'Ressource',
  'work.state': 'Zustand',
  'work.since': 'Seit',
  'work.overdue': 'überfällig',
  // Column headings: soft hyphens (\u00ad), as in nb.
  'work.waiting': 'Wartet auf Ent\u00adscheidung',
  'work.search': 'Auftrag, Artikel, Ressource oder Status suchen',
  'work.more': 'Die ersten {n} Aufträge, blockierte und freigegebene zuerst: suchen Sie, um die anderen zu finden.',
  'waiting.open': 'Vorschlag {id} im Eingang öffnen',
  'waiting.action.assign_job': 'Zuweisung vorgeschlagen',
  'waiting.action.release_job': 'Freigabe vorgeschlagen',
  'waiting.action.escalate_job': 'Eskalation vorgeschlagen',
  'waiting.action.flag_idle_resource': 'Hinweis: untätig',
  'waiting.action.replenish': 'Nachbestellung vorgeschlagen',
  'action.assign_job': 'Zuweisung',
  'action.release_job': 'Freigabe',
  'action.escalate_job': 'Eskalation',
  'action.flag_idle_resource': 'Hinweis auf untätige Ressource',
  'action.replenish': 'Nachbestellung',
  'work.status.released': 'freigegeben',
  'work.status.blocked': 'blockiert',
  'work.status.in_progress': 'in Arbeit',
  'work.status.done': 'erledigt',
  'work.state.free': 'frei',
  'work.state.busy': 'belegt',
  'work.state.down': 'ausgefallen',
  'stock.search': 'Artikel oder Lagerort suchen',
  'stock.more': 'Die ersten {n} Zeilen nach Artikel und Lagerort: suchen Sie einen Artikel oder Lagerort, um die anderen zu finden.',
  'stock.item': 'Artikel',
  'stock.location': 'Lagerort',
  'stock.onHand': 'Vorrätig',
  'stock.reserved': 'Reserviert',
  'stock.inbound': 'Im Zulauf',
  'stock.available': 'Verfügbar',
  'stock.projected': 'Prognose',
  'stock.reorderPoint': 'Melde\u00adbestand',
  'stock.orderUpTo': 'Der Agent schlägt vor, bis {n} aufzufüllen ({scope})',
  'stock.below': 'darunter',
  'stock.belowOnly': 'Nur unter dem Meldebestand',
  'stock.editPolicy': 'Meldebestand von {item} in {location} ändern',
  'stock.policyFor': 'Meldebestand von {item} in {location}',
  'stock.scopeLocation': 'Nur in {location}',
  'stock.scopeItem': 'Alle Lagerorte von {item} ohne eigenen',
  'stock.scope.location': 'für diesen Lagerort gesetzt',
  'stock.scope.item': 'für den Artikel gesetzt',
  'stock.scope.default': 'der Standard des Standorts',
  'stock.scopeTag.location': 'Lagerort',
  'stock.scopeTag.item': 'Artikel',
  'stock.setBy': 'gesetzt von {name}, {time}',
  'stock.changes': 'Änderungen der Meldebestände',
  'stock.noChanges': 'Noch keine über diesen Bildschirm',
  'stock.changeAtLocation': '{item} in {location}',
  'stock.changeForItem': '{item} (jeder Lagerort ohne eigenen)',
  'stock.notSet': 'nicht gesetzt',
  'stock.levels': '{point}, bis {upTo}',
  'stock.orderUpToField': 'Auffüllen bis',
  'stock.savePolicy': 'Speichern',
  'stock.removePolicy': 'Diese Einstellung entfernen',
  'stock.cancel': 'Abbrechen',
  'stock.policyNote': 'Wird unter Ihrem Namen in config.json gespeichert; der Agent prüft sofort alle Zeilen dagegen.',
  'stock.upToNotAbove': '„Auffüllen bis“ muss größer sein als der Meldebestand ({point}).',
  'rows.noMatch': 'Keine passenden Zeilen.',
  'tables.table': 'Tabelle',
  'tables.age': 'Alter',
  'tables.budget': 'Budget',
  'tables.pending': 'Ausstehende Ereignisse',
  'tables.snapshots': 'Snapshots',
  'tables.tags': 'Tags',
  'tables.size': 'Größe',
  'tables.debt': 'Kompak\u00adtierungs\u00adrückstand',
  'tables.freshness': 'Aktualität',
  'tables.within': 'im Budget',
  'app.siteQuiet': 'Keine Antwort vom Standort seit {time}',
  'app.siteQuietHint': 'Der Standort antwortet nicht: die angezeigten Alter sind seine letzten, weitergezählt nach der Uhr dieses PCs',
  'sync.unknown': 'unbekannt',
  'tables.breach': 'ÜBER BUDGET',
  'tables.unfed': 'keine Quelle',
  'tables.unfedHint': 'keine Bindung in config.json speist diese Tabelle: nichts aktualisiert sie, also hat sie kein Alter zu zeigen',
  'streams.title': 'Modul-Streams',
  'streams.stream': 'Stream',
  'streams.lastEvent': 'Letztes Ereignis',
  'streams.seq': 'Seq.',
  'streams.allowed': 'Alarm nach Stille von',
  'streams.ago': 'vor {d}',
  'streams.none': 'keines seit dem Start',
  'streams.never': 'nie',
  'streams.silent': 'STILL: läuft das Modul?',
  'streams.gap': 'Seq {from}–{to} fehlt seit {d}: erneut angefordert',
  'history.table': 'Tabelle',
  'history.point': 'Stand zum Zeitpunkt',
  'history.latest': 'Aktuell',
  'history.tag': 'Tag',
  'history.snapshot': 'Snapshot',
  'history.time': 'Zeit',
  'history.show': 'Anzeigen',
  'history.compare': 'Mit aktuellem Stand vergleichen',
  'history.change': 'Änderung',
  'history.changesLabel': '{table}, Änderungen',
  'history.kind.+I': 'hinzugefügt',
  'history.kind.-U': 'vorher',
  'history.kind.+U': 'nachher',
  'history.kind.-D': 'entfernt',
  'history.tagSearch': 'Tag-Name enthält',
  'history.noTagMatch': 'Kein Tag von {table} enthält „{q}“ im Namen: Anzeigen und Vergleichen brauchen einen Tag.',
  'history.noTags': '{table} hat noch keine Tags: Anzeigen und Vergleichen brauchen einen Tag.',
  'history.snapshotMissing': 'Geben Sie die Nummer eines Snapshots ein (z. B. 42), um anzuzeigen oder zu vergleichen.',
  'history.timeMissing': 'Wählen Sie Datum und Uhrzeit, um anzuzeigen oder zu vergleichen.',
  'history.tagsNewest': 'Die {n} neuesten Tags werden gezeigt: Geben Sie einen Teil des Namens ein (eine Lauf-ID, eine Vorschlags-ID, ein Datum), um ein älteres zu finden.',
  'history.contains': 'Zeilen mit',
  'history.containsPlaceholder': 'z. B. ITEM-008 oder J-0023',
  'history.containsHint': 'Teil eines Artikels, eines Lagerplatzes, eines Auftrags oder eines Status: jede Zelle, wie gespeichert; ein Status auch so, wie er angezeigt wird (in Arbeit oder in_progress)',
  'history.at': '{table} bei Snapshot #{id}, geschrieben {time}. Zeilen: {n}',
  'history.atMore': '{table} bei Snapshot #{id}, geschrieben {time}. Zeilen: die ersten {n}. Es gibt weitere: mit „Zeilen mit“ eingrenzen.',
  'history.empty': '{table} hat noch keinen Snapshot: nichts wurde hineingeschrieben.',
  'history.changes': '{table} von Snapshot #{from} ({fromTime}) bis zum aktuellen, #{to} ({toTime}). Änderungen: {n}',
  'history.changesMore': '{table} von Snapshot #{from} ({fromTime}) bis zum aktuellen, #{to} ({toTime}). Änderungen: die ersten {n}. Es gibt weitere: mit „Zeilen mit“ eingrenzen.',
  'history.noChanges': '{table}: keine Änderungen von Snapshot #{from} ({fromTime}) bis zum aktuellen, #{to} ({toTime})',
  'history.filtered': 'Nur Zeilen, in denen eine Zelle „{q}“ enthält.',
  'history.sequenceOnly': 'nur lfd. Nr.',
  'history.sequenceOnlyTitle': 'Nur die laufenden Nummern der Module haben sich geändert: Die Zeile kam mit denselben Werten erneut.',
  'sync.online': 'Verbunden',
  'sync.offline': 'GETRENNT',
  'sync.notConfigured': 'Kein Zentral-Ziel konfiguriert: der Standort arbeitet allein. Ein Administrator setzt hq.target in der config.json des Datenverzeichnisses (docs/operations.md, „Connecting to headquarters“).',
  'sync.unhealthy': 'NICHT IN ORDNUNG',
  'sync.refused': 'VON DER ZENTRALE ABGEWIESEN',
  'sync.gone': 'ORDNER DER ZENTRALE LEER',
  'sync.reason.refused': 'Die Zentrale weist diesen PC ab: ein anderer PC sendet für diesen Standort. Hat jener PC diesen ersetzt, wird dieser außer Betrieb genommen; soll dieser senden, übernimmt ein Administrator (docs/operations.md, „Two PCs for one site“).',
  'sync.reason.gone': 'Der Ordner der Zentrale enthält die Absendermarke dieses Standorts nicht mehr, die dieser PC dort geschrieben hat: Ist die Freigabe der Zentrale auf diesem PC eingehängt (oder wurde die Kopie des Standorts in der Zentrale gelöscht)? Bis sie wieder da ist, wird nichts gesendet; danach geht das Senden von selbst weiter. Wurde die Kopie der Zentrale absichtlich entfernt, übernimmt ein Administrator, und alles wird erneut gesendet (docs/operations.md, „HQ’s folder is empty“).',
  'sync.reason.credentials': 'Die Zentrale weist den Zugangsschlüssel dieses Standorts ab (falsch, abgelaufen oder widerrufen, oder die Regeln der Zentrale für den Standort erlauben die Anfrage nicht), oder, wenn die Zentrale ein Ordner ist, darf der Standort nicht in diesen Ordner schreiben (Berechtigungen, oder schreibgeschützt eingehängt). Ein Administrator prüft den Schlüssel des Dienstes und die Regeln in der Zentrale oder die Berechtigungen des Ordners; das Senden geht von selbst weiter, sobald er angenommen wird. Der letzte Fehler nennt die abgewiesenen Anfragen.',
  'sync.reason.step': 'Ein Schritt schlägt seit {window} oder länger fehl, während die Zentrale andere Anfragen annimmt (eine Freigabe, die eine Datei beschädigt); der letzte Fehler nennt ihn.',
  'sync.reason.waiting': 'Schritte warten seit {window} oder länger, und nichts hat die Zentrale erreicht.',
  'sync.reason.planning': 'Eine Tabelle oder Vertragsdatei wird seit {window} oder länger nicht gesendet; der letzte Fehler nennt sie.',
  'sync.lastError': 'Letzter Fehler',
  'sync.pending': '{items} Schritte, {bytes} ausstehend',
  'sync.pending_one': '{items} Schritt, {bytes} ausstehend',
  'sync.target': 'Synchronisiert nach',
  'sync.recent': 'In den letzten {window}: {items} Schritte erledigt, {bytes} gesendet',
  'sync.recent_one': 'In den letzten {window}: {items} Schritt erledigt, {bytes} gesendet',
  'sync.lastSuccess': 'Letzter Erfolg',
  'sync.oldest': 'Ältester ungesendeter Schritt wartet seit',
  'sync.current': 'Sende {file}',
  'sync.dropped.title': 'Nicht an die Zentrale gesendet',
  'sync.dropped.deleted': 'Tag {tag} der Tabelle {table} wurde am Standort gelöscht, bevor er die Zentrale erreichte, und deshalb nicht gesendet (verworfen {when}). Die Zentrale wird ihn nicht haben.',
  'sync.dropped.other': 'Tag {tag} der Tabelle {table} wurde nicht an die Zentrale gesendet (verworfen {when}): {why}',
  'sync.restored.title': 'Aus einem älteren Tag wiederhergestellt',
  'sync.restored.table': 'Die Tabelle {table} wurde am {restored} aus ihrem Tag {tag} wiederhergestellt, weil ihre neueste Kopie in der Zentrale beschädigt war. Was sie von {from} bis {until} ({lost}) erfasst hat, ist verloren, außer dem, was ihre Module erneut gesendet haben.',
  'sync.restored.approval_inbox': 'Die Tabelle {table} wurde am {restored} aus ihrem Tag {tag} wiederhergestellt, weil ihre neueste Kopie in der Zentrale beschädigt war. Die Vorschläge, Entscheidungen und der Befehlsverlauf von {from} bis {until} ({lost}) sind verloren und wurden nicht erneut gesendet: Ein damals genehmigter Befehl wird nicht mehr verfolgt, es sei denn, sein Modul antwortet darauf (dann erscheint er als von „?“ genehmigt).',
  'sync.restored.decision_log': 'Die Tabelle {table} wurde am {restored} aus ihrem Tag {tag} wiederhergestellt, weil ihre neueste Kopie in der Zentrale beschädigt war. Die Einträge des Entscheidungsprotokolls von {from} bis {until} ({lost}) sind verloren.',
  'dead.reason': 'Grund',
  'dead.why.too_large': 'zu groß',
  'dead.why.bad_json': 'kein JSON',
  'dead.why.unsafe_json': 'unsicheres JSON',
  'dead.why.bad_envelope': 'Umschlag unvollständig oder falsch',
  'dead.why.topic_mismatch': 'falsches Topic',
  'dead.why.no_contract': 'unbekannter Vertrag',
  'dead.why.contract_violation': 'passt nicht zum Vertrag',
  'dead.why.no_binding': 'keine Bindung für das Topic',
  'dead.why.binding_error': 'Bindung fehlgeschlagen',
  'dead.why.unfit_for_table': 'Wert passt nicht in die Tabelle',
  'dead.why.late_after_gap': 'kam zu spät: der Standort hatte aufgehört, darauf zu warten',
  'dead.why.seq_far_ahead': 'zu weit voraus: der Strom lief zu lange darunter weiter',
  'dead.topic': 'Topic',
  'dead.payload': 'Inhalt',
  'dead.received': 'Empfangen',
  'dead.replay': 'Alle offenen erneut verarbeiten',
  'dead.replayGroup': 'Diese offenen erneut verarbeiten',
  'dead.replayed': '{n} erneut verarbeitet, {f} weiterhin fehlerhaft',
  'dead.empty': 'Keine abgewiesenen Ereignisse.',
  'dead.dismiss': 'Verwerfen',
  'dead.alike': 'Auch alle anderen offenen Ereignisse aus diesem Topic mit diesem Grund ({n} hier gelistet)',
  'dead.moreOpen': 'Die ältesten {n} offenen Ereignisse werden gezeigt, von {all}: verarbeiten oder verwerfen Sie diese, dann erscheinen die nächsten.',
  'dead.moreOpen_one': 'Das älteste offene Ereignis wird gezeigt, von {all}: verarbeiten oder verwerfen Sie es, dann erscheinen die nächsten.',
  'dead.note': 'Warum (wird mit Ihrem Namen gespeichert)',
  'dead.dismissedBy': 'Verworfen von {name}, {time}: {note}',
  'dead.wasReplayed': 'Erneut verarbeitet',
  'dead.replayAlike': 'Dieses und alle gleichartigen offenen erneut verarbeiten',
  'dead.replayAlikeTitle': 'Alle offenen Ereignisse aus diesem Topic mit diesem Grund, hier gelistet oder nicht: sobald die Ursache behoben ist (eine Vertragsversion hinzugefügt)',
  'dead.retention': 'Ein erneut verarbeitetes oder verworfenes Ereignis wird {span} nach dem Schließen gelöscht.',
  'dead.sources': 'Offene Ereignisse kommen von',
  'dead.fromSource': '{n} {reason} von {source}',
  'dead.sourcesMore': 'und {n} weitere',
  'dead.sourcesMore_one': 'und ein weiteres',
  'dead.filtered': 'Nur die Ereignisse von {source} aufgelistet ({reason}).',
  'dead.showAll': 'Alle zeigen',
  'dead.emptyFiltered': 'Keine abgewiesenen Ereignisse in dieser Gruppe.',
  'users.name': 'Name',
  'users.roles': 'Rolle',
  'users.add': 'Benutzer anlegen',
  'users.disable': 'Deaktivieren',
  'users.enable': 'Aktivieren',
  'users.reset': 'PIN oder Passwort zurücksetzen',
  'users.disabled': 'deaktiviert',
  'users.newSecret': 'PIN oder Passwort',
  'users.badge': 'Ausweis (optional: hier scannen)',
  'users.you': 'Sie',
  'users.setSecret': 'Setzen',
  'users.cancel': 'Abbrechen',
  'users.pinSet': 'Neue PIN für {name} gesetzt (sie ersetzt das Passwort, falls vorhanden).',
  'users.passwordSet': 'Neues Passwort für {name} gesetzt (es ersetzt die PIN, falls vorhanden).',
  'users.added': 'Benutzer {name} ({role}) angelegt.',
  'users.hasBadge': 'Ausweis',
  'users.badgeYes': 'ja',
  'users.badgeNo': 'nein',
  'users.secretRule': 'Eine PIN hat 4 bis 12 Ziffern, ein Passwort mindestens 8 Zeichen.',
  'role.viewer': 'Betrachter',
  'role.operator': 'Bediener',
  'role.shift_lead': 'Schichtleitung',
  'role.admin': 'Administrator',
  'alarm.title': 'Erfordert Aufmerksamkeit',
  'alarm.budget_breach': '{table} ist {age} alt; das Budget ist {budget}',
  'alarm.budget_breach.held_one': '{held} Ereignis dafür wartet hinter einer fehlenden Seq',
  'alarm.budget_breach.held': '{held} Ereignisse dafür warten hinter einer fehlenden Seq',
  'alarm.budget_breach.stopped': 'Einlesen gestoppt, Ereignisse werden nur im Journal gespeichert',
  'alarm.ingest_stopped': 'Einlesen gestoppt: {failure}; Ereignisse werden nur im Journal gespeichert, bis der Standort neu gestartet wird',
  'alarm.ingest_stopped.resumeAt': 'Einlesen gestoppt: {failure}; Ereignisse werden nur im Journal gespeichert, bis das Einlesen weiterläuft: der Standort versucht es um {resumeAt} erneut',
  'alarm.ingest_stopped.resuming': 'Einlesen gestoppt: {failure}; Ereignisse werden nur im Journal gespeichert, bis das Einlesen weiterläuft: der Standort setzt es gerade fort und liest, was inzwischen ins Journal kam',
  'alarm.ingest_stopped.damaged': 'Einlesen gestoppt: {failure}; Ereignisse werden nur im Journal gespeichert: bei einer beschädigten Tabellendatei versucht es der Standort nicht erneut; ist die Datei repariert oder wiederhergestellt, setzt „tilstand ingest resume“ oder ein Neustart das Einlesen fort',
  'alarm.dead_letters': 'abgewiesene Ereignisse, die auf Prüfung warten: {n}',
  'alarm.command_failed': '{action} für {id} ist fehlgeschlagen{detail}',
  'alarm.command_timed_out': '{action} für {id}: keine Antwort in der Zeit{detail}',
  'alarm.stream_silent': '{stream}: seit {silent} kein Ereignis (erlaubt {allowed}) — läuft das Modul, und ist es verbunden? Seine Zeilen bleiben, wie sie waren',
  'alarm.sync_stalled': 'die Synchronisierung mit der Zentrale kommt seit {window} nicht voran',
  'alarm.sync_stalled.refused': 'die Zentrale weist die Synchronisierung ab: ein anderer PC sendet für diesen Standort (docs/operations.md, „Two PCs for one site“)',
  'alarm.sync_stalled.gone': 'die Synchronisierung mit der Zentrale ist angehalten: die Zentrale hat die Absendermarke dieses Standorts nicht mehr (ist die Freigabe der Zentrale eingehängt? wurde die Kopie der Zentrale gelöscht?); bis sie wieder da ist, wird nichts gesendet (docs/operations.md, „HQ’s folder is empty“)',
  'alarm.sync_stalled.credentials': 'die Zentrale weist die Synchronisierung ab: der Zugangsschlüssel dieses Standorts wird nicht angenommen (Schlüssel und Regeln der Zentrale für den Standort prüfen; bei einem Ordner, ob der Standort hineinschreiben darf)',
  'alarm.sync_stalled.step': 'die Synchronisierung mit der Zentrale ist nicht in Ordnung: ein Schritt schlägt seit {window} fehl, während die Zentrale andere Anfragen annimmt',
  'alarm.sync_stalled.planning': 'die Synchronisierung mit der Zentrale ist nicht in Ordnung: eine Tabelle oder Vertragsdatei wird seit {window} nicht gesendet',
  'alarm.sync_stalled.other': 'die Synchronisierung mit der Zentrale ist nicht in Ordnung',
  'alarm.sync_stalled.pending': '{pending} Schritte warten',
  'alarm.sync_stalled.pending_one': '{pending} Schritt wartet',
  'error.generic': 'Etwas ist schiefgelaufen: {message}',
  'error.internal': 'Am Standort ist etwas schiefgelaufen (Fehler {id}): passiert es wieder, die IT informieren; das Protokoll des Standorts hat die Einzelheiten unter dieser Kennung.',
  'error.close': 'Schließen',
  'error.noAnswer': 'der Standort hat nicht geantwortet (er startet vielleicht neu, oder das Netzwerk ist gestört); gleich noch einmal versuchen',
  'refusal.signin.wrong': 'Falscher Name, falsche PIN oder falsches Passwort',
  'refusal.signin.badgeUnknown': 'Unbekannter Ausweis',
  'refusal.signin.left': 'noch {left} Versuche',
  'refusal.signin.left_one': 'noch {left} Versuch',
  'refusal.signin.locked': 'Gesperrt bis {until} nach zu vielen Fehlversuchen',
  'refusal.signin.badgeLocked': 'Ausweis abgewiesen bis {until} nach zu vielen Fehlversuchen',
  'refusal.signin.disabled': 'Dieser Benutzer ist deaktiviert',
  'refusal.pin.guessable.repeated': 'PIN {pin}: eine wiederholte Ziffer gehört zum Ersten, was ein Kollege probieren würde (fünf falsche PINs sperren den Benutzer); bitte eine andere wählen',
  'refusal.pin.guessable.sequence': 'PIN {pin}: Ziffern in Folge gehören zum Ersten, was ein Kollege probieren würde (fünf falsche PINs sperren den Benutzer); bitte eine andere wählen',
  'refusal.role.refused': '{user} ist {role}; dafür braucht es {allowed}',
  'refusal.proposal.notFound': 'Vorschlag {id} gibt es nicht',
  'refusal.proposal.notOpen': 'Vorschlag {id} ist bereits {status}; nur offene oder zurückgestellte Vorschläge können entschieden werden',
  'refusal.proposal.decidedMeanwhile': '{by} hat Vorschlag {id} als {status} markiert, während Ihre Entscheidung getroffen wurde; sehen Sie ihn erneut an, bevor Sie entscheiden',
  'refusal.user.exists': 'Einen Benutzer {name} gibt es bereits (Namen, die sich nur in Groß-/Kleinschreibung, Leerzeichen oder unsichtbaren Zeichen unterscheiden, lesen sich gleich)',
  'refusal.user.selfDisable': 'Sie können sich nicht selbst deaktivieren',
  'refusal.user.selfDemote': 'Sie können sich nicht selbst die Administratorrolle nehmen',
  'refusal.signin.busy': 'Zu viele Anmeldungen von diesem PC gleichzeitig; gleich noch einmal versuchen',
  'refusal.session.required': 'Nicht angemeldet (die Sitzung ist abgelaufen oder der Standort wurde neu gestartet): bitte anmelden',
  'refusal.site.notSetUp': 'Dieser Standort ist noch nicht eingerichtet: die Ersteinrichtung abschließen (Standort-ID und erster Administrator)',
  'refusal.site.alreadySetUp': 'Dieser Standort ist bereits eingerichtet: die Seite neu laden, um sich anzumelden',
  'refusal.site.stopping': 'Der Standort wird gestoppt: erneut versuchen, sobald er wieder gestartet ist',
  'refusal.site.stopped': 'Der Standort wurde gestoppt, bevor er damit fertig war: sobald er wieder gestartet ist, prüfen, ob es ausgeführt wurde, und es sonst erneut versuchen',
  'refusal.init.exists': 'Das Datenverzeichnis dieses PCs ist bereits eingerichtet: die Seite neu laden, um sich anzumelden',
  'refusal.init.restoredOther': 'Dieser PC enthält eine Wiederherstellung des Standorts {site}: mit der Standort-ID {site} einrichten',
  'refusal.init.otherSite': 'Dieser PC enthält bereits die Tabellen des Standorts {sites}: mit dieser Standort-ID einrichten oder die IT um ein anderes Datenverzeichnis bitten',
  'refusal.init.restoreNote': 'Die Wiederherstellungsnotiz dieses PCs (restore-note.json) ist nicht lesbar: die IT informieren',
  'refusal.init.restoreUnfinished': 'Die Wiederherstellung auf diesen PC wurde nicht abgeschlossen: die IT bitten, sie erneut auszuführen',
  'refusal.init.adminExists': 'Die Einrichtung dieses PCs brach ab, nachdem der Administrator {admin} angelegt war: erneut mit diesem Administratornamen einrichten (die jetzt eingegebene PIN gilt)',
  'refusal.init.configLost': 'Im Datenverzeichnis dieses PCs fehlt die config.json, Benutzer und Modulpasswörter sind aber noch da: config.json aus einer Sicherung zurückspielen (eine neue Einrichtung würde das Passwort jedes Moduls ersetzen). Die IT fragen.',
  'refusal.or': ' oder ',
  'refusal.session.ended.disabled': '{user} wurde abgemeldet: der Benutzer wurde deaktiviert. Bitte erneut anmelden',
  'refusal.session.ended.locked': '{user} wurde abgemeldet: der Benutzer ist nach zu vielen Fehlversuchen gesperrt. Bitte erneut anmelden',
  'refusal.session.ended.removed': '{user} wurde abgemeldet: den Benutzer gibt es nicht mehr. Bitte erneut anmelden',
  'refusal.session.ended.secretReset': '{user} wurde abgemeldet: PIN oder Passwort wurde nach dieser Anmeldung zurückgesetzt. Bitte erneut anmelden',
  'refusal.session.ended.idle': '{user} wurde nach {after} ohne Benutzung des Bildschirms abgemeldet. Bitte erneut anmelden',
  'refusal.user.nameInvalid': 'Der Benutzername {name} ist nicht möglich: 1 bis 64 Zeichen, ohne Schrägstrich, „..“, Steuerzeichen, unsichtbare Zeichen, andere Leerzeichen als das normale, Leerzeichen am Anfang oder Ende oder Wörter, die lateinische, kyrillische und griechische Buchstaben mischen',
  'refusal.user.noSecret': 'Benutzer {name}: eine PIN, ein Passwort oder einen Ausweis angeben',
  'refusal.user.roleInvalid': 'Die Rolle {role} gibt es nicht',
  'refusal.user.pinInvalid': 'Eine PIN hat {min} bis {max} Ziffern',
  'refusal.user.passwordLength': 'Ein Passwort hat {min} bis {max} Zeichen',
  'refusal.user.badgeLength': 'Ein Ausweis hat {min} bis {max} Zeichen',
  'refusal.user.badgeTaken': 'Dieser Ausweis gehört schon einem anderen Benutzer',
  'refusal.user.notFound': 'Den Benutzer {name} gibt es nicht',
  'refusal.reorder.levels': '{item}: „Auffüllen bis“ ({upTo}) muss größer sein als der Meldebestand ({point})',
  'refusal.reorder.levels.location': '{item} an {location}: „Auffüllen bis“ ({upTo}) muss größer sein als der Meldebestand ({point})',
  'refusal.config.refused': 'Nicht gespeichert: die Einstellungsdatei des Standorts (config.json) hat einen Fehler bei {key}; bitte die IT fragen',
  'refusal.config.file': 'Nicht gespeichert: die Einstellungsdatei des Standorts (config.json) ist als Einstellungen nicht lesbar (sie muss ein JSON-Objekt enthalten); bitte die IT fragen',
  'refusal.input.name': '{field}: 1 bis {max} Zeichen, ohne / oder \\, .., Steuerzeichen, unsichtbare Zeichen, andere Leerzeichen als das normale, Leerzeichen am Anfang oder Ende oder Wörter, die lateinische, kyrillische und griechische Buchstaben mischen',
  'refusal.input.tooLong': '{field}: höchstens {max} Zeichen',
  'refusal.input.range': '{field}: eine ganze Zahl von {min} bis {max}',
  'refusal.input.refused': 'Der Standort hat die Anfrage abgelehnt ({field}): die Seite neu laden; wenn es wieder passiert, die IT informieren',
  'refusal.input.refused.request': 'Der Standort hat die Anfrage abgelehnt: die Seite neu laden; wenn es wieder passiert, die IT informieren',
  'refusal.input.characters': '{field}: enthält ein Zeichen, das den Text umdreht ({char}, oft mit dem Text eingefügt); neu tippen oder diesen Teil löschen',
  'refusal.request.tooLarge': 'Der Standort hat das abgelehnt: eine Anfrage darf höchstens {max} groß sein; das Eingegebene (etwa einen Kommentar) kürzen und erneut senden',
  'refusal.request.refused': 'Der Standort hat die Anfrage abgelehnt: die Seite neu laden; wenn es wieder passiert, die IT informieren',
  'field.name': 'Benutzername',
  'field.secret': 'PIN oder Passwort',
  'field.pin': 'PIN',
  'field.badge': 'Ausweis',
  'field.comment': 'Kommentar',
  'field.note': 'Warum',
  'field.search': 'Suche',
  'field.reorderPoint': 'Meldebestand',
  'field.orderUpTo': 'Auffüllen bis',
  'field.snapshot': 'Snapshot',
  'field.time': 'Zeit',
  'field.tag': 'Tag',
  'field.item': 'Artikel',
  'field.location': 'Lagerort',
  'field.siteId': 'Standort-ID',
  'crash.screenTitle': 'Diese Ansicht konnte nicht angezeigt werden',
  'crash.screenBody': 'Der Rest der Oberfläche funktioniert: oben eine andere Ansicht wählen, diese erneut versuchen oder die Seite neu laden.',
  'crash.appTitle': 'Die Oberfläche wurde durch einen Fehler angehalten',
  'crash.appBody': 'Die Seite neu laden, um weiterzumachen.',
  'crash.reported': 'Passiert es wieder, die IT informieren: das Protokoll des Standorts führt den Fehler als {id}.',
  'crash.notReported': 'Passiert es wieder, die IT informieren: die Einzelheiten stehen in der Konsole des Browsers.',
  'crash.retry': 'Erneut versuchen',
  'crash.reload': 'Seite neu laden',
  'tables.decision.approval_inbox': 'eine Schichtleitung genehmigt oder lehnt einen Vorschlag am Hallen-PC ab',
  'tables.decision.work_queue': 'der Agent des Arbeitsvorrats schlägt jede Minute den nächsten Auftrag vor',
  'tables.decision.stock': 'die Materialverfügbarkeit wird geprüft, bevor ein Auftrag freigegeben wird',
  'tables.decision.resources': 'der Agent des Arbeitsvorrats ordnet jede Minute Aufträge freien Ressourcen zu',
  'tables.decision.dead_letters': 'ein Bediener sieht ein abgewiesenes Ereignis und korrigiert dessen Vertrag oder Bindung',
  'column.materialItem': 'Material',
  'column.materialQty': 'Material\u00admenge',
  'column.opsSeq': 'Lfd. Nr. Betrieb',
  'column.kind': 'Art',
  'column.inventorySeq': 'Lfd. Nr. Bestand',
  'column.commerceSeq': 'Lfd. Nr. Vertrieb',
  'column.procurementSeq': 'Lfd. Nr. Einkauf',
  'column.position': 'Journal\u00adposition',
  'column.detail': 'Detail',
  'column.path': 'Stelle im Inhalt',
  'column.bindings': 'Bindungen',
  'column.module': 'Modul',
  'column.stream': 'Stream',
  'column.seq': 'Lfd. Nr. des Moduls',
  'column.dismissedAt': 'Verworfen',
  'column.dismissedBy': 'Verworfen von',
  'column.dismissedNote': 'Warum verworfen',
  'column.proposalId': 'Vorschlags-ID',
  'column.situation': 'Situation',
  'column.rule': 'Regel',
  'column.ruleVersion': 'Regel\u00adversion',
  'column.params': 'Parameter',
  'column.riskReason': 'Grund des Risikos',
  'column.run': 'Agenten\u00adlauf',
  'column.created': 'Vorgeschlagen',
  'column.agentStatus': 'Status beim Agenten',
  'column.withdrawnReason': 'Warum zurückgezogen',
  'column.agentUpdated': 'Vom Agenten aktualisiert',
  'column.logFirstEntry': 'Erster Protokoll\u00adeintrag',
  'column.agentMessages': 'Übersetzungen',
  'column.agentSeq': 'Lfd. Nr. Agent',
  'column.decision': 'Entscheidung',
  'column.decidedBy': 'Entschieden von',
  'column.decidedRole': 'Rolle',
  'column.decidedAt': 'Entschieden',
  'column.decisionSnapshots': 'Geprüfte Snapshots',
  'column.decisionReason': 'Grund der Entscheidung',
  'column.decisionSeq': 'Lfd. Nr. Entscheidung',
  'column.commandState': 'Befehls\u00adstatus',
  'column.commandTopic': 'Befehls-Topic',
  'column.commandSent': 'Befehl gesendet',
  'column.commandUpdated': 'Befehl aktualisiert',
  'column.commandDetail': 'Antwort des Moduls',
  'column.commandSeq': 'Lfd. Nr. Befehl',
  'value.kind.machine': 'Maschine',
  'value.kind.team': 'Team',
  'value.letter.replayed': 'erneut verarbeitet',
  'value.letter.dismissed': 'verworfen',
  'history.tagGroup.agent': 'Agentenläufe',
  'history.tagGroup.decision': 'Entscheidungen',
  'history.tagGroup.checked': 'Geprüfte Genehmigungen',
  'history.tagGroup.hourly': 'Stündlich',
  'history.tagGroup.other': 'Andere',
  'never': 'nie',
  'ago': 'vor {t}',
};

export const MESSAGES: Record<Lang, Messages> = { en, nb, de };

export function translate(lang: Lang, key: MessageKey, vars: Record<string, string | number> = {}): string {
  const text = MESSAGES[lang][key] ?? MESSAGES.en[key];
  return text.replace(/\{(\w+)\}/g, (_, k: string) => String(vars[k] ?? `{${k}}`));
}

const pluralRules = new Map<Lang, Intl.PluralRules>();

/**
 * `key`, or its `_one` form where the count `n` takes the singular in `lang` (Intl.PluralRules'
 * "one": 1 in en, nb and de; 0 is plural in all three). A message with a count before a noun or
 * verb has a `_one` form in every language, the same text where the language does not change
 * ("1 steg venter"): without it, German said "1 Schritte warten".
 */
export function pluralKey(lang: Lang, key: MessageKey, n: number): MessageKey {
  const one = `${key}_one`;
  if (!Object.hasOwn(en, one)) return key;
  let rules = pluralRules.get(lang);
  if (rules === undefined) pluralRules.set(lang, (rules = new Intl.PluralRules(LOCALES[lang])));
  return rules.select(n) === 'one' ? (one as MessageKey) : key;
}

// One Intl formatter per language and form, made when first used: making one costs some 0.03 to
// 0.15 ms, and one per cell made a 500-row screen (re-rendered at each keystroke in its search
// box) build thousands of them per render.
const numberFormats = new Map<string, Intl.NumberFormat>();
function numberFormat(lang: Lang, form: string, options?: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${lang}|${form}`;
  let f = numberFormats.get(key);
  if (f === undefined) numberFormats.set(key, (f = new Intl.NumberFormat(LOCALES[lang], options)));
  return f;
}
const dateFormats = new Map<string, Intl.DateTimeFormat>();
let dateFormatsZone = '';
function dateFormat(lang: Lang, form: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  // A date formatter keeps the time zone it was made in: when the PC's changes (its offsets in
  // winter and in summer say so), they are made again.
  const zone = `${new Date(Date.UTC(2026, 0, 15)).getTimezoneOffset()}|${new Date(Date.UTC(2026, 6, 15)).getTimezoneOffset()}`;
  if (zone !== dateFormatsZone) {
    dateFormats.clear();
    dateFormatsZone = zone;
  }
  const key = `${lang}|${form}`;
  let f = dateFormats.get(key);
  if (f === undefined) dateFormats.set(key, (f = new Intl.DateTimeFormat(LOCALES[lang], options)));
  return f;
}

export function formatNumber(lang: Lang, n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : numberFormat(lang, 'plain').format(n);
}

/**
 * A point in time to the second with its whole date: "06/12/2026, 08:40:27", "06.12.2026, 08:40:27"
 * in Norwegian and German — not the locale's short date style, which in German gives the year in
 * two digits ("06.12.26"), in Norwegian and English four.
 */
const TIME_OPTIONS: Intl.DateTimeFormatOptions = { day: '2-digit', month: '2-digit', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' };

/** A time of day to the second in this PC's time zone, "08:40:27" (the header's "no word from the site since"). */
export function formatClock(lang: Lang, ms: number): string {
  return dateFormat(lang, 'clock', { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(new Date(ms));
}

export function formatTime(lang: Lang, ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '–' : dateFormat(lang, 'time', TIME_OPTIONS).format(new Date(ms));
}

/**
 * A TIMESTAMP column's text as the site API gives it (`2026-12-02T09:36:13.017`, no zone) in ms
 * since the epoch. The appliance stores TIMESTAMP as the UTC wall clock (core/lsm/cast.ts), so a
 * text without a zone is UTC; one with `Z` or an offset (TIMESTAMP_LTZ) is taken as written.
 * Null for null or text that is no such time.
 */
export function timestampMs(text: string | null | undefined): number | null {
  if (text === null || text === undefined) return null;
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(text.trim());
  if (!m) return null;
  const ms = Date.parse(`${m[1]}T${m[2]}${m[3] ?? 'Z'}`);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * A table cell as text: a TIMESTAMP column's value (`type` as Paimon spells it, from the site API)
 * in this PC's time zone to the second; a number in the language's number format (`cellNumber`);
 * ROW, MAP and ARRAY values as JSON; anything else as it came. `raw` is the stored text when the
 * shown text differs from it (for a hover title).
 */
export function formatCell(lang: Lang, type: string | undefined, v: unknown): { text: string; raw?: string } {
  if (v === null || v === undefined) return { text: '–' };
  if (typeof v === 'string' && type !== undefined && type.startsWith('TIMESTAMP')) {
    const ms = timestampMs(v);
    if (ms !== null) return { text: formatTime(lang, ms), raw: v };
  }
  // A DECIMAL, and a BIGINT past 2^53, come as text (core/lsm valueToJson); a STRING's digits are an id.
  if (typeof v === 'number' || (typeof v === 'string' && type !== undefined && /^(DECIMAL|BIGINT)\b/.test(type))) {
    const stored = String(v);
    const text = cellNumber(lang, stored);
    if (text !== undefined) return text === stored ? { text } : { text, raw: stored };
  }
  return { text: typeof v === 'object' ? JSON.stringify(v) : String(v) };
}

/** The most fraction digits Intl.NumberFormat takes in Node 20 (a RangeError past it). */
const MAX_FRACTION_DIGITS = 20;

/**
 * A number's stored text (`12345.5`, a DECIMAL's `12345.50`) in `lang`'s number format with every
 * digit it has, none added or rounded ("12.345,50"); undefined for text no format writes exactly:
 * an exponent (`1e+21`), NaN, more than MAX_FRACTION_DIGITS decimals — shown as stored.
 */
function cellNumber(lang: Lang, stored: string): string | undefined {
  const m = /^-?\d+(?:\.(\d+))?$/.exec(stored);
  const digits = m?.[1]?.length ?? 0;
  if (m === null || digits > MAX_FRACTION_DIGITS) return undefined;
  // Formatted from the text, not a double: a BIGINT past 2^53 keeps its last digits.
  return numberFormat(lang, `cell-${digits}`, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(stored as `${number}`);
}

/** An instant written in UTC with its zone (`2026-12-01T23:40:36.012Z`), as the agents' explanations give one. */
const UTC_INSTANT = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z\b/g;

/**
 * Free text (an agent's explanation, a trail entry) with every UTC instant in it shown in this
 * PC's time zone, in the work queue's short form (`formatWhen`: weekday, day, month, hours and
 * minutes, the year when it is not `nowMs`'s): the same instant read "06/12/2026, 05:52:37" in a
 * proposal and "Sun 6 Dec, 05:52" on the job's row. The stored text keeps the exact instant (HQ
 * reads it too, and the heading's hover shows it); only what the floor sees changes.
 */
export function localizeInstants(lang: Lang, text: string, nowMs: number = Date.now()): string {
  return text.replace(UTC_INSTANT, (iso) => {
    const ms = Date.parse(iso);
    return Number.isNaN(ms) ? iso : formatWhen(lang, ms, nowMs);
  });
}

/**
 * A proposal's texts for the floor (explanation, risk reason, why it was withdrawn or found stale):
 * in `lang` where the site sent a translation of the agent's message (ProposalView.translations),
 * else the stored English text; UTC instants in this PC's time zone either way.
 */
export function proposalTexts(
  lang: Lang,
  p: Pick<ProposalView, 'explanation' | 'riskReason' | 'withdrawnReason' | 'staleReason' | 'translations'>,
  nowMs: number = Date.now(),
): { explanation: string; riskReason: string; withdrawnReason?: string; staleReason?: string } {
  const t = lang === 'en' ? undefined : p.translations?.[lang];
  const say = (translated: string | undefined, stored: string | undefined) => (stored === undefined ? undefined : localizeInstants(lang, translated ?? stored, nowMs));
  const withdrawnReason = say(t?.withdrawnReason, p.withdrawnReason);
  const staleReason = say(t?.staleReason, p.staleReason);
  return {
    explanation: say(t?.explanation, p.explanation)!,
    riskReason: say(t?.riskReason, p.riskReason)!,
    ...(withdrawnReason !== undefined ? { withdrawnReason } : {}),
    ...(staleReason !== undefined ? { staleReason } : {}),
  };
}

/**
 * A point in time for the floor, in this PC's time zone: weekday, day, month, hours and minutes;
 * the year too when it is not the year of `nowMs` (this PC's time zone as well), or a job due last
 * December read as due this December.
 */
export function formatWhen(lang: Lang, ms: number | null | undefined, nowMs: number = Date.now()): string {
  if (ms === null || ms === undefined) return '–';
  const at = new Date(ms);
  return at.getFullYear() === new Date(nowMs).getFullYear()
    ? dateFormat(lang, 'when', { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' }).format(at)
    : dateFormat(lang, 'whenYear', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' }).format(at);
}

/**
 * The same point in time in full, to the second and with the year (`formatWhen`'s form shown, this
 * one on hover): two events of a proposal's trail in the same minute are told apart, and German's
 * short date ("06.12.26") does not stand beside the list's "So., 6. Dez.".
 */
export function formatWhenFull(lang: Lang, ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  return dateFormat(lang, 'whenFull', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date(ms));
}

const DURATION_UNITS: ReadonlyArray<readonly [Intl.RelativeTimeFormatUnit, number]> = [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1000]];

/**
 * A duration (an age, a budget, a limit) in the largest unit it reaches, with the next one when
 * that is not nought ("1 min 30 sec", "2 hr 5 min"); under 10 s to the tenth ("2.9 sec"). Cut
 * (never rounded) at the last unit shown. In whole units alone, an age of 90 s against a budget
 * of 60 s read "1 min" against "1 min", over budget.
 */
export function formatDuration(lang: Lang, ms: number): string {
  const unit = (u: Intl.RelativeTimeFormatUnit, n: number, digits = 0) =>
    numberFormat(lang, `duration-${u}-${digits}`, { style: 'unit', unit: u, unitDisplay: 'short', maximumFractionDigits: digits }).format(n);
  const v = Math.max(0, ms);
  if (v < 10_000) return unit('second', Math.floor(v / 100) / 10, 1);
  const i = DURATION_UNITS.findIndex(([, size]) => v >= size);
  const [name, size] = DURATION_UNITS[i]!;
  const whole = Math.floor(v / size);
  const next = DURATION_UNITS[i + 1];
  const rest = next === undefined ? 0 : Math.floor((v - whole * size) / next[1]);
  return rest > 0 ? `${unit(name, whole)} ${unit(next![0], rest)}` : unit(name, whole);
}

export function formatBytes(lang: Lang, n: number): string {
  // SI steps, as the labels say (CLDR's kilobyte is 1,000 bytes). Plain bytes in words: the
  // short form is "byte" whatever the count in English ("0 byte"), and "B" in Norwegian.
  if (Math.abs(n) < 1000) return numberFormat(lang, 'bytes', { style: 'unit', unit: 'byte', unitDisplay: 'long', maximumFractionDigits: 0 }).format(n);
  const units = ['kilobyte', 'megabyte', 'gigabyte', 'terabyte'] as const;
  let v = n / 1000;
  let i = 0;
  // 999.95 and up would round to "1,000 kB": shown as the next unit instead.
  while (Math.abs(v) >= 999.95 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return numberFormat(lang, `size-${units[i]}`, { style: 'unit', unit: units[i], unitDisplay: 'short', maximumFractionDigits: 1 }).format(v);
}

/** The actions of the agent's rules this UI names in words (waiting.action.*, action.*). */
export const KNOWN_ACTIONS: ReadonlySet<string> = new Set(['assign_job', 'release_job', 'escalate_job', 'flag_idle_resource', 'replenish']);

/** An action in words ("Assignment"); one of a newer agent than this UI knows, as the agent named it. */
export function actionName(lang: Lang, action: string): string {
  return KNOWN_ACTIONS.has(action) ? translate(lang, `action.${action}` as MessageKey) : action;
}

/**
 * A table's decision (its freshness budget's `decision`) in the chosen language while it is core's
 * default text for that table, word for word (`tables.decision.<table>` in English); a site's own
 * text, or a default a newer site words otherwise, is shown as written.
 */
export function tableDecision(lang: Lang, table: string, decision: string): string {
  const key = `tables.decision.${table}`;
  return Object.hasOwn(en, key) && en[key as MessageKey] === decision ? translate(lang, key as MessageKey) : decision;
}

/**
 * The headings of Tilstand's own tables' columns (core/ingest seed-tables.ts and dead-letters.ts,
 * core/inbox inbox-tables.ts), by table: Stock's and Work queue's words where those screens show
 * the column, so a thing is called the same everywhere.
 */
const COLUMN_HEADINGS: Readonly<Record<string, Readonly<Record<string, MessageKey>>>> = {
  work_queue: {
    job_id: 'work.job', status: 'work.status', blocked_reason: 'work.blocked', capability: 'work.capability', material_item: 'column.materialItem',
    material_qty: 'column.materialQty', priority: 'work.priority', due_at: 'work.due', assigned_resource: 'work.assigned', ops_seq: 'column.opsSeq',
  },
  resources: { resource_id: 'work.resource', kind: 'column.kind', capability: 'work.capability', state: 'work.state', since: 'work.since', ops_seq: 'column.opsSeq' },
  stock: {
    item: 'stock.item', location: 'stock.location', on_hand: 'stock.onHand', inventory_seq: 'column.inventorySeq', reserved: 'stock.reserved',
    commerce_seq: 'column.commerceSeq', inbound: 'stock.inbound', procurement_seq: 'column.procurementSeq',
  },
  dead_letters: {
    position: 'column.position', status: 'work.status', reason: 'dead.reason', detail: 'column.detail', path: 'column.path', bindings: 'column.bindings',
    topic: 'dead.topic', module: 'column.module', stream: 'column.stream', seq: 'column.seq', payload: 'dead.payload', received_at: 'dead.received',
    replayed_at: 'dead.wasReplayed', dismissed_at: 'column.dismissedAt', dismissed_by: 'column.dismissedBy', dismissed_note: 'column.dismissedNote',
  },
  approval_inbox: {
    proposal_id: 'column.proposalId', situation_key: 'column.situation', rule_id: 'column.rule', rule_version: 'column.ruleVersion', action: 'inbox.action',
    module: 'column.module', params: 'column.params', risk: 'inbox.risk', risk_reason: 'column.riskReason', explanation: 'detail.explanation',
    evidence: 'detail.evidence', run_id: 'column.run', created_at_ms: 'column.created', agent_status: 'column.agentStatus', withdrawn_reason: 'column.withdrawnReason',
    agent_updated_at_ms: 'column.agentUpdated', log_first_entry: 'column.logFirstEntry', agent_messages: 'column.agentMessages', agent_seq: 'column.agentSeq',
    decision: 'column.decision', decided_by: 'column.decidedBy', decided_role: 'column.decidedRole', decided_at_ms: 'column.decidedAt', decision_comment: 'field.comment',
    decision_snapshots: 'column.decisionSnapshots', decision_reason: 'column.decisionReason', decision_seq: 'column.decisionSeq', command_state: 'column.commandState',
    command_topic: 'column.commandTopic', command_sent_at_ms: 'column.commandSent', command_updated_at_ms: 'column.commandUpdated', command_detail: 'column.commandDetail',
    command_seq: 'column.commandSeq',
  },
};

/**
 * A column's heading in the chosen language (`text`), with its stored name for the heading's
 * title (`stored`), so someone who knows the table still finds it; a column this UI has no words
 * for (a site's own table, a column a newer site added) is headed by its stored name, no title.
 */
export function columnHeading(lang: Lang, table: string, column: string): { text: string; stored?: string } {
  const key = Object.hasOwn(COLUMN_HEADINGS, table) && Object.hasOwn(COLUMN_HEADINGS[table]!, column) ? COLUMN_HEADINGS[table]![column]! : undefined;
  return key ? { text: translate(lang, key), stored: column } : { text: column };
}

/**
 * The known values of columns of Tilstand's own tables (the contracts' symbols, core/ingest
 * seed-contracts.ts; dead-letters.ts and envelope.ts `DEAD_LETTER_REASONS`; core/inbox proposal.ts
 * and inbox-tables.ts), by table and column, with the words of the screen that shows them: Work
 * queue's statuses and states, the inbox's statuses, risks, actions and command progress, Dead
 * letters' reasons, Users' roles. Free text (a blocked reason, an explanation) has none.
 */
export const VALUE_WORDS: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, MessageKey>>>>>> = {
  work_queue: {
    status: { released: 'work.status.released', blocked: 'work.status.blocked', in_progress: 'work.status.in_progress', done: 'work.status.done' },
  },
  resources: {
    kind: { machine: 'value.kind.machine', team: 'value.kind.team' },
    state: { free: 'work.state.free', busy: 'work.state.busy', down: 'work.state.down' },
  },
  dead_letters: {
    status: { open: 'status.open', replayed: 'value.letter.replayed', dismissed: 'value.letter.dismissed' },
    reason: {
      too_large: 'dead.why.too_large', bad_json: 'dead.why.bad_json', unsafe_json: 'dead.why.unsafe_json', bad_envelope: 'dead.why.bad_envelope',
      topic_mismatch: 'dead.why.topic_mismatch', no_contract: 'dead.why.no_contract', contract_violation: 'dead.why.contract_violation',
      no_binding: 'dead.why.no_binding', binding_error: 'dead.why.binding_error', unfit_for_table: 'dead.why.unfit_for_table',
      late_after_gap: 'dead.why.late_after_gap',
      seq_far_ahead: 'dead.why.seq_far_ahead',
    },
  },
  approval_inbox: {
    action: { assign_job: 'action.assign_job', release_job: 'action.release_job', escalate_job: 'action.escalate_job', flag_idle_resource: 'action.flag_idle_resource', replenish: 'action.replenish' },
    risk: { low: 'risk.low', medium: 'risk.medium', high: 'risk.high' },
    agent_status: { open: 'status.open', withdrawn: 'status.withdrawn' },
    decision: { approved: 'status.approved', rejected: 'status.rejected', deferred: 'status.deferred', stale: 'status.stale' },
    decided_role: { viewer: 'role.viewer', operator: 'role.operator', shift_lead: 'role.shift_lead', admin: 'role.admin' },
    command_state: {
      pending: 'progress.pending', sent: 'progress.sent', acknowledged: 'progress.acknowledged', applied: 'progress.applied', failed: 'progress.failed', timed_out: 'progress.timed_out',
    },
  },
};

/**
 * A cell of `table`'s `column` as shown: a known value of a known column of Tilstand's own tables
 * in the chosen language (`VALUE_WORDS`; English too, "in progress" for in_progress), anything else
 * as `formatCell` shows it — a site's own table, a value a newer contract added, free text. `raw`
 * is the stored text when the shown text differs from it, for the cell's title: "Rows containing"
 * finds a row by what is stored.
 */
export function cellText(lang: Lang, table: string | undefined, column: string | undefined, type: string | undefined, v: unknown): { text: string; raw?: string } {
  const text = typeof v === 'string' && table !== undefined && column !== undefined ? valueWord(lang, table, column, v) : undefined;
  if (text !== undefined) return text === v ? { text } : { text, raw: v as string };
  return formatCell(lang, type, v);
}

/**
 * A known value of a column of Tilstand's own tables in the chosen language (`VALUE_WORDS`), or
 * undefined for any other (a value a newer contract added, a site's own table): the Work queue's
 * statuses and states, Dead letters' reasons, History's and the evidence's cells (`cellText`).
 */
export function valueWord(lang: Lang, table: string, column: string, v: string): string | undefined {
  // Own properties only: a stored "constructor" is no known value.
  const columns = Object.hasOwn(VALUE_WORDS, table) ? VALUE_WORDS[table]! : undefined;
  const words = columns && Object.hasOwn(columns, column) ? columns[column]! : undefined;
  return words && Object.hasOwn(words, v) ? translate(lang, words[v]!) : undefined;
}

/**
 * The known values of `table`'s `column` whose words in `lang` contain `search` (trimmed,
 * case-insensitive) while the stored value does not: what a search the site matches against the
 * stored value ("in_progress") would miss when typed as the screen shows it ("pågår", "in Arbeit").
 */
export function valuesWorded(lang: Lang, table: string, column: string, search: string): string[] {
  const q = search.trim().toLowerCase();
  const words = VALUE_WORDS[table]?.[column];
  if (q === '' || words === undefined) return [];
  return Object.keys(words).filter((v) => !v.toLowerCase().includes(q) && valueWord(lang, table, column, v)!.toLowerCase().includes(q));
}

/**
 * Per column of `table` that has known values, those whose words in `lang` contain `search` while
 * the stored value does not (`valuesWorded`); columns with none left out. History's "Rows
 * containing" sends them with the search (site API `history`, `diff` `worded`).
 */
export function columnsWorded(lang: Lang, table: string, search: string): { column: string; values: string[] }[] {
  const columns = Object.hasOwn(VALUE_WORDS, table) ? Object.keys(VALUE_WORDS[table]!) : [];
  return columns.map((column) => ({ column, values: valuesWorded(lang, table, column, search) })).filter((w) => w.values.length > 0);
}

/** The alarm kinds worded here; the others show the site's English message. */
const ALARM_KEYS: Partial<Record<Alarm['kind'], (p: Record<string, string | number>) => MessageKey>> = {
  budget_breach: () => 'alarm.budget_breach',
  ingest_stopped: (p) => (typeof p.resumeAtMs === 'number' ? 'alarm.ingest_stopped.resumeAt' : p.resumeRunning === 1 ? 'alarm.ingest_stopped.resuming' : p.resumeStopped === 'damaged' ? 'alarm.ingest_stopped.damaged' : 'alarm.ingest_stopped'),
  dead_letters: () => 'alarm.dead_letters',
  command_failed: (p) => (p.state === 'timed_out' ? 'alarm.command_timed_out' : 'alarm.command_failed'),
  stream_silent: () => 'alarm.stream_silent',
  sync_stalled: (p) => syncStallKey(p.reason),
};

/** sync_stalled's text by the site's params.reason; one this UI does not know (or none) is said neutrally. */
function syncStallKey(reason: string | number | undefined): MessageKey {
  switch (reason) {
    case 'waiting':
      return 'alarm.sync_stalled';
    case 'refused':
    case 'gone':
    case 'credentials':
    case 'step':
    case 'planning':
      return `alarm.sync_stalled.${reason}`;
    default:
      return 'alarm.sync_stalled.other';
  }
}

/** The Sync screen's sentence for why sync is not healthy (the view's first problem, core/site syncView); undefined for one it words no better than the last error. */
export function syncReasonKey(reason: string | number | undefined): MessageKey | undefined {
  return reason === 'refused' || reason === 'gone' || reason === 'credentials' || reason === 'step' || reason === 'waiting' || reason === 'planning' ? `sync.reason.${reason}` : undefined;
}

/**
 * The Sync screen's sentence for a tag dropped rather than sent (core/site syncView `dropped`,
 * api.ts SyncDropKind): `deleted` worded; a kind of a newer site by the generic sentence, which
 * carries the site's own English reason.
 */
export function syncDroppedKey(kind: string): MessageKey {
  return kind === 'deleted' ? 'sync.dropped.deleted' : 'sync.dropped.other';
}

/**
 * The Sync screen's sentence for a table restored from an older tag (the site status's
 * `restoredFromTag`): the inbox's two tables, which the site writes itself and nothing resends,
 * have their own; any other table the modules feed.
 */
export function syncRestoredKey(table: string): MessageKey {
  return table === 'approval_inbox' ? 'sync.restored.approval_inbox' : table === 'decision_log' ? 'sync.restored.decision_log' : 'sync.restored.table';
}

/**
 * ingest_stopped with what the site does about it as values (resumeAtMs, resumeRunning, resumeStopped): worded in
 * English too, since the site's message gives the next try as a UTC instant (and a command line's
 * words); without them (an older site), its message as it is.
 */
function resumeWorded(a: Alarm): boolean {
  return a.kind === 'ingest_stopped' && a.params !== undefined && (typeof a.params.resumeAtMs === 'number' || a.params.resumeRunning === 1 || a.params.resumeStopped === 'damaged');
}

/** Kinds worded in English too: the site's message names the action by its identifier. */
const WORDED_IN_EN: ReadonlySet<Alarm['kind']> = new Set(['command_failed']);

/**
 * An alarm in the reader's language: the site's message in English (it says more), a worded one
 * in nb and de where the site gave its values; else the English message. A failed command names
 * its action in words in every language ("Assignment for P-1 failed", not "assign_job …").
 */
export function alarmText(lang: Lang, a: Alarm): string {
  const key = ALARM_KEYS[a.kind];
  if ((lang === 'en' && !WORDED_IN_EN.has(a.kind) && !resumeWorded(a)) || !key || !a.params) return a.message;
  const vars: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(a.params)) {
    // `…AtMs` is an instant (ms since the epoch), said as the time of day on this PC's clock.
    if (k.endsWith('AtMs') && typeof v === 'number') vars[k.slice(0, -4) + 'At'] = formatClock(lang, v);
    else if (k.endsWith('Ms') && typeof v === 'number') vars[k.slice(0, -2)] = formatDuration(lang, v);
    else if (typeof v === 'number') vars[k] = formatNumber(lang, v);
    else vars[k] = v;
  }
  if (typeof a.params.detail === 'string') vars.detail = a.params.detail === '' ? '' : `: ${a.params.detail}`;
  if (a.kind === 'command_failed' && typeof a.params.action === 'string') vars.action = actionName(lang, a.params.action);
  const text = translate(lang, key(a.params), vars);
  if (a.kind === 'budget_breach') return text + breachReasons(lang, a.params, vars);
  // The steps waiting, counted in the count's number ("1 Schritt wartet"); none said without a count.
  if (a.kind === 'sync_stalled' && typeof a.params.pending === 'number') return `${text}; ${translate(lang, pluralKey(lang, 'alarm.sync_stalled.pending', a.params.pending), vars)}`;
  return text;
}

/**
 * Why a table over its budget stays late (core/site budget_breach `held`, `streams`, `stopped`),
 * as the site's English message says it: without it, nb and de told a shift lead only the age.
 */
function breachReasons(lang: Lang, p: Record<string, string | number>, vars: Record<string, string | number>): string {
  let out = '';
  if (typeof p.held === 'number' && p.held > 0) {
    out += `; ${translate(lang, pluralKey(lang, 'alarm.budget_breach.held', p.held), vars)}`;
    if (typeof p.streams === 'string' && p.streams !== '') out += ` (${p.streams})`;
  }
  if (p.stopped === 1) out += `; ${translate(lang, 'alarm.budget_breach.stopped')}`;
  return out;
}

/** A refusal as the site sent it (core/site/api.ts ApiErrorBody): its English message and, for the common ones, a code. */
export interface RefusalLike {
  message: string;
  /** The site's error kind (core/site/api.ts ApiErrorKind); absent: no answer of the site (the network). */
  kind?: string;
  code?: string;
  params?: Record<string, string | number>;
}

const ROLE_NAMES: ReadonlySet<string> = new Set(['viewer', 'operator', 'shift_lead', 'admin']);
/** core/site api.ts RefusalCode `session.ended`'s `why`s. */
const SESSION_ENDED_WHY: ReadonlySet<string> = new Set(['disabled', 'locked', 'removed', 'secretReset', 'idle']);
const STATUS_NAMES: ReadonlySet<string> = new Set(['open', 'deferred', 'approved', 'rejected', 'stale', 'withdrawn']);

/** A role's name in `lang` (a role the UI does not know: as sent). */
export function roleName(lang: Lang, role: string): string {
  if (!ROLE_NAMES.has(role)) return role;
  const name = translate(lang, `role.${role}` as MessageKey);
  // Inside a sentence: Norwegian writes a role in lower case, German keeps its nouns capitalised.
  return lang === 'nb' ? name.toLocaleLowerCase(LOCALES.nb) : name;
}

/** A user's roles in `lang`, comma-separated (the header's and the inbox's "signed in as … (role)"). */
export const rolesText = (lang: Lang, roles: readonly string[]): string => roles.map((r) => roleName(lang, r)).join(', ');

/** "Signed in as <name> (<roles>)": whoever is at the shared PC sees what they may do (without roles: the name alone). */
export function signedInText(lang: Lang, user: { name: string; roles: readonly string[] }): string {
  return user.roles.length > 0 ? translate(lang, 'signedInAsRole', { name: user.name, role: rolesText(lang, user.roles) }) : translate(lang, 'signedInAs', { name: user.name });
}

function paramStr(p: Record<string, string | number>, k: string): string | undefined {
  return typeof p[k] === 'string' ? (p[k] as string) : undefined;
}
function paramNum(p: Record<string, string | number>, k: string): number | undefined {
  return typeof p[k] === 'number' && Number.isFinite(p[k]) ? (p[k] as number) : undefined;
}
/**
 * The words for a request's field an `input.*` refusal names (core/site api-validate.ts: a path,
 * `policy.reorderPoint`, `at.snapshotId`, `ids[2]`), by its last name: a field a floor form has is
 * called as the form calls it; another (only a hand-made request has it) is named as sent.
 */
const FIELD_NAMES: Readonly<Record<string, MessageKey>> = {
  user: 'field.name',
  name: 'field.name',
  adminName: 'field.name',
  secret: 'field.secret',
  adminPin: 'field.pin',
  badge: 'field.badge',
  comment: 'field.comment',
  note: 'field.note',
  search: 'field.search',
  contains: 'field.search',
  reorderPoint: 'field.reorderPoint',
  orderUpTo: 'field.orderUpTo',
  snapshotId: 'field.snapshot',
  timestampMs: 'field.time',
  tag: 'field.tag',
  item: 'field.item',
  location: 'field.location',
  siteId: 'field.siteId',
};
function fieldName(lang: Lang, path: string): string {
  const last = (path.split('.').pop() ?? '').replace(/\[\d+\]$/, '');
  return Object.hasOwn(FIELD_NAMES, last) ? translate(lang, FIELD_NAMES[last]!) : path;
}

/** A sign-in refusal with the attempts left before the lockout, when the site said. */
function withLeft(lang: Lang, text: string, p: Record<string, string | number>): string {
  const n = paramNum(p, 'left');
  return n === undefined ? text : `${text} (${translate(lang, pluralKey(lang, 'refusal.signin.left', n), { left: formatNumber(lang, n) })})`;
}

/**
 * A refusal of the site in the reader's language, English too: a code this UI knows is worded from
 * the catalog (the site's message is written for logs and the CLI: "request.user: not a user name:
 * must not contain a slash" is no line for the floor); else — a code from a newer site, a param
 * missing, no code at all — the site's English message.
 */
/** The command states write-back names as a timed-out command's last one (core/inbox CommandState), with words in every catalog. */
const COMMAND_STATES = new Set(['pending', 'sent', 'acknowledged', 'applied', 'failed', 'timed_out']);

/**
 * Write-back's own detail of a command (core/site api.ts WRITE_BACK_CODES: not applied in time, not
 * sent in time) in `lang`, from its code and numbers; the site's English (`value`, the record) for a
 * code this UI does not know or params it cannot word.
 */
export function writeBackText(lang: Lang, d: { value: string; code?: string; params?: Record<string, string | number> }): string {
  const p = d.params ?? {};
  switch (d.code) {
    case 'command.notApplied': {
      const seconds = paramNum(p, 'seconds');
      const state = paramStr(p, 'lastState');
      if (seconds === undefined || state === undefined || !COMMAND_STATES.has(state)) break;
      return translate(lang, 'trail.writeBack.notApplied', { seconds: formatNumber(lang, seconds), state: translate(lang, `progress.${state}` as MessageKey) });
    }
    case 'command.notSent': {
      const window = paramNum(p, 'windowSeconds');
      const ago = paramNum(p, 'agoSeconds');
      if (window === undefined || ago === undefined) break;
      return translate(lang, 'trail.writeBack.notSent', { window: formatNumber(lang, window), ago: formatNumber(lang, ago) });
    }
  }
  return d.value;
}

export function refusalText(lang: Lang, r: RefusalLike): string {
  if (typeof r.code !== 'string') return r.message;
  const p = r.params ?? {};
  switch (r.code) {
    case 'signin.wrong':
      return withLeft(lang, translate(lang, 'refusal.signin.wrong'), p);
    case 'signin.badgeUnknown':
      return withLeft(lang, translate(lang, 'refusal.signin.badgeUnknown'), p);
    case 'signin.locked':
    case 'signin.badgeLocked': {
      const until = paramNum(p, 'untilMs');
      if (until === undefined) break;
      return translate(lang, r.code === 'signin.locked' ? 'refusal.signin.locked' : 'refusal.signin.badgeLocked', { until: formatTime(lang, until) });
    }
    case 'signin.disabled':
      return translate(lang, 'refusal.signin.disabled');
    case 'pin.guessable': {
      const pin = paramStr(p, 'pin');
      const why = paramStr(p, 'why');
      if (pin === undefined || (why !== 'repeated' && why !== 'sequence')) break;
      return translate(lang, why === 'repeated' ? 'refusal.pin.guessable.repeated' : 'refusal.pin.guessable.sequence', { pin });
    }
    case 'role.refused': {
      const user = paramStr(p, 'user');
      const role = paramStr(p, 'role');
      const allowed = paramStr(p, 'allowed');
      if (user === undefined || role === undefined || !allowed) break;
      const names = allowed.split(',').map((x) => roleName(lang, x));
      const list = names.length > 1 ? `${names.slice(0, -1).join(', ')}${translate(lang, 'refusal.or')}${names[names.length - 1]}` : names[0]!;
      return translate(lang, 'refusal.role.refused', { user, role: role.split(',').map((x) => roleName(lang, x)).join(', '), allowed: list });
    }
    case 'proposal.notFound': {
      const id = paramStr(p, 'id');
      if (id === undefined) break;
      return translate(lang, 'refusal.proposal.notFound', { id });
    }
    case 'proposal.notOpen': {
      const id = paramStr(p, 'id');
      const status = paramStr(p, 'status');
      if (id === undefined || status === undefined || !STATUS_NAMES.has(status)) break;
      return translate(lang, 'refusal.proposal.notOpen', { id, status: translate(lang, `status.${status}` as MessageKey) });
    }
    case 'proposal.decidedMeanwhile': {
      const id = paramStr(p, 'id');
      const status = paramStr(p, 'status');
      const by = paramStr(p, 'by');
      if (id === undefined || status === undefined || by === undefined || !STATUS_NAMES.has(status)) break;
      return translate(lang, 'refusal.proposal.decidedMeanwhile', { id, status: translate(lang, `status.${status}` as MessageKey), by });
    }
    case 'user.exists': {
      const name = paramStr(p, 'name');
      if (!name) break;
      return translate(lang, 'refusal.user.exists', { name });
    }
    case 'user.selfDisable':
      return translate(lang, 'refusal.user.selfDisable');
    case 'user.selfDemote':
      return translate(lang, 'refusal.user.selfDemote');
    case 'signin.busy':
    case 'session.required':
    case 'site.notSetUp':
    case 'site.alreadySetUp':
    case 'site.stopping':
    case 'site.stopped':
    case 'init.exists':
    case 'init.restoreNote':
    case 'init.restoreUnfinished':
    case 'init.configLost':
      return translate(lang, `refusal.${r.code}`);
    case 'init.restoredOther': {
      const site = paramStr(p, 'site');
      if (!site) break;
      return translate(lang, 'refusal.init.restoredOther', { site });
    }
    case 'init.otherSite': {
      const sites = paramStr(p, 'sites');
      if (!sites) break;
      return translate(lang, 'refusal.init.otherSite', { sites: sites.split(',').join(', ') });
    }
    case 'init.adminExists': {
      const admin = paramStr(p, 'admin');
      if (!admin) break;
      return translate(lang, 'refusal.init.adminExists', { admin });
    }
    case 'session.ended': {
      const user = paramStr(p, 'user');
      const why = paramStr(p, 'why');
      if (!user || why === undefined || !SESSION_ENDED_WHY.has(why)) break;
      if (why !== 'idle') return translate(lang, `refusal.session.ended.${why}` as MessageKey, { user });
      const idleMs = paramNum(p, 'idleMs');
      if (idleMs === undefined) break;
      return translate(lang, 'refusal.session.ended.idle', { user, after: formatDuration(lang, idleMs) });
    }
    case 'user.nameInvalid':
    case 'user.notFound':
    case 'user.noSecret': {
      const name = paramStr(p, 'name');
      if (name === undefined) break;
      return translate(lang, `refusal.${r.code}`, { name });
    }
    case 'user.roleInvalid': {
      const role = paramStr(p, 'role');
      if (role === undefined) break;
      return translate(lang, 'refusal.user.roleInvalid', { role });
    }
    case 'user.pinInvalid':
    case 'user.passwordLength':
    case 'user.badgeLength': {
      const min = paramNum(p, 'min');
      const max = paramNum(p, 'max');
      if (min === undefined || max === undefined) break;
      return translate(lang, `refusal.${r.code}`, { min: formatNumber(lang, min), max: formatNumber(lang, max) });
    }
    case 'user.badgeTaken':
      return translate(lang, 'refusal.user.badgeTaken');
    case 'reorder.levels': {
      const item = paramStr(p, 'item');
      const point = paramNum(p, 'reorderPoint');
      const upTo = paramNum(p, 'orderUpTo');
      const location = paramStr(p, 'location');
      if (!item || point === undefined || upTo === undefined) break;
      const levels = { item, point: formatNumber(lang, point), upTo: formatNumber(lang, upTo) };
      return location === undefined ? translate(lang, 'refusal.reorder.levels', levels) : translate(lang, 'refusal.reorder.levels.location', { ...levels, location });
    }
    case 'config.refused': {
      const key = paramStr(p, 'key');
      if (!key) break;
      return translate(lang, 'refusal.config.refused', { key });
    }
    case 'config.file':
      return translate(lang, 'refusal.config.file');
    case 'input.name':
    case 'input.tooLong': {
      const field = paramStr(p, 'field');
      const max = paramNum(p, 'max');
      if (field === undefined || max === undefined) break;
      return translate(lang, `refusal.${r.code}`, { field: fieldName(lang, field), max: formatNumber(lang, max) });
    }
    case 'input.range': {
      const field = paramStr(p, 'field');
      const min = paramNum(p, 'min');
      const max = paramNum(p, 'max');
      if (field === undefined || min === undefined || max === undefined) break;
      return translate(lang, 'refusal.input.range', { field: fieldName(lang, field), min: formatNumber(lang, min), max: formatNumber(lang, max) });
    }
    case 'input.characters': {
      const field = paramStr(p, 'field');
      const char = paramStr(p, 'char');
      if (!field || !char) break;
      return translate(lang, 'refusal.input.characters', { field: fieldName(lang, field), char });
    }
    case 'input.refused': {
      const field = paramStr(p, 'field');
      if (field === undefined) break;
      return field === '' ? translate(lang, 'refusal.input.refused.request') : translate(lang, 'refusal.input.refused', { field: fieldName(lang, field) });
    }
    case 'request.tooLarge': {
      const max = paramNum(p, 'max');
      if (max === undefined) break;
      return translate(lang, 'refusal.request.tooLarge', { max: formatBytes(lang, max) });
    }
    case 'request.refused':
      return translate(lang, 'refusal.request.refused');
  }
  return r.message;
}

/**
 * The message of a call the site never answered (the transport's fetch rejected: the site
 * restarting or stopped, the network down; api/client.ts): worded here in the reader's language,
 * `error.noAnswer` — the browser's own words ("Failed to fetch") are English and say nothing to act on.
 */
export const NO_ANSWER_MESSAGE = 'the site did not answer';

/** The site's text for an internal error (core/site internal-error.ts internalErrorMessage): its id. */
const INTERNAL_ERROR_ID = /^internal error \(id ([0-9a-f]{8})\)/;

/**
 * An error line as shown. A refusal — the site answered with a kind other than `internal`: the
 * person asked for something not allowed or not possible — reads as itself (`text`, already in the
 * reader's language where refusalText could word it), not as a failure. An internal error says
 * that something went wrong and keeps its id (the line of logs/site.log IT looks for); anything
 * else (no kind: the network failed, or the reply was no API answer) is framed the same way.
 */
export function errorLine(lang: Lang, text: string, kind: string | undefined): string {
  if (kind !== undefined && kind !== 'internal') return text;
  if (text === NO_ANSWER_MESSAGE) return translate(lang, 'error.generic', { message: translate(lang, 'error.noAnswer') });
  const id = kind === 'internal' ? INTERNAL_ERROR_ID.exec(text)?.[1] : undefined;
  return id !== undefined ? translate(lang, 'error.internal', { id }) : translate(lang, 'error.generic', { message: text });
}
