// Dismissing dead letters from the command line: the person names themself and gives their PIN,
// as `tilstand decide` does, and must be a shift lead or an admin (the roles that decide: a
// dismissed event never reaches the tables). The floor UI dismisses as its signed-in user instead
// (service.ts `dismissDeadLetters`). Used by the running site's control op and by the CLI on a
// directory no site runs on.
//
// Concurrency: as the Ingestor's (one thread); the PIN check counts wrong PINs in site.db.

import type { Ingestor } from '../ingest/ingestor.ts';
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
}

/** Checks the note, the user's PIN and role, then dismisses as that user. */
export async function dismissWithPin(users: UserStore, ingestor: Ingestor, r: DismissRequest): Promise<{ dismissed: number; notOpen: string[]; by: string }> {
  const note = checkDismissNote(r.note);
  if (r.ids.length === 0) throw Object.assign(new Error('ids: name the dead letters to dismiss (--id <position>, one or more)'), { kind: 'InvalidArgument' });
  const signIn = await users.verifyPin(r.user, r.pin);
  if (!signIn.ok) {
    const why = signIn.reason === 'locked' ? `locked until ${new Date(signIn.lockedUntilMs).toISOString()}` : signIn.reason === 'wrong' ? `wrong PIN${signIn.failuresLeft !== undefined ? ` (${signIn.failuresLeft} attempts left)` : ''}` : signIn.reason.replace('_', ' ');
    throw new DismissRefused(`dismiss refused for user '${r.user.slice(0, 64)}': ${why}`);
  }
  const user = signIn.user;
  if (!DECIDER_ROLES.includes(user.role)) throw new DismissRefused(`dismiss refused: user '${user.name}' is ${user.role}; only ${DECIDER_ROLES.join(' and ')} dismiss dead letters`);
  return { ...ingestor.dismissDeadLetters(r.ids, user.name, note), by: user.name };
}

/** The note, trimmed; an error naming `note` when it is missing or too long. */
export function checkDismissNote(note: unknown): string {
  if (typeof note !== 'string' || note.trim() === '') throw Object.assign(new Error('note: say why these dead letters are dismissed (what was looked at, what the module owner said)'), { kind: 'InvalidArgument' });
  const t = note.trim();
  if (t.length > DISMISS_NOTE_MAX) throw Object.assign(new Error(`note: expected at most ${DISMISS_NOTE_MAX} characters, got ${t.length}`), { kind: 'InvalidArgument' });
  return t;
}
