// Dismissing dead letters as a named user, with a note, logged; and replaying them, logged with who
// asked (`replayLogged`, for the floor UI and the control op alike). From the command line the person
// names themself and gives their PIN, as `tilstand decide` does, and must be a shift lead or an
// admin (the roles that decide: a dismissed event never reaches the tables): `dismissWithPin`, for
// the running site's control op and for the CLI on a directory no site runs on. The floor UI
// dismisses as its signed-in user, whose role service.ts checked: `dismissAs`.
//
// Concurrency: as the Ingestor's (one thread); the PIN check counts wrong PINs in site.db.

import { bidiControlIn, bidiControlProblem } from './api-validate.ts';
import { DEAD_LETTER_SLICE, type Ingestor, type ReplayProgress, type ReplayResult } from '../ingest/ingestor.ts';
import { DECIDER_ROLES } from '../inbox/inbox.ts';
import type { UserStore } from '../inbox/users.ts';
import { DISMISS_NOTE_MAX } from './api.ts';

export class DismissRefused extends Error {
  readonly kind = 'Refused';
}

export interface DismissRequest {
  ids: bigint[];
  user: string;
  pin: string;
  note: string;
  /** Also every other open letter from the topic of one of `ids` with its reason (`withOpenAlike`). */
  alike?: boolean;
}

/** Where a dismissal is logged: the site's log, and how the person asked (`floor UI`, …). */
export interface DismissLog {
  log: (line: string) => void;
  via: string;
}

/** `alike`: how many of those dismissed were not named but alike (`DismissRequest.alike`). */
export type DismissResult = { dismissed: number; notOpen: string[]; by: string; alike: number };

/** Checks the note, the user's PIN and role, then dismisses as that user. */
/** `signedIn`: called once the PIN is checked and the role allowed, before the letters are dismissed. */
export async function dismissWithPin(users: UserStore, ingestor: Ingestor, r: DismissRequest, log?: DismissLog, signedIn?: () => void): Promise<DismissResult> {
  // The request first: a malformed one does not count against the user's PIN.
  const note = checkRequest(r.ids, r.note);
  const signIn = await users.verifyPin(r.user, r.pin);
  if (!signIn.ok) {
    const why = signIn.reason === 'locked' ? `locked until ${new Date(signIn.lockedUntilMs).toISOString()}` : signIn.reason === 'wrong' ? `wrong PIN${signIn.failuresLeft !== undefined ? ` (${signIn.failuresLeft} attempt${signIn.failuresLeft === 1 ? '' : 's'} left)` : ''}` : signIn.reason.replace('_', ' ');
    throw new DismissRefused(`dismiss refused for user '${r.user.slice(0, 64)}': ${why}`);
  }
  const user = signIn.user;
  if (!DECIDER_ROLES.includes(user.role)) throw new DismissRefused(`dismiss refused: user '${user.name}' is ${user.role}; only ${DECIDER_ROLES.join(' and ')} dismiss dead letters`);
  signedIn?.();
  return dismiss(ingestor, r.ids, user.name, note, log, r.alike === true);
}

/** Dismisses as `by`, a user the caller has authenticated and whose role it checked. */
export function dismissAs(ingestor: Ingestor, ids: readonly bigint[], by: string, note: unknown, log?: DismissLog, alike = false, slice = DEAD_LETTER_SLICE): Promise<DismissResult> {
  return dismiss(ingestor, ids, by, checkRequest(ids, note), log, alike, slice);
}

/**
 * In slices of `slice` (DEAD_LETTER_SLICE) with a turn of the event loop between them
 * (`Ingestor.deadLetterSlices`, as a replay goes). `notOpen`: named positions that are no open
 * letter (an alike one closed meanwhile was not asked for by name).
 */
async function dismiss(ingestor: Ingestor, ids: readonly bigint[], by: string, note: string, log: DismissLog | undefined, alike: boolean, slice = DEAD_LETTER_SLICE): Promise<DismissResult> {
  let dismissed = 0;
  let alikeCount = 0;
  const notOpen: string[] = [];
  try {
    for await (const { part, named } of ingestor.deadLetterSlices(ids, { alike, slice })) {
      const r = ingestor.dismissDeadLetters(part, by, note);
      dismissed += r.dismissed;
      notOpen.push(...r.notOpen.filter((p) => named.has(p)));
      alikeCount += part.length - named.size;
    }
  } finally {
    // What was dismissed, also when a later slice failed (the site stopping). Quoted: the note is
    // the person's text and must not start a line of the log.
    log?.log(`dead letters: ${dismissed} dismissed by ${by} (${log.via}${alike ? ', with the open ones alike' : ''}): ${JSON.stringify(note)}`);
  }
  return { dismissed, notOpen, by, alike: alikeCount };
}

/**
 * Replays open dead letters (`Ingestor.replayDeadLetters`: `ids`, with `alike` the open ones like
 * them, or all) and logs what came of it: replaying writes the state tables, so the site's log says
 * who asked — `by` the signed-in user, or only how (`log.via`, the command line's).
 */
export async function replayLogged(
  ingestor: Ingestor,
  ids: readonly bigint[] | undefined,
  alike: boolean,
  log: DismissLog & { by?: string },
  onProgress?: (p: ReplayProgress) => void,
): Promise<ReplayResult> {
  if (alike && ids === undefined) throw Object.assign(new Error('alike: name the letters the others are to be like (ids)'), { kind: 'InvalidArgument' });
  const r = await ingestor.replayDeadLetters(ids, { alike, ...(onProgress ? { onProgress } : {}) });
  const how = `${log.via}${alike ? ', with the open ones alike' : ids === undefined ? ', every open one' : ''}`;
  log.log(`dead letters: ${r.replayed} replayed, ${r.failed} still failing${log.by === undefined ? '' : `, by ${log.by}`} (${how})`);
  return r;
}

/** The note, trimmed; an error naming `note` (missing, too long) or `ids` (none). */
function checkRequest(ids: readonly bigint[], note: unknown): string {
  const invalid = (message: string) => Object.assign(new Error(message), { kind: 'InvalidArgument' });
  if (typeof note !== 'string' || note.trim() === '') throw invalid('note: say why these dead letters are dismissed (what was looked at, what the module owner said)');
  const text = note.trim();
  if (text.length > DISMISS_NOTE_MAX) throw invalid(`note: expected at most ${DISMISS_NOTE_MAX} characters, got ${text.length}`);
  // As the API's validation refuses it (a control-socket client, `deadletters.dismiss`, meets this).
  const bidi = bidiControlIn(text);
  if (bidi !== undefined) throw invalid(`note: ${bidiControlProblem(bidi)}`);
  if (ids.length === 0) throw invalid('ids: name the dead letters to dismiss (their journal positions)');
  return text;
}
