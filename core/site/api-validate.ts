// Validation of every site API request at the boundary (IPC from the renderer, HTTP from a
// browser). Whatever arrives is untrusted: the method must be one of SITE_METHODS and the request
// must have exactly the shape its type says — unknown keys, wrong types, oversized strings and
// prototype keys are refused with a message naming the field. The message stays English (logs, the
// CLI, scripts); each refusal also carries an `input.*` code with the field and limit (api.ts
// RefusalCode), which the floor UI words in the reader's language.

import { CLIENT_ERROR_MESSAGE_MAX, CLIENT_ERROR_STACK_MAX, DISMISS_NOTE_MAX, SITE_METHODS, SiteApiError, type ClientErrorReport, type InputAge, type Refusal, type RefusalCode, type Role, type SiteMethod, type SiteApiMethods } from './api.ts';
import { codePoint, existingNameProblem, nameProblem, SECRET_CHARS_MAX } from '../inbox/users.ts';
import { DEAD_LETTER_REASONS } from '../ingest/envelope.ts';
import { DEAD_LETTER_LIST_MAX } from '../ingest/ingestor.ts';

/**
 * A request refused at the boundary: kind `invalid`, the English message naming the field, and its
 * refusal as data (`input.name`, `input.tooLong`, `input.range`, `input.characters` for what a floor UI form can send;
 * `input.refused` for the rest, which only a hand-made request or a mismatched UI sends).
 */
export class ApiValidationError extends SiteApiError {
  declare readonly kind: 'invalid';
  declare readonly refusal: Refusal;

  constructor(
    message: string,
    refusal: Refusal,
    /** How deep in the request it failed (0: the request itself): `union` keeps the deepest alternative's refusal. */
    readonly depth = 0,
  ) {
    super('invalid', message, undefined, refusal);
  }
}

const ROLES: readonly Role[] = ['viewer', 'operator', 'shift_lead', 'admin'];
const STATUSES = ['open', 'deferred', 'approved', 'rejected', 'stale', 'withdrawn'] as const;
const STRING_MAX = 4096;
/** The longest MQTT topic (its length is a 16-bit count of bytes). */
const TOPIC_MAX = 65_535;

type Check = (v: unknown, path: string) => void;

/** The field a path names, as the refusal's `field` param: `request.policy.reorderPoint` → `policy.reorderPoint`; the request itself → ''. */
const fieldOf = (path: string): string => path.replace(/^request\.?/, '');
const depthOf = (path: string): number => (path.match(/[.[]/g) ?? []).length;

/** Refuses the value at `path` (`what`: the English after "<path>: "), with its code and params beside the field. */
const refuse = (path: string, what: string, code: RefusalCode = 'input.refused', params: Record<string, string | number> = {}): never => {
  throw new ApiValidationError(`${path}: ${what}`, { code, params: { field: fieldOf(path), ...params } }, depthOf(path));
};

const gotOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);
const fail = (path: string, expected: string, v: unknown): never => refuse(path, `expected ${expected}, got ${gotOf(v)}`);

const str = (max = STRING_MAX): Check => (v, p) => {
  if (typeof v !== 'string') fail(p, 'a string', v);
  if ((v as string).length > max) refuse(p, `longer than ${max} characters`, 'input.tooLong', { max });
};
/**
 * The bidi embedding, override and isolate controls (U+202A–202E, U+2066–2069): in a decision's
 * comment or a dismissal's note they turn the text after them around, on the floor PC and at HQ
 * (the decision log and the dead letters are synced), so a comment can read as another.
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
/** The first bidi control in `text` as its code point ("U+202E"), or undefined (also the CLI's `--comment` and `--note`). */
export function bidiControlIn(text: string): string | undefined {
  const ch = BIDI_CONTROL.exec(text)?.[0];
  return ch === undefined ? undefined : codePoint(ch);
}
/** What the refusal of a free text with a bidi control says after the field. */
export const bidiControlProblem = (code: string): string => `must not contain ${code}, a direction-changing character (the text after it would show reversed)`;
/** A free text a person types (a comment, a note): a string of at most `max`, without bidi controls. */
const freeText = (max: number): Check => (v, p) => {
  str(max)(v, p);
  const code = bidiControlIn(v as string);
  if (code !== undefined) refuse(p, bidiControlProblem(code), 'input.characters', { char: code });
};
// A user name is checked by the user store's own rules (core/inbox): every name `tilstand users
// add` takes — "Kåre Ødegård", "Jürgen" — can sign in and be managed from the floor UI. A name the
// store refuses ("Ola/Per", too long) is one refusal to the reader. A new user's name (addUser,
// initSite) meets `nameProblem`, which refuses invisible and direction-changing characters and odd
// spaces; a name that refers to a user (sign-in, disable, enable, reset, roles) only
// `existingNameProblem`, the rule names were created under before: a user an older version added
// as "anna\u200B" still signs in and can be disabled after an upgrade.
const NAME_MAX = 64;
const userName = (problemOf: (v: unknown, max: number) => string | undefined): Check => (v, p) => {
  if (typeof v !== 'string') fail(p, 'a string', v);
  const problem = problemOf(v, NAME_MAX);
  if (problem !== undefined) refuse(p, `not a user name: ${problem}`, 'input.name', { max: NAME_MAX });
};
const newName = userName(nameProblem);
const name = userName(existingNameProblem);
const int = (min: number, max: number): Check => (v, p) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) refuse(p, `expected an integer in ${min}..${max}, got ${gotOf(v)}`, 'input.range', { min, max });
};
const bool: Check = (v, p) => (typeof v === 'boolean' ? undefined : fail(p, 'true or false', v));
const isNull: Check = (v, p) => (v === null ? undefined : fail(p, 'null', v));
const oneOf = (values: readonly string[]): Check => (v, p) => {
  if (typeof v !== 'string' || !values.includes(v)) fail(p, `one of ${values.join(', ')}`, v);
};
const arrayOf = (item: Check, max = 1000): Check => (v, p) => {
  if (!Array.isArray(v)) fail(p, 'an array', v);
  const a = v as unknown[];
  if (a.length > max) refuse(p, `more than ${max} items`);
  // Every index: forEach skips an array's holes, which structured clone (Electron IPC) keeps.
  for (let i = 0; i < a.length; i++) item(a[i], `${p}[${i}]`);
};

function object(fields: Record<string, { check: Check; optional?: boolean }>): Check {
  return (v, p) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(p, 'an object', v);
    const o = v as Record<string, unknown>;
    if (Object.getPrototypeOf(o) !== Object.prototype && Object.getPrototypeOf(o) !== null) fail(p, 'a plain object', v);
    for (const k of Object.keys(o)) {
      // Own keys only: `k in fields` would take toString, hasOwnProperty, __defineGetter__ … (the
      // literal's prototype) as known fields, which then reach the backend unchecked.
      if (!Object.hasOwn(fields, k) || k === '__proto__' || k === 'constructor' || k === 'prototype') {
        // The refusal names the field sent; its depth is the object's (the shape did not fit).
        throw new ApiValidationError(`${p}: unexpected field '${k}'`, { code: 'input.refused', params: { field: fieldOf(`${p}.${k}`) } }, depthOf(p));
      }
    }
    for (const [k, f] of Object.entries(fields)) {
      if (o[k] === undefined) {
        if (!f.optional) refuse(`${p}.${k}`, 'required');
        continue;
      }
      f.check(o[k], `${p}.${k}`);
    }
  };
}

/**
 * One of the alternatives; a value that fits none is refused naming them (`expected`), with the
 * refusal of the alternative it came nearest to: the one refused deepest in the value (a sign-in's
 * name not valid, not "unexpected field 'user'" of the badge's shape), on a tie one with a code of
 * its own over `input.refused`, else the first.
 */
function union(expected: string, ...alternatives: Check[]): Check {
  return (v, p) => {
    const errors = new Set<string>();
    let nearest: ApiValidationError | undefined;
    const rank = (e: ApiValidationError) => e.depth * 2 + (e.refusal.code === 'input.refused' ? 0 : 1);
    for (const a of alternatives) {
      try {
        a(v, p);
        return;
      } catch (e) {
        errors.add((e as Error).message);
        if (e instanceof ApiValidationError && (!nearest || rank(e) > rank(nearest))) nearest = e;
      }
    }
    const message = `${p}: expected ${expected} (${[...errors].join('; ')})`;
    throw new ApiValidationError(message, nearest?.refusal ?? { code: 'input.refused', params: { field: fieldOf(p) } }, nearest?.depth ?? depthOf(p));
  };
}

const req = (check: Check) => ({ check });
const opt = (check: Check) => ({ check, optional: true });
const empty = object({});
const readPoint = union(
  '{tag}, {snapshotId}, {timestampMs} or {latest: true}',
  object({ tag: req(str(255)) }),
  object({ snapshotId: req(int(1, Number.MAX_SAFE_INTEGER)) }),
  object({ timestampMs: req(int(0, Number.MAX_SAFE_INTEGER)) }),
  object({ latest: req((v, p) => (v === true ? undefined : fail(p, 'true', v))) }),
);
const tableName: Check = (v, p) => {
  str(128)(v, p);
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(v as string)) refuse(p, 'not a table name');
};

// History's `worded`: the few columns of a table the page has words for, each with its handful of
// known values (dead letters' reasons are the most, ten), each as short as such a value is.
const worded = arrayOf(object({ column: req(str(128)), values: req(arrayOf(str(64), 32)) }), 16);

const siteId: Check = (v, p) => {
  str(64)(v, p);
  // The first-run form checks the same pattern before it sends (FirstRun.tsx): only a hand-made request meets this.
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(v as string)) refuse(p, 'not a site id (letters, digits, _ and -, at most 64)');
};
const pin: Check = (v, p) => {
  str(12)(v, p);
  // As the site id: the first-run form's pattern keeps such a PIN from being sent.
  if (!/^[0-9]{4,12}$/.test(v as string)) refuse(p, 'expected 4 to 12 digits');
};

const VALIDATORS: { [M in SiteMethod]: Check } = {
  firstRun: empty,
  initSite: object({ siteId: req(siteId), adminName: req(newName), adminPin: req(pin) }),
  signIn: union('{user, secret} or {badge}', object({ user: req(name), secret: req(str(SECRET_CHARS_MAX)) }), object({ badge: req(str(SECRET_CHARS_MAX)) })),
  signOut: empty,
  me: empty,
  status: empty,
  listProposals: object({ status: opt(arrayOf(oneOf(STATUSES), 6)), limit: opt(int(1, 1000)), order: opt(oneOf(['newest', 'urgency', 'decided'])) }),
  getProposal: object({ id: req(str(128)) }),
  decide: object({ id: req(str(128)), decision: req(oneOf(['approve', 'reject', 'defer'])), comment: opt(freeText(2000)) }),
  // `statuses`: the work queue's stored statuses (a handful), each as short as a status is.
  workQueue: object({ search: opt(str(128)), statuses: opt(arrayOf(str(32), 16)), limit: opt(int(1, 10_000)) }),
  stock: object({ search: opt(str(128)), limit: opt(int(1, 10_000)), below: opt(bool) }),
  configChanges: object({ limit: opt(int(1, 1000)) }),
  setReorderPolicy: object({
    item: req(str(256)),
    location: opt(union('a location or null', isNull, str(256))),
    policy: req(union('{reorderPoint, orderUpTo} or null', isNull, object({ reorderPoint: req(int(0, Number.MAX_SAFE_INTEGER)), orderUpTo: req(int(1, Number.MAX_SAFE_INTEGER)) }))),
  }),
  tables: empty,
  tags: object({ table: req(tableName), search: opt(str(128)), limit: opt(int(1, 10_000)) }),
  history: object({ table: req(tableName), at: req(readPoint), limit: opt(int(1, 10_000)), contains: opt(str(128)), worded: opt(worded) }),
  diff: object({ table: req(tableName), from: req(readPoint), to: req(readPoint), limit: opt(int(1, 10_000)), contains: opt(str(128)), worded: opt(worded) }),
  syncStatus: empty,
  // A dead letter's topic is any the broker took (no_binding letters too): MQTT's own bound on a
  // topic, not a pattern. A reason is one of the closed set core/ingest gives.
  deadLetters: object({ status: opt(oneOf(['open', 'replayed', 'dismissed'])), limit: opt(int(1, DEAD_LETTER_LIST_MAX)), topic: opt(str(TOPIC_MAX)), reason: opt(oneOf(DEAD_LETTER_REASONS)) }),
  deadLetterGroups: empty,
  replayDeadLetters: object({ ids: opt(arrayOf(str(32), 10_000)), alike: opt(bool) }),
  dismissDeadLetters: object({ ids: req(arrayOf(str(32), 10_000)), note: req(freeText(DISMISS_NOTE_MAX)), alike: opt(bool) }),
  users: empty,
  addUser: object({ name: req(newName), roles: req(arrayOf(oneOf(ROLES), 4)), secret: req(str(SECRET_CHARS_MAX)), badge: opt(str(SECRET_CHARS_MAX)) }),
  disableUser: object({ name: req(name) }),
  enableUser: object({ name: req(name) }),
  resetSecret: object({ name: req(name), secret: req(str(SECRET_CHARS_MAX)) }),
  setRoles: object({ name: req(name), roles: req(arrayOf(oneOf(ROLES), 4)) }),
};

export function isSiteMethod(m: unknown): m is SiteMethod {
  return typeof m === 'string' && (SITE_METHODS as readonly string[]).includes(m);
}

/**
 * Checks a call's input age from outside (api.ts `InputAge`): absent, null or 'none', or a whole
 * number of milliseconds (a number, or its decimal digits as a header carries it).
 */
export function validateInputAge(v: unknown): InputAge {
  if (v === undefined) return undefined;
  if (v === null || v === 'none') return null;
  const n = typeof v === 'string' && /^[0-9]{1,15}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new ApiValidationError(`input age: expected 'none' or a whole number of milliseconds ≥ 0, got ${(typeof v === 'string' ? JSON.stringify(v) : String(v)).slice(0, 40)}`, { code: 'input.refused', params: { field: 'inputAge' } });
  }
  return n;
}

/** Checks a call from outside; returns the typed request or throws ApiValidationError. */
export function validateCall<M extends SiteMethod>(method: unknown, request: unknown): { method: M; req: SiteApiMethods[M]['req'] } {
  if (!isSiteMethod(method)) throw new ApiValidationError(`unknown method ${JSON.stringify(String(method)).slice(0, 80)}`, { code: 'input.refused', params: { field: 'method' } });
  VALIDATORS[method](request ?? {}, 'request');
  return { method: method as M, req: (request ?? {}) as SiteApiMethods[M]['req'] };
}

const clientErrorReport = object({
  kind: req(oneOf(['render', 'error', 'rejection'])),
  message: req(str(CLIENT_ERROR_MESSAGE_MAX)),
  stack: opt(str(CLIENT_ERROR_STACK_MAX)),
  screen: opt(str(64)),
  lang: opt(str(16)),
  version: opt(str(64)),
});

/** Checks a client-error report (api.ts ClientErrorReport) from outside; throws ApiValidationError naming the field. */
export function validateClientErrorReport(request: unknown): ClientErrorReport {
  clientErrorReport(request ?? {}, 'request');
  return request as ClientErrorReport;
}
