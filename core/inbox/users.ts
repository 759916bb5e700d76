// Users of the floor PC and the admin screens, kept in `<data>/site.db` (table `users`).
//
// A user has a name (the key, shown on every decision they make), a role, and up to three ways to
// sign in: a PIN (4–12 digits, for the touch screen), a password (admin screens), a badge string
// (what a card reader types). Every secret is stored as a slow salted scrypt hash
// (secret-hash.ts); badges are hashed with a per-site salt so they can be looked up by value.
//
// Lockout: `failuresMax` wrong PINs/passwords in a row lock the user for `lockoutMs` of real time
// (a monotonic clock, its rest kept in site.db across a restart; a step of the wall clock neither
// ends nor lengthens it); a correct one resets the
// count. A locked or disabled user cannot sign in by any means. An admin's reset of a PIN or
// password is recorded (`secretChangedMs`), and so is a disable (`disabledAtMs`), so that
// the sessions signed in before either can be ended for good (core/site service.ts). A reset
// leaves the user only the secret it gave: the other one may be the one that became known. A
// name that is no user, or a user without the secret asked for, gets the answers a wrong secret
// gets — `wrong` with failures left, then `locked` — after a hash of the same cost, counted in
// memory only: the answer does not tell whether a name is a user.
// Badges name no user until one matches, so unknown badges count against where they were presented
// (`signInWithBadge`'s source), never against a user.
//
// Concurrency: one better-sqlite3 connection, owned by the caller (the site). Hashing is async
// (libuv's pool), so verification never blocks the event loop for the hash; counters are updated
// with single UPDATE statements, so two verifications racing each count.
// Invariants: no plaintext secret is ever written; a name is never reused for another user (a
// disabled user stays, so the decisions signed with the name keep meaning), and a new user's name
// cannot look like an existing one's (`nameProblem`, `add`): the audit trail names users, and
// "anna" must not read as "anna\u200B", "Anna" or "аnna" (Cyrillic а). Names stored by an older,
// laxer rule keep working.

import type Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { APPROVER_NOT_ON_RECORD } from './inbox.ts';
import { DEFAULT_SCRYPT, hashSecret, lookupHash, verifySecret, type ScryptParams } from './secret-hash.ts';

export const ROLES = ['viewer', 'operator', 'shift_lead', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface User {
  readonly name: string;
  readonly role: Role;
  readonly disabled: boolean;
  readonly hasPin: boolean;
  readonly hasPassword: boolean;
  readonly hasBadge: boolean;
  readonly createdAtMs: number;
  readonly lastSignInMs: number | null;
  /** Set while the user is locked out after too many failures. */
  readonly lockedUntilMs: number | null;
  /**
   * When `resetSecret` last replaced the PIN or password (null: not since the user was added);
   * each reset gives a later value than the one before, whatever the clock did. UserStore always
   * gives it; a session signed in under another value began before a reset.
   */
  readonly secretChangedMs?: number | null;
  /**
   * When `disable` last disabled the user (null: never), kept when they are enabled again; each
   * disable gives a later value than the one before. A session signed in under another value
   * began before a disable, and stays ended though the user is enabled again.
   */
  readonly disabledAtMs?: number | null;
}

export interface NewUser {
  name: string;
  role: Role;
  pin?: string;
  password?: string;
  badge?: string;
}

export type SignInResult =
  | { readonly ok: true; readonly user: User }
  | { readonly ok: false; readonly reason: 'unknown' | 'disabled' | 'wrong' | 'no_secret'; readonly failuresLeft?: number }
  | { readonly ok: false; readonly reason: 'locked'; readonly lockedUntilMs: number };

export interface UserStoreOptions {
  /** Wrong PINs/passwords in a row before the user is locked. */
  failuresMax?: number;
  /** How long a lockout lasts. */
  lockoutMs?: number;
  nowMs?: () => number;
  /**
   * A monotonic clock in ms, by which a lockout ends (`lockoutMs` of real time): on the wall clock
   * (`nowMs`) a clock stepped back lengthened it by the step. Default: `nowMs` when only `nowMs` is
   * given (a simulated clock stays one clock), else performance.now.
   */
  monotonicMs?: () => number;
  scrypt?: ScryptParams;
}

export type UserErrorKind = 'InvalidArgument' | 'AlreadyExists' | 'NotFound';

/**
 * A UserError as data, for the floor UI to say in the reader's language (core/site api.ts
 * RefusalCode `user.*`, where the params are listed); the message stays the English text.
 */
export interface UserRefusal {
  code: 'user.nameInvalid' | 'user.noSecret' | 'user.roleInvalid' | 'user.pinInvalid' | 'user.passwordLength' | 'user.badgeLength' | 'user.exists' | 'user.badgeTaken' | 'user.notFound';
  params?: Record<string, string | number>;
}

export class UserError extends Error {
  readonly kind: UserErrorKind;
  readonly field: string;
  /** Absent on the store's own options (failuresMax, lockoutMs): no person at a screen chose those. */
  readonly refusal?: UserRefusal;
  constructor(kind: UserErrorKind, field: string, message: string, refusal?: UserRefusal) {
    super(message);
    this.name = `UserError(${kind})`;
    this.kind = kind;
    this.field = field;
    if (refusal) this.refusal = refusal;
  }
}

const notFound = (name: string): UserError => new UserError('NotFound', 'name', `user '${name}' does not exist`, { code: 'user.notFound', params: { name } });
const exists = (name: string): UserError => new UserError('AlreadyExists', 'name', `user '${name}' already exists`, { code: 'user.exists', params: { name } });
const badRole = (role: unknown): UserError =>
  new UserError('InvalidArgument', 'role', `role: expected one of ${ROLES.join(', ')}, got ${JSON.stringify(role)}`, { code: 'user.roleInvalid', params: { role: String(role) } });

/**
 * Why `value` cannot name an existing user — the rule every name was created under before
 * `nameProblem` got stricter — or undefined. For the names a request refers to (sign-in, disable,
 * enable, reset, roles): a site.db from an older version may hold "anna\u200B", and that user
 * must still sign in and be managed after an upgrade.
 */
export function existingNameProblem(value: unknown, maxChars = 64): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return 'expected a non-empty string';
  if (value.length > maxChars) return `expected at most ${maxChars} characters, got ${value.length}`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return 'must not contain control characters';
  if (value.includes('/') || value.includes('\\')) return 'must not contain a slash';
  if (value.includes('..')) return "must not contain '..'";
  if (value.trim() !== value) return 'must not start or end with a space';
  return undefined;
}

/** Characters that show nothing, or only turn the text around them: format characters (Cf: U+200B, U+200E/F, U+202A–202E, U+2066–2069, U+FEFF, U+00AD…) and the other default-ignorable ones (U+034F, U+3164, variation selectors). */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
/** Spaces other than U+0020 (U+00A0, U+2000–200A, U+202F, U+3000, U+2028/2029…): on a screen they pass for a plain one. */
const ODD_SPACE = /[\p{White_Space}\p{Zs}]/u;
/** A character as its code point, "U+202E" (at least four hex digits). */
export const codePoint = (ch: string): string => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Why `value` cannot be the name of a new user (UserStore.add, `tilstand init`'s admin, the API's
 * addUser and initSite), or of anything else that ends up in paths, logs and topics; undefined
 * when it can. The name is shown on every decision the user makes, so beside `existingNameProblem`
 * it refuses what would let two names look alike on a screen: an invisible or direction-changing
 * character ("anna\u200B" reads as "anna", "\u202Eanna" as "anna" reversed) and a space other than
 * U+0020, each named by its code point, and a word that mixes Latin, Cyrillic and Greek letters
 * (`mixedScriptProblem`), and "?", the name an approval not on record is made by
 * (`notOnRecordProblem`); the rest of the rule on the NFC form, which `add` stores.
 */
export function nameProblem(value: unknown, maxChars = 64): string | undefined {
  if (typeof value !== 'string') return existingNameProblem(value, maxChars);
  // A lone half of a surrogate pair is no character: SQLite would store U+FFFD in its place, and
  // the name kept would not be the name given.
  if (/\p{Cs}/u.test(value)) return `must not contain ${codePoint(/\p{Cs}/u.exec(value)![0])}, half of a character pair`;
  // The characters as given (NFC turns U+2000 into U+2002), before the checks of the ends: "anna\uFEFF"
  // is told U+FEFF, not a space at the end. Control characters are left to existingNameProblem.
  if (value.length <= maxChars) {
    for (const ch of value) {
      if (ch === ' ' || /\p{Cc}/u.test(ch)) continue;
      if (INVISIBLE.test(ch)) return `must not contain ${codePoint(ch)}, an invisible or direction-changing character`;
      if (ODD_SPACE.test(ch)) return `must not contain ${codePoint(ch)}, a space other than the plain one (U+0020)`;
    }
  }
  const nfc = value.normalize('NFC');
  return existingNameProblem(nfc, maxChars) ?? mixedScriptProblem(nfc) ?? notOnRecordProblem(nfc);
}

/**
 * Why `name` is the approver not on record, or one that reads as it, or undefined: an approval
 * lost with a restored site PC is recorded as made by `APPROVER_NOT_ON_RECORD` ("?": core/inbox
 * write-back.ts), in decision_log and at HQ. A user of that name would make the two one actor in
 * the trail, and "find out who approved it" would point at a person. Compared as `bareName` has it
 * (compatibility forms folded: "？" U+FF1F and "﹖" U+FE56 are "?"), its marks taken off ("?" with
 * U+0301 above it is "?"): a name that is then one of `QUESTION_MARKS` is refused.
 */
function notOnRecordProblem(name: string): string | undefined {
  const marksOff = bareName(name).normalize('NFD').replace(/\p{M}/gu, '').normalize('NFKC');
  if (!QUESTION_MARKS.has(marksOff)) return undefined;
  return `must not be ${JSON.stringify(APPROVER_NOT_ON_RECORD)}: the decision log names an approval not on record (lost with a restored site PC) by it`;
}

/**
 * The characters a name alone must not be (`notOnRecordProblem`), as they are once NFKC: "?", and
 * those a screen shows as it or nearly — the Arabic "؟" (U+061F), the reversed "⸮" (U+2E2E), the
 * inverted "¿" (U+00BF), the Limbu question mark "᥅" (U+1945), the emoji "❓" and "❔" (U+2753,
 * U+2754), and the glottal stop letters "ʔ" (U+0294), "ʡ" (U+02A1, with a stroke), "ˀ" (U+02C0),
 * "Ɂ" and "ɂ" (U+0241, U+0242). A small explicit set, not Unicode's confusables table; a name of
 * two or more such marks ("??") is not refused by it.
 */
const QUESTION_MARKS = new Set([APPROVER_NOT_ON_RECORD, '\u061F', '\u2E2E', '\u00BF', '\u1945', '\u2753', '\u2754', '\u0294', '\u02A1', '\u02C0', '\u0241', '\u0242']);

/** The scripts whose letters pass for one another ("О" U+041E, "Ο" U+039F and "O" look the same). */
const LOOKALIKE_SCRIPTS = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
] as const;
/** What ends a word in a name: a space, a hyphen or dash, an apostrophe, a period. */
const WORD_BREAK = /[ \p{Pd}'\u2019\u02BC.]+/u;

/** The lookalike script whose letter `ch` is, by its compatibility form (math bold "𝚶" is Greek "Ο"), or undefined. */
function letterScript(ch: string): string | undefined {
  for (const c of ch.normalize('NFKC')) {
    if (!/\p{L}/u.test(c)) continue;
    for (const [script, re] of LOOKALIKE_SCRIPTS) if (re.test(c)) return script;
  }
  return undefined;
}

/**
 * Why `name` (NFC) mixes scripts in a word, or undefined: a word with letters of two of Latin,
 * Cyrillic and Greek ("Оla" with a Cyrillic О) reads as a Latin word and is almost never a real
 * name. The letters of the script with most letters in the word (Latin on a tie) are the word's;
 * the others are named by code point and script.
 *
 * Per word, not per name (UTS #39's "highly restrictive" level asks one script of the whole
 * string): "Olena Петренко" or "Олена (night shift)" are names people write, and a word whole in
 * another script that looks like a Latin one ("Јое" beside "Joe") is the confusable fold's
 * (`confusableKey`), which compares whole names, not this rule's.
 */
function mixedScriptProblem(name: string): string | undefined {
  for (const word of name.split(WORD_BREAK)) {
    const byScript = new Map<string, string[]>();
    for (const ch of word) {
      const script = letterScript(ch);
      if (script !== undefined) byScript.set(script, [...(byScript.get(script) ?? []), ch]);
    }
    if (byScript.size < 2) continue;
    // In LOOKALIKE_SCRIPTS' order, so that on a tie the earlier script (Latin first) is the word's.
    const scripts = LOOKALIKE_SCRIPTS.map(([s]) => s).filter((s) => byScript.has(s));
    const main = scripts.reduce((a, b) => (byScript.get(b)!.length > byScript.get(a)!.length ? b : a));
    const others = scripts.filter((s) => s !== main).map((s) => `${[...new Set(byScript.get(s))].map(codePoint).join(', ')} (${s})`);
    return `must not mix scripts in one word: ${JSON.stringify(word)} has ${others.join(' and ')} among ${main} letters`;
  }
  return undefined;
}

/**
 * What a reader of a name sees, for telling whether two names look alike: without invisible
 * characters, compatibility forms folded (NFKC: U+00A0 and U+3000 as a space, "ﬁ" as "fi", math
 * bold "𝐎" as "O"), runs of spaces as one (a browser shows them so), and case folded
 * (toUpperCase().toLowerCase() also folds ß/SS and final sigma). Letters of other scripts that look
 * like Latin ones are `confusableKey`'s.
 */
function lookalikeKey(name: string): string {
  return caseFold(bareName(name));
}

/**
 * `lookalikeKey` with the Cyrillic and Greek letters that look like Latin ones (CONFUSABLE) made
 * those Latin letters before the case fold: "Јое" (all Cyrillic) and "Ινο" (all Greek) key as
 * "joe" and "ivo". A second key beside `lookalikeKey`, not a change of it: a letter looks Latin
 * in one case and not the other (capital "Н" is "H", small "н" is no "h"), so the table is applied
 * to the letters as written, and two names that differ only in case must still read as one
 * ("Нина" beside "нина") by `lookalikeKey`. Accents stay (taken apart first, so "Ё" is "Ë").
 */
function confusableKey(name: string): string {
  let out = '';
  for (const ch of bareName(name).normalize('NFD')) out += CONFUSABLE.get(ch) ?? ch;
  return caseFold(out);
}

/** `name` without invisible characters, in NFKC, with runs of spaces as one and no space at the ends. */
const bareName = (name: string): string => name.replace(new RegExp(INVISIBLE.source, 'gu'), '').normalize('NFKC').replace(/\s+/gu, ' ').trim();
const caseFold = (s: string): string => s.toUpperCase().toLowerCase().normalize('NFKC');

/**
 * Cyrillic and Greek letters that look like a Latin letter of the same case in common UI fonts,
 * as written (before the case fold; `confusableKey`): a hand-picked subset of Unicode's
 * confusables table (UTS #39), not the whole. Left out: pairs that differ on a second look (Greek
 * "α", "ι", "κ", "υ", "χ"; Cyrillic small "в", "к", "м", "н", "т", whose capitals are in) and
 * letters NFKC has already made others (lunate sigma "ϲ" is "ς" by then).
 */
const CONFUSABLE = new Map<string, string>([
  // Cyrillic capitals
  ['А', 'A'], ['В', 'B'], ['Е', 'E'], ['К', 'K'], ['М', 'M'], ['Н', 'H'], ['О', 'O'], ['Р', 'P'], ['С', 'C'], ['Т', 'T'], ['Х', 'X'],
  ['Ү', 'Y'], ['Ѕ', 'S'], ['І', 'I'], ['Ј', 'J'], ['Ԛ', 'Q'], ['Ԝ', 'W'], ['Ӏ', 'I'],
  // Cyrillic small
  ['а', 'a'], ['е', 'e'], ['о', 'o'], ['р', 'p'], ['с', 'c'], ['у', 'y'], ['х', 'x'], ['ү', 'y'], ['ѕ', 's'], ['і', 'i'], ['ј', 'j'],
  ['ԁ', 'd'], ['һ', 'h'], ['ӏ', 'l'], ['ԛ', 'q'], ['ԝ', 'w'],
  // Greek capitals
  ['Α', 'A'], ['Β', 'B'], ['Ε', 'E'], ['Ζ', 'Z'], ['Η', 'H'], ['Ι', 'I'], ['Κ', 'K'], ['Μ', 'M'], ['Ν', 'N'], ['Ο', 'O'], ['Ρ', 'P'],
  ['Τ', 'T'], ['Υ', 'Y'], ['Χ', 'X'], ['Ϳ', 'J'],
  // Greek small
  ['ο', 'o'], ['ν', 'v'], ['ρ', 'p'], ['ϳ', 'j'],
]);

/** `name` with its invisible characters and odd spaces shown as <U+XXXX>, for a message about it. */
export function visibleName(name: string): string {
  let out = '';
  for (const ch of name) out += ch !== ' ' && (INVISIBLE.test(ch) || ODD_SPACE.test(ch)) ? `<${codePoint(ch)}>` : ch;
  return out;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  name TEXT PRIMARY KEY,
  role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'shift_lead', 'admin')),
  pin_hash TEXT,
  password_hash TEXT,
  badge_hash TEXT UNIQUE,
  disabled INTEGER NOT NULL DEFAULT 0,
  failed_attempts INTEGER NOT NULL DEFAULT 0,
  locked_until_ms INTEGER,
  created_at_ms INTEGER NOT NULL,
  last_sign_in_ms INTEGER,
  secret_changed_ms INTEGER,
  disabled_at_ms INTEGER,
  lock_left_ms INTEGER
);
CREATE TABLE IF NOT EXISTS site_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`;

/** How much a lockout's rest must have dropped since the rest in site.db before a look writes it again. */
const LOCK_LEFT_STEP_MS = 1_000;

interface Row {
  name: string;
  role: Role;
  pin_hash: string | null;
  password_hash: string | null;
  badge_hash: string | null;
  disabled: number;
  failed_attempts: number;
  locked_until_ms: number | null;
  /** Real time the lockout has left, as last counted by a process on its monotonic clock (null: none, or a lockout an older version wrote). */
  lock_left_ms?: number | null;
  created_at_ms: number;
  last_sign_in_ms: number | null;
  secret_changed_ms: number | null;
  disabled_at_ms: number | null;
}

const PIN = /^[0-9]{4,12}$/;

/**
 * Whether `secret` has the form of a PIN (4 to 12 digits): the one rule for what `add` and
 * `resetSecret` take as a PIN, and for what the site reads as a PIN rather than a password where
 * one field gives either (core/site service.ts: sign-in, an admin's reset).
 */
export const isPin = (secret: string): boolean => PIN.test(secret);

/**
 * Why a PIN is among the first a colleague would try (one digit repeated, or digits in a row up or
 * down: 0000, 1234, 9876), or undefined. Five wrong PINs lock a user; these fall within five.
 * Checked where a person chooses a PIN (`tilstand init` and `users add`, the API's addUser,
 * resetSecret and initSite), not in UserStore: a demo site's admin has 1234 on purpose.
 */
export function guessablePin(pin: string): string | undefined {
  if (!PIN.test(pin)) return undefined;
  const d = [...pin].map(Number);
  if (d.every((x) => x === d[0])) return 'one digit repeated';
  if (d.every((x, i) => i === 0 || x === d[i - 1]! + 1) || d.every((x, i) => i === 0 || x === d[i - 1]! - 1)) return 'digits in a row';
  return undefined;
}

/** The message for a guessable PIN, naming what was given. */
export const guessablePinMessage = (pin: string, why: string): string => `PIN ${pin}: ${why} is among the first a colleague would try (five wrong PINs lock the user); choose another`;

const PASSWORD_CHARS_MIN = 8;
/** The longest password or badge a user can have, and so the longest secret worth checking. */
export const SECRET_CHARS_MAX = 256;
const BADGE_CHARS_MIN = 4;

const badPin = (): UserError => new UserError('InvalidArgument', 'pin', 'PIN: expected 4 to 12 digits', { code: 'user.pinInvalid', params: { min: 4, max: 12 } });
const badPassword = (): UserError =>
  new UserError('InvalidArgument', 'password', `password: expected ${PASSWORD_CHARS_MIN} to ${SECRET_CHARS_MAX} characters`, { code: 'user.passwordLength', params: { min: PASSWORD_CHARS_MIN, max: SECRET_CHARS_MAX } });

/**
 * Keys of the counts kept in memory (names that are no user, badge sources); past it the oldest is
 * forgotten: one who sprays that many keys gets fresh counts for them, no more.
 */
const COUNTED_KEYS_MAX = 10_000;

/** Wrong attempts in a row counted in memory for one key, and when (monotonic) the lockout they started ends. */
interface Counted {
  failed: number;
  lockEndMono: number | null;
}

/**
 * A user's lockout as this process sees it: the stored `locked_until_ms` (wall clock) it was seen
 * with, which names the lockout, and when it ends on the monotonic clock.
 */
interface LockSeen {
  untilMs: number;
  endMono: number;
}

/** `key`'s count in `map`, made when missing (the oldest key forgotten past COUNTED_KEYS_MAX). */
function counted(map: Map<string, Counted>, key: string): Counted {
  let c = map.get(key);
  if (!c) {
    if (map.size >= COUNTED_KEYS_MAX) map.delete(map.keys().next().value!);
    map.set(key, (c = { failed: 0, lockEndMono: null }));
  }
  return c;
}

export class UserStore {
  private readonly db: Database.Database;
  private readonly failuresMax: number;
  private readonly lockoutMs: number;
  private readonly now: () => number;
  private readonly mono: () => number;
  private readonly params: ScryptParams;
  private readonly badgeSalt: Buffer;
  /** A hash to spend the same time on for unknown names, so timing does not tell names apart. */
  private dummy: Promise<string> | undefined;
  /** Wrong attempts of names that cannot sign in that way (`verifyNobody`), oldest first. */
  private readonly phantoms = new Map<string, Counted>();
  /** Unknown badges per source (`signInWithBadge`), oldest first. */
  private readonly badgeSources = new Map<string, Counted>();
  /**
   * Per user locked in site.db, when its lockout ends by real time (`lockLeftMs`): kept, ended too,
   * until its `locked_until_ms` changes (a success or a reset clears it, a new lockout replaces
   * it). At most one per user.
   */
  private readonly locks = new Map<string, LockSeen>();

  constructor(db: Database.Database, options: UserStoreOptions = {}) {
    this.db = db;
    this.failuresMax = options.failuresMax ?? 5;
    this.lockoutMs = options.lockoutMs ?? 15 * 60_000;
    if (!Number.isSafeInteger(this.failuresMax) || this.failuresMax < 1) throw new UserError('InvalidArgument', 'failuresMax', `failuresMax: expected an integer ≥ 1, got ${this.failuresMax}`);
    if (!Number.isSafeInteger(this.lockoutMs) || this.lockoutMs < 0) throw new UserError('InvalidArgument', 'lockoutMs', `lockoutMs: expected an integer ≥ 0, got ${this.lockoutMs}`);
    this.now = options.nowMs ?? Date.now;
    this.mono = options.monotonicMs ?? options.nowMs ?? (() => Math.floor(performance.now()));
    this.params = options.scrypt ?? DEFAULT_SCRYPT;
    db.exec(SCHEMA);
    // A site.db from before `secret_changed_ms` or `disabled_at_ms` gets it (null: no reset or
    // disable recorded). Checked under the write lock: the site and a `tilstand users` command may
    // open an old file at once.
    db.transaction(() => {
      const columns = db.prepare('PRAGMA table_info(users)').all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === 'secret_changed_ms')) db.exec('ALTER TABLE users ADD COLUMN secret_changed_ms INTEGER');
      if (!columns.some((c) => c.name === 'disabled_at_ms')) db.exec('ALTER TABLE users ADD COLUMN disabled_at_ms INTEGER');
      if (!columns.some((c) => c.name === 'lock_left_ms')) db.exec('ALTER TABLE users ADD COLUMN lock_left_ms INTEGER');
    }).immediate();
    db.prepare("INSERT OR IGNORE INTO site_meta (key, value) VALUES ('badge_salt', ?)").run(randomBytes(16).toString('base64'));
    const salt = db.prepare("SELECT value FROM site_meta WHERE key = 'badge_salt'").pluck().get() as string;
    this.badgeSalt = Buffer.from(salt, 'base64');
  }

  /**
   * Adds a user under `u.name` in NFC (the returned user's name). Stored composed rather than
   * refused when not: "Å" typed as A + U+030A looks the same as U+00C5, so an admin told "not in
   * NFC" could not see what to change; the lookups take either form (`row`). Refused, besides
   * `nameProblem`'s names: one that looks like an existing user's (`lookalikeKey`: the same but for
   * case, invisible characters, composition or odd spaces; `confusableKey`: or for Cyrillic and
   * Greek letters that look like Latin ones) — `user.exists` with that user's name.
   * Two people "Anna" and "anna" cannot be told apart in a list or on a decision; the admin adds a
   * surname or an initial. Names already in site.db are left as they are.
   */
  async add(u: NewUser): Promise<User> {
    const problem = nameProblem(u.name);
    if (problem) throw new UserError('InvalidArgument', 'name', `user name ${JSON.stringify(u.name)}: ${problem}`, { code: 'user.nameInvalid', params: { name: String(u.name) } });
    const name = u.name.normalize('NFC');
    if (!(ROLES as readonly string[]).includes(u.role)) throw badRole(u.role);
    if (u.pin === undefined && u.password === undefined && u.badge === undefined) {
      throw new UserError('InvalidArgument', 'pin', `user '${name}': expected at least one of a PIN, a password or a badge`, { code: 'user.noSecret', params: { name } });
    }
    if (u.pin !== undefined && !PIN.test(u.pin)) throw badPin();
    if (u.password !== undefined && (u.password.length < PASSWORD_CHARS_MIN || u.password.length > SECRET_CHARS_MAX)) throw badPassword();
    // Sign-in checks a PIN-like secret as the PIN whenever the user has one (core/site service.ts):
    // such a password beside a PIN would never sign in, each try a wrong PIN toward the lockout.
    // Only `tilstand users add` gives both (the API's addUser takes one secret), so no refusal code.
    if (u.pin !== undefined && u.password !== undefined && PIN.test(u.password)) {
      throw new UserError('InvalidArgument', 'password', `password: ${u.password.length} digits is taken for a PIN at sign-in, and this user has a PIN; give a password with a character other than a digit, or more than 12 digits`);
    }
    if (u.badge !== undefined && (u.badge.length < BADGE_CHARS_MIN || u.badge.length > SECRET_CHARS_MAX)) {
      throw new UserError('InvalidArgument', 'badge', `badge: expected ${BADGE_CHARS_MIN} to ${SECRET_CHARS_MAX} characters`, { code: 'user.badgeLength', params: { min: BADGE_CHARS_MIN, max: SECRET_CHARS_MAX } });
    }
    this.refuseTaken(name);
    const [pinHash, passwordHash, badgeHash] = await Promise.all([
      u.pin === undefined ? null : hashSecret(u.pin, this.params),
      u.password === undefined ? null : hashSecret(u.password, this.params),
      u.badge === undefined ? null : lookupHash(u.badge, this.badgeSalt, this.params),
    ]);
    if (badgeHash !== null && this.db.prepare('SELECT 1 FROM users WHERE badge_hash = ?').get(badgeHash)) {
      throw new UserError('AlreadyExists', 'badge', 'that badge already belongs to another user', { code: 'user.badgeTaken' });
    }
    try {
      // Checked again with the insert under the write lock: another add (the site's, a `tilstand
      // users add` beside it) may have taken a look-alike name while this one hashed.
      this.db.transaction(() => {
        this.refuseTaken(name);
        this.db
          .prepare('INSERT INTO users (name, role, pin_hash, password_hash, badge_hash, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)')
          .run(name, u.role, pinHash, passwordHash, badgeHash, this.now());
      }).immediate();
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw exists(name);
      throw e;
    }
    return this.get(name)!;
  }

  /** Refuses `name` (NFC) for a new user when it is a user's, or looks like one's (`lookalikeKey`, `confusableKey`). */
  private refuseTaken(name: string): void {
    if (this.row(name)) throw exists(name);
    const key = lookalikeKey(name);
    const confusable = confusableKey(name);
    const names = this.db.prepare('SELECT name FROM users').pluck().all() as string[];
    const like = names.find((n) => lookalikeKey(n) === key || confusableKey(n) === confusable);
    if (like === undefined) return;
    throw new UserError(
      'AlreadyExists',
      'name',
      `user name ${JSON.stringify(name)} looks like the existing user '${visibleName(like)}' (names that differ only in case, invisible characters, spaces, how letters are composed, or in Cyrillic or Greek letters that look like Latin ones read as one); choose another`,
      { code: 'user.exists', params: { name: like } },
    );
  }

  get(name: string): User | undefined {
    const r = this.row(name);
    return r && this.toUser(r);
  }

  list(): User[] {
    return (this.db.prepare('SELECT * FROM users ORDER BY name').all() as Row[]).map((r) => this.toUser(r));
  }

  count(): number {
    return Number(this.db.prepare('SELECT COUNT(*) FROM users').pluck().get());
  }

  /**
   * Disables a user (kept, so the name stays attached to their decisions). Records it in
   * `disabledAtMs` as `resetSecret` records a reset (every disable changes it): the sessions signed
   * in before it end, also those that made no call until the user was enabled again.
   */
  disable(name: string): User {
    const r = this.row(name);
    if (!r) throw notFound(name);
    this.db.prepare('UPDATE users SET disabled = 1, disabled_at_ms = MAX(?, COALESCE(disabled_at_ms + 1, 0)) WHERE name = ?').run(this.now(), r.name);
    return this.get(r.name)!;
  }

  /**
   * Lets a disabled user sign in again (back from leave, disabled by mistake); their PIN, password
   * and badge are as they were. Their sessions from before the disable stay ended (`disabledAtMs`).
   */
  enable(name: string): User {
    const r = this.row(name);
    if (!r) throw notFound(name);
    this.db.prepare('UPDATE users SET disabled = 0 WHERE name = ?').run(r.name);
    return this.get(r.name)!;
  }

  /** Changes a user's role (the name and their past decisions stay). */
  setRole(name: string, role: Role): User {
    if (!(ROLES as readonly string[]).includes(role)) throw badRole(role);
    const r = this.row(name);
    if (!r) throw notFound(name);
    this.db.prepare('UPDATE users SET role = ? WHERE name = ?').run(role, r.name);
    return this.get(r.name)!;
  }

  /**
   * Replaces a user's PIN and password with the one given, and lifts a lockout (an admin reset):
   * the other of the two is cleared, for the reset is what an admin does when a secret became
   * known, and sign-in takes either (core/site service.ts: a PIN-like secret is checked as the
   * PIN) — a password given must not leave the known PIN signing in. The badge stays: a card, not
   * a secret typed, and taken back by disabling the user. Records the reset in `secretChangedMs`:
   * the time, or one past the value before when the time is not later (two resets in a
   * millisecond, a clock set back), so every reset changes it.
   */
  async resetSecret(name: string, s: { pin: string } | { password: string }): Promise<User> {
    const r = this.row(name);
    if (!r) throw notFound(name);
    let pinGiven: boolean;
    let secret: string;
    if ('pin' in s) {
      if (!PIN.test(s.pin)) throw badPin();
      pinGiven = true;
      secret = s.pin;
    } else {
      if (typeof s.password !== 'string' || s.password.length < PASSWORD_CHARS_MIN || s.password.length > SECRET_CHARS_MAX) throw badPassword();
      pinGiven = false;
      secret = s.password;
    }
    const hash = await hashSecret(secret, this.params);
    this.db
      .prepare('UPDATE users SET pin_hash = ?, password_hash = ?, failed_attempts = 0, locked_until_ms = NULL, lock_left_ms = NULL, secret_changed_ms = MAX(?, COALESCE(secret_changed_ms + 1, 0)) WHERE name = ?')
      .run(pinGiven ? hash : null, pinGiven ? null : hash, this.now(), r.name);
    return this.get(r.name)!;
  }

  verifyPin(name: string, pin: string): Promise<SignInResult> {
    return this.verify(name, 'pin_hash', pin);
  }

  verifyPassword(name: string, password: string): Promise<SignInResult> {
    return this.verify(name, 'password_hash', password);
  }

  /**
   * Sign-in by badge string: finds the user whose badge hashes equal. `source`: where the badge
   * was presented (a reader, a screen, a client's address); callers that give none share one.
   *
   * A badge that is no one's names no user to count it against, so the count is the source's:
   * failuresMax unknown badges in a row from a source stop badge sign-in from it — the right
   * badge too, else the lockout would still tell right from wrong — for lockoutMs; a right one
   * resets it. Counted before the hash, as `verify` counts a PIN. No user is locked by it (a user
   * lockout keyed on badges would let anyone with a card reader lock out everyone), and PINs,
   * passwords and other sources go on. In memory: a restart forgets it.
   */
  async signInWithBadge(badge: string, source = ''): Promise<SignInResult> {
    if (typeof badge !== 'string' || badge.length === 0 || badge.length > SECRET_CHARS_MAX) return { ok: false, reason: 'unknown' };
    const c = counted(this.badgeSources, String(source).slice(0, SECRET_CHARS_MAX));
    const attempt = this.countAttempt(c);
    if (typeof attempt !== 'number') return attempt;
    const h = await lookupHash(badge, this.badgeSalt, this.params);
    // Read again: the attempts beside this one may have locked the source while this one was hashed.
    const blockedNow = this.lockedCount(c);
    if (blockedNow) return blockedNow;
    const r = this.db.prepare('SELECT * FROM users WHERE badge_hash = ?').get(h) as Row | undefined;
    if (!r) return this.failedCount(c, attempt, 'unknown');
    c.failed = 0;
    const blockedUser = this.blocked(r);
    if (blockedUser) return blockedUser;
    return this.succeed(r.name);
  }

  private async verify(name: string, column: 'pin_hash' | 'password_hash', secret: string): Promise<SignInResult> {
    const r = typeof name === 'string' ? this.row(name) : undefined;
    if (typeof secret !== 'string' || secret.length > SECRET_CHARS_MAX) return { ok: false, reason: 'wrong' };
    if (!r) return this.verifyNobody(String(name), secret);
    const blocked = this.blocked(r);
    if (blocked) return blocked;
    const stored = r[column];
    if (stored === null) return this.verifyNobody(r.name, secret);
    // The attempt is counted as a failure before the hash, and taken back if the secret is right:
    // the hash takes a while on the threadpool, and guesses sent side by side (an HTTP client can)
    // were each checked against a row none of the others had counted yet, so any number of them
    // ran, and the right one among them signed in and lifted the lockout. Now at most failuresMax
    // attempts are counted or in flight; the next one starts the lockout without hashing.
    const attempt = this.db
      .prepare('UPDATE users SET failed_attempts = failed_attempts + 1 WHERE name = ? AND failed_attempts < ? RETURNING failed_attempts')
      .pluck()
      .get(r.name, this.failuresMax);
    if (attempt === undefined) return this.lock(r.name);
    const ok = await verifySecret(secret, stored);
    // Read again: the user may have been disabled, or locked by the attempts beside this one,
    // while this one was hashed; or the secret reset, and the old one no longer signs in.
    const now = this.row(r.name);
    if (!now) return { ok: false, reason: 'unknown' };
    const blockedNow = this.blocked(now);
    if (blockedNow) return blockedNow;
    if (ok && now[column] === stored) return this.succeed(r.name);
    // The row that reaches failuresMax starts the lockout and resets the count.
    const failed = Number(attempt);
    if (failed >= this.failuresMax) return this.lock(r.name);
    return { ok: false, reason: 'wrong', failuresLeft: this.failuresMax - failed };
  }

  /**
   * A name that cannot sign in this way (no such user, or the user has no such secret) is answered
   * as a wrong secret is: the same hash cost (a dummy hash), `wrong` with failures left, and after
   * failuresMax the same lockout — counted in memory (`phantoms`), so that nothing is written for
   * names that do not exist and a badge-only user is not locked by PIN guesses. Otherwise
   * `unknown` or a missing count told whoever asked which names are users.
   */
  private async verifyNobody(name: string, secret: string): Promise<SignInResult> {
    const c = counted(this.phantoms, name.slice(0, SECRET_CHARS_MAX));
    // As `verify`: counted before the hash, read again after it, answered by its own count.
    const attempt = this.countAttempt(c);
    if (typeof attempt !== 'number') return attempt;
    this.dummy ??= hashSecret('not-a-user', this.params);
    await verifySecret(secret, await this.dummy);
    return this.lockedCount(c) ?? this.failedCount(c, attempt, 'wrong');
  }

  /** The lockout of an in-memory count, while it lasts. */
  private lockedCount(c: Counted): SignInResult | undefined {
    const left = c.lockEndMono === null ? 0 : c.lockEndMono - this.mono();
    return left > 0 ? { ok: false, reason: 'locked', lockedUntilMs: this.now() + left } : undefined;
  }

  /**
   * Counts an attempt before its hash: its number in the count, or — locked, or at failuresMax
   * already (that starts the lockout) — the refusal, without a hash.
   */
  private countAttempt(c: Counted): number | SignInResult {
    const blocked = this.lockedCount(c);
    if (blocked) return blocked;
    if (c.failed >= this.failuresMax) return this.lockCount(c);
    return ++c.failed;
  }

  /** Counted attempt number `attempt` failed: failures left, or the lockout when it was the last. */
  private failedCount(c: Counted, attempt: number, reason: 'wrong' | 'unknown'): SignInResult {
    return attempt >= this.failuresMax ? this.lockCount(c) : { ok: false, reason, failuresLeft: this.failuresMax - attempt };
  }

  private lockCount(c: Counted): SignInResult {
    c.failed = 0;
    c.lockEndMono = this.mono() + this.lockoutMs;
    return { ok: false, reason: 'locked', lockedUntilMs: this.now() + this.lockoutMs };
  }

  private lock(name: string): SignInResult {
    const until = this.now() + this.lockoutMs;
    this.db.prepare('UPDATE users SET failed_attempts = 0, locked_until_ms = ?, lock_left_ms = ? WHERE name = ?').run(until, this.lockoutMs, name);
    this.locks.set(name, { untilMs: until, endMono: this.mono() + this.lockoutMs });
    return { ok: false, reason: 'locked', lockedUntilMs: until };
  }

  /**
   * How long `r`'s lockout lasts yet (ms > 0), or undefined when it is not locked. It lasts
   * `lockoutMs` of real time the site counted, on the monotonic clock of the process that locked
   * the user or first saw the lockout; the wall clock does not end it (a clock stepped forward,
   * NTP at boot, ended one early after a restart) nor lengthen it (a step back did, by the step).
   * What is left is written back (`lock_left_ms`, only ever down) whenever a process looks, so a
   * restart goes on from the rest last counted: the time the site was off, or ran since its last
   * look at the lockout, is not counted. A lockout an older version wrote (no `lock_left_ms`) lasts
   * by the wall clock, at most `lockoutMs`. One that ended is cleared in site.db.
   */
  private lockLeftMs(r: Row): number | undefined {
    if (r.locked_until_ms === null) {
      this.locks.delete(r.name);
      return undefined;
    }
    const until = Number(r.locked_until_ms);
    const stored = r.lock_left_ms === null || r.lock_left_ms === undefined ? null : Number(r.lock_left_ms);
    const nowMono = this.mono();
    let seen = this.locks.get(r.name);
    if (seen?.untilMs !== until) {
      seen = { untilMs: until, endMono: nowMono + Math.min(stored ?? until - this.now(), this.lockoutMs) };
      this.locks.set(r.name, seen);
    }
    const left = seen.endMono - nowMono;
    if (left > 0) {
      // Written once it is LOCK_LEFT_STEP_MS below the rest in site.db (a restart gives back at most
      // that much more): a write per look made every guess at a locked user, and every users list,
      // a site.db write.
      if (stored === null || stored - left >= LOCK_LEFT_STEP_MS) {
        this.recordLock('UPDATE users SET lock_left_ms = MIN(COALESCE(lock_left_ms, ?), ?) WHERE name = ? AND locked_until_ms = ?', left, left, r.name, until);
      }
      return left;
    }
    this.recordLock('UPDATE users SET locked_until_ms = NULL, lock_left_ms = NULL WHERE name = ? AND locked_until_ms = ?', r.name, until);
    return undefined;
  }

  /**
   * A look's write of a lockout's rest or end (`lockLeftMs`): a record for a restart, not what the
   * answer rests on, so site.db refusing writes for a moment (full, busy past its timeout, read-only)
   * leaves it to the next look instead of failing a sign-in's refusal or the users list, which
   * only read before the rest was kept.
   */
  private recordLock(sql: string, ...params: unknown[]): void {
    try {
      this.db.prepare(sql).run(...params);
    } catch (e) {
      const code = String((e as { code?: unknown }).code ?? '');
      if (!/^SQLITE_(READONLY|BUSY|LOCKED|FULL)/.test(code)) throw e;
    }
  }

  private blocked(r: Row): SignInResult | undefined {
    if (r.disabled) return { ok: false, reason: 'disabled' };
    const left = this.lockLeftMs(r);
    if (left !== undefined) return { ok: false, reason: 'locked', lockedUntilMs: this.now() + left };
    return undefined;
  }

  private succeed(name: string): SignInResult {
    this.db.prepare('UPDATE users SET failed_attempts = 0, locked_until_ms = NULL, lock_left_ms = NULL, last_sign_in_ms = ? WHERE name = ?').run(this.now(), name);
    return { ok: true, user: this.get(name)! };
  }

  /**
   * The user `name` names: the one stored under it, else the one stored under its NFC form (`add`
   * stores that), so "Åse" typed as A + U+030A finds the user added as "Åse". Exact first: a
   * site.db from before holds names as they were typed, composed or not.
   */
  private row(name: string): Row | undefined {
    const get = this.db.prepare('SELECT * FROM users WHERE name = ?');
    const r = get.get(name) as Row | undefined;
    if (r || typeof name !== 'string') return r;
    const nfc = name.normalize('NFC');
    return nfc === name ? undefined : (get.get(nfc) as Row | undefined);
  }

  private toUser(r: Row): User {
    const left = this.lockLeftMs(r);
    const locked = left === undefined ? null : this.now() + left;
    return {
      name: r.name,
      role: r.role,
      disabled: r.disabled !== 0,
      hasPin: r.pin_hash !== null,
      hasPassword: r.password_hash !== null,
      hasBadge: r.badge_hash !== null,
      createdAtMs: Number(r.created_at_ms),
      lastSignInMs: r.last_sign_in_ms === null ? null : Number(r.last_sign_in_ms),
      lockedUntilMs: locked,
      secretChangedMs: r.secret_changed_ms === null ? null : Number(r.secret_changed_ms),
      disabledAtMs: r.disabled_at_ms === null ? null : Number(r.disabled_at_ms),
    };
  }
}
