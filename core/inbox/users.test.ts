// UserStore over a real site.db file: roles, PIN/password/badge sign-in, lockout, disable, names.

import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { guessablePin, isPin, UserError, UserStore, nameProblem } from './users.ts';
import { hashSecret } from './secret-hash.ts';

const FAST = { N: 1 << 10, r: 8, p: 1 }; // the hash's cost is not under test here

let dir: string;
let db: Database.Database;
let now = 1_000_000;
const store = (o = {}) => new UserStore(db, { scrypt: FAST, nowMs: () => now, failuresMax: 3, lockoutMs: 60_000, ...o });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-users-'));
  db = new Database(join(dir, 'site.db'));
  db.pragma('journal_mode = WAL');
  now = 1_000_000;
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('isPin', () => {
  it('takes 4 to 12 digits and nothing else: the edges, letters, spaces, other digits', () => {
    for (const pin of ['1234', '0000', '123456789012']) expect(isPin(pin), pin).toBe(true);
    // 3 and 13 digits; a letter among digits or in place of them; a space or line end around them;
    // digits in another form (fullwidth １, Arabic-Indic ١) are no PIN typed on a floor PC's keypad.
    for (const s of ['123', '1234567890123', '', '12a4', 'abcd', '１２３４', ' 1234', '1234\n', '١٢٣٤']) expect(isPin(s), JSON.stringify(s)).toBe(false);
  });
});

describe('guessablePin', () => {
  it('names a repeated digit and digits in a row, up or down; leaves other PINs and non-PINs alone', () => {
    for (const pin of ['0000', '1111', '999999']) expect(guessablePin(pin), pin).toBe('one digit repeated');
    for (const pin of ['1234', '0123', '23456789', '9876', '43210']) expect(guessablePin(pin), pin).toBe('digits in a row');
    for (const pin of ['1235', '4711', '0451', '2468', '1212', 'abcd', '123']) expect(guessablePin(pin), pin).toBeUndefined();
  });
});

describe('UserStore', () => {
  it('adds users with each role and lists them; refuses unknown roles and duplicates', async () => {
    const u = store();
    for (const role of ['viewer', 'operator', 'shift_lead', 'admin'] as const) await u.add({ name: `u-${role}`, role, pin: '1234' });
    expect(u.list().map((x) => [x.name, x.role])).toEqual([
      ['u-admin', 'admin'],
      ['u-operator', 'operator'],
      ['u-shift_lead', 'shift_lead'],
      ['u-viewer', 'viewer'],
    ]);
    await expect(u.add({ name: 'x', role: 'boss' as never, pin: '1234' })).rejects.toThrow(/role: expected one of viewer, operator, shift_lead, admin/);
    await expect(u.add({ name: 'u-admin', role: 'admin', pin: '1234' })).rejects.toMatchObject({ kind: 'AlreadyExists' });
    await expect(u.add({ name: 'y', role: 'viewer', pin: '12' })).rejects.toThrow(/PIN: expected 4 to 12 digits/);
    await expect(u.add({ name: 'y', role: 'viewer' })).rejects.toThrow(/at least one of a PIN, a password or a badge/);
  });

  it('refuses names with .., slashes or control characters', async () => {
    const u = store();
    for (const bad of ['../etc', 'a/b', 'a\\b', 'tab\there', 'nl\n', '', ' lead']) {
      await expect(u.add({ name: bad, role: 'viewer', pin: '1234' })).rejects.toBeInstanceOf(UserError);
    }
    expect(nameProblem('a..b')).toMatch(/'\.\.'/);
    expect(nameProblem('Åse Nilsen')).toBeUndefined();
  });

  // Every decision names its user: a new name must not pass for another on a screen.
  it.each([
    ['200B', 'zero-width space'],
    ['200E', 'left-to-right mark'],
    ['200F', 'right-to-left mark'],
    ['202A', 'left-to-right embedding'],
    ['202E', 'right-to-left override'],
    ['2066', 'left-to-right isolate'],
    ['2069', 'pop directional isolate'],
    ['FEFF', 'byte order mark'],
    ['00AD', 'soft hyphen'],
    ['2060', 'word joiner'],
    ['3164', 'Hangul filler'],
  ])('refuses a new name with U+%s (%s), naming the character by code point', async (hex) => {
    const ch = String.fromCodePoint(parseInt(hex, 16));
    const code = `U+${hex}`;
    const u = store();
    for (const name of [`anna${ch}`, `${ch}anna`, `an${ch}na`]) {
      const e = await u.add({ name, role: 'viewer', pin: '4826' }).catch((x: unknown) => x);
      expect(e, JSON.stringify(name)).toBeInstanceOf(UserError);
      expect(e).toMatchObject({ kind: 'InvalidArgument', field: 'name', refusal: { code: 'user.nameInvalid', params: { name } } });
      expect((e as Error).message).toContain(`must not contain ${code}, an invisible or direction-changing character`);
    }
    expect(u.count()).toBe(0);
  });

  // "?" is the approver of an approval not on record (APPROVER_NOT_ON_RECORD: a module's ack of a
  // command approved on a site PC that was lost, write-back.ts): a user of that name was recorded
  // as the same actor in decision_log and at HQ. So is "？" (U+FF1F), which a screen shows alike,
  // and so are "?" with a mark on it and the marks that read as "?" (users.ts QUESTION_MARKS), which
  // passed: "?" + U+0301, the glottal stop "ʔ" U+0294 (and "ʡ" U+02A1, with a stroke), the Arabic
  // "؟" U+061F, the Limbu question mark "᥅" U+1945, …
  it.each(['?', '\uFF1F', '\uFE56', '?\u0301', '\uFF1F\u0323', '\u0294', '\u02A1', '\u1945', '\u02C0', '\u0241', '\u061F', '\u2E2E', '\u00BF', '\u2753', '\u2754'])('refuses %j as a new name: the name an approval not on record is made by', async (name) => {
    const u = store();
    const e = await u.add({ name, role: 'shift_lead', pin: '4826' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UserError);
    expect(e).toMatchObject({ kind: 'InvalidArgument', field: 'name', refusal: { code: 'user.nameInvalid', params: { name } } });
    expect((e as Error).message).toContain('must not be "?": the decision log names an approval not on record');
    expect(u.count()).toBe(0);
    // A name with a question mark in it is a name.
    expect(nameProblem('Anna?')).toBeUndefined();
    expect(nameProblem('?a')).toBeUndefined();
  });

  it.each(['00A0', '2000', '2003', '200A', '202F', '205F', '3000', '2028', '1680'])('refuses a new name with the space U+%s in it, naming it by code point', async (hex) => {
    const ch = String.fromCodePoint(parseInt(hex, 16));
    const code = `U+${hex}`;
    await expect(store().add({ name: `Anna${ch}Berg`, role: 'viewer', pin: '4826' })).rejects.toThrow(`must not contain ${code}, a space other than the plain one (U+0020)`);
    expect(nameProblem(`Anna${ch}Berg`)).toMatch(code);
  });

  it('takes names in any script with plain spaces; refuses half of a character pair (SQLite would keep another name)', async () => {
    const u = store();
    for (const name of ['Kåre Ødegård', 'Jürgen Groß', 'Zoë O’Neill', '李小龙', 'محمد علي', 'Ola (night shift)']) {
      expect(nameProblem(name), name).toBeUndefined();
      expect((await u.add({ name, role: 'viewer', pin: '4826' })).name).toBe(name);
    }
    await expect(u.add({ name: 'ann\uD800a', role: 'viewer', pin: '4826' })).rejects.toThrow('must not contain U+D800, half of a character pair');
  });

  it('stores a new name composed (NFC), and finds the user by either form', async () => {
    const u = store();
    const typed = 'A\u030Ase Nilsen'; // Å as A + combining ring, as some keyboards and pastes give it
    const added = await u.add({ name: typed, role: 'operator', pin: '4826' });
    expect(added.name).toBe('\u00C5se Nilsen');
    expect(db.prepare('SELECT name FROM users').pluck().all()).toEqual(['\u00C5se Nilsen']);
    expect(u.get(typed)?.name).toBe('\u00C5se Nilsen');
    expect(await u.verifyPin(typed, '4826')).toMatchObject({ ok: true, user: { name: '\u00C5se Nilsen' } });
    expect(u.disable(typed).disabled).toBe(true);
    expect(u.enable(typed).disabled).toBe(false);
    expect(u.setRole(typed, 'shift_lead').role).toBe('shift_lead');
    expect((await u.resetSecret(typed, { pin: '5937' })).name).toBe('\u00C5se Nilsen');
    expect(await u.verifyPin('\u00C5se Nilsen', '5937')).toMatchObject({ ok: true });
  });

  it('refuses a new name that looks like an existing one (case, composition, invisible characters, spaces), with that user named', async () => {
    const u = store();
    await u.add({ name: 'Anna Berg', role: 'operator', pin: '4826' });
    await u.add({ name: 'Straße', role: 'operator', pin: '4826' });
    for (const like of ['anna berg', 'ANNA BERG', 'Anna  Berg']) {
      await expect(u.add({ name: like, role: 'viewer', pin: '5937' }), like).rejects.toMatchObject({ kind: 'AlreadyExists', field: 'name', refusal: { code: 'user.exists', params: { name: 'Anna Berg' } } });
    }
    await expect(u.add({ name: 'STRASSE', role: 'viewer', pin: '5937' })).rejects.toThrow(`user name "STRASSE" looks like the existing user 'Straße'`);
    // Names an older version took as typed: decomposed, with an invisible character, an odd space.
    const insert = db.prepare("INSERT INTO users (name, role, pin_hash, created_at_ms) VALUES (?, 'operator', NULL, 0)");
    for (const old of ['A\u030Ase', 'ola\u200B', 'per\u00A0hansen']) insert.run(old);
    await expect(u.add({ name: '\u00C5se', role: 'viewer', pin: '5937' })).rejects.toMatchObject({ refusal: { code: 'user.exists', params: { name: 'A\u030Ase' } } });
    await expect(u.add({ name: 'ola', role: 'viewer', pin: '5937' })).rejects.toThrow(`looks like the existing user 'ola<U+200B>'`);
    await expect(u.add({ name: 'Per Hansen', role: 'viewer', pin: '5937' })).rejects.toThrow(`looks like the existing user 'per<U+00A0>hansen'`);
    // Names that only share letters are other users.
    for (const other of ['Anna B', 'Anna Bergh', 'Ola N', 'Ase']) expect((await u.add({ name: other, role: 'viewer', pin: '5937' })).name).toBe(other);
    expect(u.count()).toBe(9);
  });

  // Cyrillic "О" (U+041E) and Greek "Ο" (U+039F) look like Latin "O": "Оla" would read as "Ola".
  it('refuses a word that mixes Latin, Cyrillic and Greek letters, naming them by code point and script; takes names wholly in one script, and words of different scripts side by side', async () => {
    const u = store();
    expect(nameProblem('Оla')).toBe('must not mix scripts in one word: "Оla" has U+041E (Cyrillic) among Latin letters');
    const e = await u.add({ name: 'Оla', role: 'viewer', pin: '4826' }).catch((x: unknown) => x);
    expect(e).toMatchObject({ kind: 'InvalidArgument', field: 'name', refusal: { code: 'user.nameInvalid', params: { name: 'Оla' } } });
    expect((e as Error).message).toBe('user name "Оla": must not mix scripts in one word: "Оla" has U+041E (Cyrillic) among Latin letters');
    // The word named is the one that mixes; its letters of the other scripts, once each.
    expect(nameProblem('Kari Nоrdmаnn-Olsen')).toBe('must not mix scripts in one word: "Nоrdmаnn" has U+043E, U+0430 (Cyrillic) among Latin letters');
    expect(nameProblem('Ανna')).toBe('must not mix scripts in one word: "Ανna" has U+0391, U+03BD (Greek) among Latin letters');
    expect(nameProblem('Олеnа')).toBe('must not mix scripts in one word: "Олеnа" has U+006E (Latin) among Cyrillic letters');
    // Math bold Greek Omicron is a Greek letter once compatibility forms are folded.
    expect(nameProblem('\u{1D6B6}la')).toBe('must not mix scripts in one word: "\u{1D6B6}la" has U+1D6B6 (Greek) among Latin letters');
    expect(u.count()).toBe(0);
    for (const name of ['Олена Петренко', 'Ελένη Παπαδοπούλου', 'Ola Nordmann', 'Olena Петренко', 'Олена (night shift)', 'Мар’яна', 'Jean-Пьер']) {
      expect(nameProblem(name), name).toBeUndefined();
      expect((await u.add({ name, role: 'viewer', pin: '4826' })).name).toBe(name);
    }
  });

  it('refuses a new name in Cyrillic or Greek letters that look like an existing Latin one, and the other way round, with that user named', async () => {
    const u = store();
    for (const name of ['Ola', 'Joe', 'Ivo', 'NOA', 'Toma']) await u.add({ name, role: 'operator', pin: '4826' });
    // All Cyrillic: О, palochka ӏ, а; Ј, о, е. All Greek: capital Iota, small nu, omicron; capital Nu, Omicron, Alpha.
    for (const [like, existing] of [['Оӏа', 'Ola'], ['Јое', 'Joe'], ['ЈОЕ', 'Joe'], ['Ινο', 'Ivo'], ['ΝΟΑ', 'NOA']] as const) {
      expect(nameProblem(like), like).toBeUndefined();
      await expect(u.add({ name: like, role: 'viewer', pin: '5937' }), like).rejects.toMatchObject({ kind: 'AlreadyExists', field: 'name', refusal: { code: 'user.exists', params: { name: existing } } });
    }
    await expect(u.add({ name: 'Јое', role: 'viewer', pin: '5937' })).rejects.toThrow(`user name "Јое" looks like the existing user 'Joe'`);
    // The other way round: the Cyrillic and Greek users came first.
    const v = store();
    db.prepare('DELETE FROM users').run();
    for (const name of ['Јое', 'Ινο']) await v.add({ name, role: 'operator', pin: '4826' });
    for (const [like, existing] of [['Joe', 'Јое'], ['JOE', 'Јое'], ['Ivo', 'Ινο']] as const) {
      await expect(v.add({ name: like, role: 'viewer', pin: '5937' }), like).rejects.toMatchObject({ refusal: { code: 'user.exists', params: { name: existing } } });
    }
    // A small letter whose capital looks Latin does not itself ("м" is no "m"), and two Cyrillic
    // names that differ only in case are still one.
    await v.add({ name: 'Нина', role: 'viewer', pin: '5937' });
    await expect(v.add({ name: 'нина', role: 'viewer', pin: '5937' })).rejects.toMatchObject({ refusal: { code: 'user.exists', params: { name: 'Нина' } } });
    expect((await v.add({ name: 'Toma', role: 'viewer', pin: '5937' })).name).toBe('Toma');
    expect((await v.add({ name: 'Тома', role: 'viewer', pin: '5937' })).name).toBe('Тома');
  });

  it('two adds of look-alike names side by side: one is refused, though each was free when its hash began', async () => {
    const u = store();
    const results = await Promise.allSettled([u.add({ name: 'Anna', role: 'viewer', pin: '4826' }), u.add({ name: 'anna', role: 'viewer', pin: '5937' })]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { refusal: { code: 'user.exists' } } });
    expect(u.count()).toBe(1);
  });

  it('a user whose name an older version took (invisible characters, odd spaces) still signs in and is managed after the upgrade', async () => {
    // Rows as an older UserStore wrote them, before the stricter rule: inserted as it inserted
    // them, then site.db opened again as the new version opens it.
    store();
    const pinHash = await hashSecret('4826', FAST);
    const insert = db.prepare("INSERT INTO users (name, role, pin_hash, created_at_ms) VALUES (?, 'operator', ?, 0)");
    const old = ['anna\u200B', '\u202Eanna', 'per\u00A0hansen', 'A\u030Ase'];
    for (const name of old) insert.run(name, pinHash);
    const u = store();
    expect(u.list().map((x) => x.name).sort()).toEqual([...old].sort());
    for (const name of old) {
      expect(nameProblem(name) === undefined, JSON.stringify(name)).toBe(name === 'A\u030Ase');
      expect(await u.verifyPin(name, '4826'), JSON.stringify(name)).toMatchObject({ ok: true, user: { name } });
      expect(u.disable(name).disabled).toBe(true);
      expect(await u.verifyPin(name, '4826')).toEqual({ ok: false, reason: 'disabled' });
      expect(u.enable(name).disabled).toBe(false);
      expect(u.setRole(name, 'shift_lead').role).toBe('shift_lead');
      expect((await u.resetSecret(name, { pin: '5937' })).name).toBe(name);
      expect(await u.verifyPin(name, '5937')).toMatchObject({ ok: true, user: { name } });
    }
  });

  it('a user whose name an older version took with mixed scripts in a word still signs in and is managed', async () => {
    store();
    const pinHash = await hashSecret('4826', FAST);
    db.prepare("INSERT INTO users (name, role, pin_hash, created_at_ms) VALUES (?, 'operator', ?, 0)").run('Оla', pinHash);
    const u = store();
    expect(nameProblem('Оla')).toMatch(/must not mix scripts in one word/);
    expect(await u.verifyPin('Оla', '4826')).toMatchObject({ ok: true, user: { name: 'Оla' } });
    expect(u.disable('Оla').disabled).toBe(true);
    expect(await u.verifyPin('Оla', '4826')).toEqual({ ok: false, reason: 'disabled' });
    expect(u.enable('Оla').disabled).toBe(false);
    expect(u.setRole('Оla', 'shift_lead').role).toBe('shift_lead');
    expect((await u.resetSecret('Оla', { pin: '5937' })).name).toBe('Оla');
    expect(await u.verifyPin('Оla', '5937')).toMatchObject({ ok: true, user: { name: 'Оla' } });
    // And the Latin name it looks like is not given to a new user.
    await expect(u.add({ name: 'Ola', role: 'viewer', pin: '5937' })).rejects.toMatchObject({ refusal: { code: 'user.exists', params: { name: 'Оla' } } });
  });

  // Sign-in checks a PIN-like secret (4–12 digits) as the PIN whenever the user has one (core/site
  // service.ts), so a password of 8–12 digits beside a PIN (`tilstand users add --pin --password`)
  // was stored and never signed in: each try counted as a wrong PIN, five locked the user.
  it('refuses a password of digits only, PIN-like, beside a PIN: sign-in would take it for the PIN', async () => {
    const u = store();
    await expect(u.add({ name: 'kari', role: 'shift_lead', pin: '4711', password: '20261207' })).rejects.toMatchObject({ kind: 'InvalidArgument', field: 'password' });
    expect(u.get('kari')).toBeUndefined();
    // Alone, or with a letter in it, or longer than a PIN, it is a password as any.
    await u.add({ name: 'per', role: 'operator', password: '20261207' });
    await u.add({ name: 'ola', role: 'operator', pin: '4711', password: '2026120x' });
    await u.add({ name: 'eva', role: 'operator', pin: '4711', password: '2026120720261207' });
    expect(await u.verifyPassword('eva', '2026120720261207')).toMatchObject({ ok: true });
  });

  it('verifies PINs and passwords, and stores neither in plaintext', async () => {
    const u = store();
    await u.add({ name: 'kari', role: 'shift_lead', pin: '4711', password: 'correct horse' });
    expect(await u.verifyPin('kari', '4711')).toMatchObject({ ok: true, user: { name: 'kari', role: 'shift_lead' } });
    expect(await u.verifyPassword('kari', 'correct horse')).toMatchObject({ ok: true });
    expect(await u.verifyPin('kari', '0000')).toMatchObject({ ok: false, reason: 'wrong', failuresLeft: 2 });
    expect(await u.verifyPin('nobody', '4711')).toEqual({ ok: false, reason: 'wrong', failuresLeft: 2 });
    db.pragma('wal_checkpoint(TRUNCATE)');
    const bytes = readFileSync(join(dir, 'site.db')).toString('latin1');
    expect(bytes).not.toContain('4711');
    expect(bytes).not.toContain('correct horse');
    expect(bytes).toContain('scrypt$');
  });

  it('answers an unknown name, and a user without that secret, as it answers a wrong PIN: the same count down, the same lockout', async () => {
    const u = store();
    await u.add({ name: 'kari', role: 'shift_lead', pin: '4711' });
    await u.add({ name: 'per', role: 'operator', badge: 'RFID-00A1B2C3' }); // no PIN
    const attempts = async (name: string) => {
      const out = [];
      for (let k = 0; k < 5; k++) out.push(await u.verifyPin(name, '0000'));
      return out;
    };
    const real = await attempts('kari');
    expect(real.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['wrong', 'wrong', 'locked', 'locked', 'locked']);
    expect(await attempts('nobody')).toEqual(real);
    expect(await attempts('per')).toEqual(real);
    // Neither kept anything in site.db, and the user without a PIN was not locked by it.
    expect(u.get('per')!.lockedUntilMs).toBeNull();
    expect(await u.signInWithBadge('RFID-00A1B2C3')).toMatchObject({ ok: true });
    // After the lockout the unknown name counts again from the start, as a user would.
    now += 60_001;
    expect(await u.verifyPin('nobody', '0000')).toEqual({ ok: false, reason: 'wrong', failuresLeft: 2 });
    // Side by side too: each attempt is answered by its own count, as a user's is.
    now += 60_001;
    const together = async (name: string) => (await Promise.all([u.verifyPin(name, '1234'), u.verifyPin(name, '5678')])).map((r) => JSON.stringify(r)).sort();
    const realTogether = await together('kari');
    expect(realTogether).toEqual([JSON.stringify({ ok: false, reason: 'wrong', failuresLeft: 1 }), JSON.stringify({ ok: false, reason: 'wrong', failuresLeft: 2 })]);
    expect(await together('ghost')).toEqual(realTogether);
  });

  it('locks a user after failuresMax wrong PINs for lockoutMs, then lets them in again', async () => {
    const u = store();
    await u.add({ name: 'ola', role: 'operator', pin: '2468' });
    expect(await u.verifyPin('ola', '0000')).toMatchObject({ reason: 'wrong', failuresLeft: 2 });
    expect(await u.verifyPin('ola', '0000')).toMatchObject({ reason: 'wrong', failuresLeft: 1 });
    expect(await u.verifyPin('ola', '0000')).toEqual({ ok: false, reason: 'locked', lockedUntilMs: now + 60_000 });
    // Even the right PIN is refused while locked.
    expect(await u.verifyPin('ola', '2468')).toMatchObject({ ok: false, reason: 'locked' });
    expect(u.get('ola')!.lockedUntilMs).toBe(now + 60_000);
    now += 60_001;
    expect(await u.verifyPin('ola', '2468')).toMatchObject({ ok: true });
    expect(u.get('ola')!.lockedUntilMs).toBeNull();
    // A success resets the count.
    await u.verifyPin('ola', '0000');
    await u.verifyPin('ola', '2468');
    expect(await u.verifyPin('ola', '0000')).toMatchObject({ reason: 'wrong', failuresLeft: 2 });
  });

  // locked_until_ms is on the wall clock: a clock stepped back (NTP, by hand) lengthened a lockout
  // by the step, an hour back an hour more. The lockout now ends after lockoutMs of real time (the
  // monotonic clock) in the process that sees it; after a restart, where no monotonic time carries
  // over, by the wall clock but never more than lockoutMs from then.
  describe('a lockout and a clock stepped back', () => {
    let mono = 0;
    const stepped = () => store({ monotonicMs: () => mono });

    it('ends after lockoutMs of real time, whatever the wall clock did meanwhile; a restart then does not bring it back', async () => {
      mono = 5_000;
      const u = stepped();
      await u.add({ name: 'ola', role: 'operator', pin: '2468' });
      for (let i = 0; i < 3; i++) await u.verifyPin('ola', '0000');
      await u.verifyPin('ghost', '0000'); // a name that is no user: counted in memory
      await u.verifyPin('ghost', '0000');
      expect(await u.verifyPin('ghost', '0000')).toMatchObject({ reason: 'locked' });
      now -= 3600_000; // the clock set back an hour
      mono += 30_000;
      expect(await u.verifyPin('ola', '2468')).toEqual({ ok: false, reason: 'locked', lockedUntilMs: now + 30_000 });
      expect(u.get('ola')!.lockedUntilMs).toBe(now + 30_000);
      now += 30_001;
      mono += 30_001;
      expect(u.get('ola')!.lockedUntilMs).toBeNull();
      expect(await u.verifyPin('ghost', '0000')).toMatchObject({ reason: 'wrong', failuresLeft: 2 });
      // Ended, though site.db said an hour more: a restart (a new store, its monotonic clock anew) keeps it ended.
      mono = 0;
      expect(stepped().get('ola')!.lockedUntilMs).toBeNull();
      expect(await stepped().verifyPin('ola', '2468')).toMatchObject({ ok: true });
    });

    it('survives a restart; one after a clock set back while the site was off lasts at most lockoutMs more', async () => {
      const u = stepped();
      await u.add({ name: 'ola', role: 'operator', pin: '2468' });
      await u.add({ name: 'per', role: 'operator', pin: '1357' });
      for (let i = 0; i < 3; i++) await u.verifyPin('ola', '0000');
      now += 20_000;
      // A restart: the lockout holds, with the rest last counted (no process looked at it in these
      // 20 s, so they are not counted: the whole lockout).
      mono = 0;
      expect(stepped().get('ola')!.lockedUntilMs).toBe(now + 60_000);
      for (let i = 0; i < 3; i++) await stepped().verifyPin('per', '0000');
      // Off, the clock set back an hour, started again: locked lockoutMs from the start, not an hour more.
      now -= 3600_000;
      mono = 0;
      const restarted = stepped();
      expect(restarted.get('per')!.lockedUntilMs).toBe(now + 60_000);
      now += 60_001;
      mono += 60_001;
      expect(await restarted.verifyPin('per', '1357')).toMatchObject({ ok: true });
    });
    it('a clock stepped forward while the site was off does not end it early: the rest the site counted carries over', async () => {
      mono = 0;
      const u = stepped();
      await u.add({ name: 'ola', role: 'operator', pin: '2468' });
      for (let i = 0; i < 3; i++) await u.verifyPin('ola', '0000');
      now += 20_000;
      mono += 20_000;
      expect(u.get('ola')!.lockedUntilMs).toBe(now + 40_000); // counted: 40 s left
      // Off; the clock stepped a day forward (NTP at boot); started again.
      now += 86_400_000;
      mono = 0;
      const restarted = stepped();
      expect(restarted.get('ola')!.lockedUntilMs).toBe(now + 40_000);
      expect(await restarted.verifyPin('ola', '2468')).toMatchObject({ ok: false, reason: 'locked' });
      now += 40_001;
      mono += 40_001;
      expect(await restarted.verifyPin('ola', '2468')).toMatchObject({ ok: true });
    });
    // The rest is written back to site.db when a process looks; every look wrote (a locked user's
    // tries, a users list each millisecond later than the last), where a look at a lockout wrote
    // nothing before: guesses sent at a locked user made one site.db write each.
    it('looks at a lockout write its rest to site.db at most about once a second, however many', async () => {
      mono = 0;
      const u = stepped();
      await u.add({ name: 'ola', role: 'operator', pin: '2468' });
      for (let i = 0; i < 3; i++) await u.verifyPin('ola', '0000');
      const changes = () => Number(db.prepare('SELECT total_changes()').pluck().get());
      const before = changes();
      for (let i = 0; i < 400; i++) {
        mono += 5; // 400 tries in 2 s
        expect(await u.verifyPin('ola', '2468')).toMatchObject({ reason: 'locked' });
        u.list();
      }
      expect(changes() - before).toBeLessThanOrEqual(3);
      // What was written still carries over a restart, to within the second.
      now += 2_000;
      const restarted = store({ monotonicMs: () => 0 });
      expect(restarted.get('ola')!.lockedUntilMs).toBeGreaterThanOrEqual(now + 58_000);
      expect(restarted.get('ola')!.lockedUntilMs).toBeLessThanOrEqual(now + 59_000);
    });

    // The write-back is a record for a restart, not what the answer rests on: site.db refusing
    // writes for a moment (a full disk, another process's write, a read-only remount) made a
    // locked user's sign-in and the users list throw, where they only read before.
    it('a site.db that refuses writes for a moment does not make a look at a lockout fail', async () => {
      mono = 0;
      const u = stepped();
      await u.add({ name: 'ola', role: 'operator', pin: '2468' });
      for (let i = 0; i < 3; i++) await u.verifyPin('ola', '0000');
      db.pragma('query_only = ON');
      try {
        mono += 20_000;
        expect(u.get('ola')!.lockedUntilMs).toBe(now + 40_000);
        expect(u.list().map((x) => x.lockedUntilMs)).toEqual([now + 40_000]);
        expect(await u.verifyPin('ola', '2468')).toMatchObject({ ok: false, reason: 'locked' });
        mono += 40_001; // ended, its end not written
        expect(u.get('ola')!.lockedUntilMs).toBeNull();
      } finally {
        db.pragma('query_only = OFF');
      }
      // Writes taken again: the next look clears it in site.db, and the right PIN signs in.
      expect(u.get('ola')!.lockedUntilMs).toBeNull();
      expect(db.prepare("SELECT locked_until_ms FROM users WHERE name = 'ola'").pluck().get()).toBeNull();
      expect(await u.verifyPin('ola', '2468')).toMatchObject({ ok: true });
    });
  });

  it('guesses sent side by side count before their hashes finish: no more than failuresMax run, and the right one among them does not lift the lockout', async () => {
    const u = store();
    await u.add({ name: 'lena', role: 'shift_lead', pin: '4711' });
    // 20 wrong guesses and the right one in flight at once (an HTTP client can send them so).
    const guesses = [...Array.from({ length: 20 }, (_, k) => String(1000 + k)), '4711'];
    const results = await Promise.all(guesses.map((g) => u.verifyPin('lena', g)));
    expect(results.filter((r) => r.ok)).toEqual([]);
    // The fourth attempt found three counted and started the lockout; the three in flight then
    // found the user locked.
    expect(results.every((r) => !r.ok && r.reason === 'locked')).toBe(true);
    expect(u.get('lena')!.lockedUntilMs).toBe(now + 60_000);
    expect(await u.verifyPin('lena', '4711')).toMatchObject({ ok: false, reason: 'locked' });
  });

  it('a user disabled while their PIN is hashed does not sign in with it', async () => {
    const u = store();
    await u.add({ name: 'gone', role: 'shift_lead', pin: '4711' });
    const pending = u.verifyPin('gone', '4711');
    u.disable('gone');
    expect(await pending).toEqual({ ok: false, reason: 'disabled' });
  });

  it('signs in by badge, refuses a badge used twice, and disabled users by any means', async () => {
    const u = store();
    await u.add({ name: 'per', role: 'operator', badge: 'RFID-00A1B2C3' });
    await u.add({ name: 'lise', role: 'viewer', pin: '1357', badge: 'RFID-FFEE' });
    expect(await u.signInWithBadge('RFID-00A1B2C3')).toMatchObject({ ok: true, user: { name: 'per' } });
    expect(await u.signInWithBadge('RFID-nope')).toEqual({ ok: false, reason: 'unknown', failuresLeft: 2 });
    await expect(u.add({ name: 'eve', role: 'admin', badge: 'RFID-FFEE' })).rejects.toMatchObject({ kind: 'AlreadyExists', field: 'badge' });
    u.disable('lise');
    expect(await u.signInWithBadge('RFID-FFEE')).toEqual({ ok: false, reason: 'disabled' });
    expect(await u.verifyPin('lise', '1357')).toEqual({ ok: false, reason: 'disabled' });
    expect(u.get('lise')).toMatchObject({ disabled: true, hasBadge: true, hasPin: true });
    expect(() => u.disable('ghost')).toThrow(/does not exist/);
    // Enabled again (back from leave): the same PIN and badge work; the name was never free.
    expect(u.enable('lise').disabled).toBe(false);
    expect(await u.verifyPin('lise', '1357')).toMatchObject({ ok: true });
    expect(() => u.enable('nobody')).toThrow(/user 'nobody' does not exist/);
    // The badge salt survives reopening: the same badge still finds its user.
    expect(await store().signInWithBadge('RFID-00A1B2C3')).toMatchObject({ ok: true });
  });

  it('failuresMax unknown badges in a row from one source stop badge sign-in from that source for lockoutMs; no user is locked, other sources go on', async () => {
    const u = store();
    await u.add({ name: 'per', role: 'operator', pin: '2468', badge: 'RFID-00A1B2C3' });
    expect(await u.signInWithBadge('RFID-guess-1', 'reader-2')).toEqual({ ok: false, reason: 'unknown', failuresLeft: 2 });
    expect(await u.signInWithBadge('RFID-guess-2', 'reader-2')).toEqual({ ok: false, reason: 'unknown', failuresLeft: 1 });
    expect(await u.signInWithBadge('RFID-guess-3', 'reader-2')).toEqual({ ok: false, reason: 'locked', lockedUntilMs: now + 60_000 });
    // The right badge too, from that source (else the lockout would still tell right from wrong).
    expect(await u.signInWithBadge('RFID-00A1B2C3', 'reader-2')).toMatchObject({ ok: false, reason: 'locked' });
    // Another source, the user's PIN, the user's record: untouched.
    expect(await u.signInWithBadge('RFID-00A1B2C3', 'reader-1')).toMatchObject({ ok: true, user: { name: 'per' } });
    expect(await u.verifyPin('per', '2468')).toMatchObject({ ok: true });
    expect(u.get('per')!.lockedUntilMs).toBeNull();
    now += 60_001;
    expect(await u.signInWithBadge('RFID-00A1B2C3', 'reader-2')).toMatchObject({ ok: true });
    // A right badge resets the count.
    await u.signInWithBadge('RFID-guess-4', 'reader-2');
    await u.signInWithBadge('RFID-00A1B2C3', 'reader-2');
    expect(await u.signInWithBadge('RFID-guess-5', 'reader-2')).toMatchObject({ reason: 'unknown', failuresLeft: 2 });
    // Sent side by side: no more than failuresMax are hashed, and the right one among them does not get in.
    const guesses = [...Array.from({ length: 20 }, (_, k) => `RFID-x${k}`), 'RFID-00A1B2C3'];
    const results = await Promise.all(guesses.map((g) => u.signInWithBadge(g, 'reader-3')));
    expect(results.every((r) => !r.ok && r.reason === 'locked')).toBe(true);
  });

  it('records every reset of a PIN or password, later than the one before whatever the clock did; an old site.db gets the column', async () => {
    // A site.db from before the column: its users stay, with no reset recorded.
    db.exec(`CREATE TABLE users (name TEXT PRIMARY KEY, role TEXT NOT NULL, pin_hash TEXT, password_hash TEXT, badge_hash TEXT UNIQUE,
      disabled INTEGER NOT NULL DEFAULT 0, failed_attempts INTEGER NOT NULL DEFAULT 0, locked_until_ms INTEGER, created_at_ms INTEGER NOT NULL, last_sign_in_ms INTEGER)`);
    db.prepare("INSERT INTO users (name, role, created_at_ms) VALUES ('old', 'viewer', 1)").run();
    const u = store();
    store(); // a second opener (the CLI beside the site) finds the column there
    expect(u.get('old')).toMatchObject({ name: 'old', secretChangedMs: null });
    await u.add({ name: 'kari', role: 'shift_lead', pin: '4711' });
    expect(u.get('kari')!.secretChangedMs).toBeNull();
    expect((await u.resetSecret('kari', { pin: '4826' })).secretChangedMs).toBe(now);
    expect((await u.resetSecret('kari', { password: 'correct horse' })).secretChangedMs).toBe(now + 1);
    now -= 60_000; // the clock set back
    expect((await u.resetSecret('kari', { pin: '5937' })).secretChangedMs).toBe(now + 60_002);
    expect((await u.verifyPin('kari', '5937'))).toMatchObject({ ok: true, user: { secretChangedMs: now + 60_002 } });
  });

  it('a reset leaves the user only the secret it gave: a password ends the PIN, a PIN the password; the badge stays', async () => {
    const u = store();
    await u.add({ name: 'kari', role: 'operator', pin: '4711' });
    await u.add({ name: 'per', role: 'operator', pin: '4711', password: 'old password', badge: 'RFID-0042' });
    expect(await u.resetSecret('kari', { password: 'new password' })).toMatchObject({ hasPin: false, hasPassword: true });
    expect(await u.verifyPin('kari', '4711')).toMatchObject({ ok: false, reason: 'wrong' });
    expect(await u.verifyPassword('kari', 'new password')).toMatchObject({ ok: true });
    expect(await u.resetSecret('per', { password: 'new password' })).toMatchObject({ hasPin: false, hasPassword: true, hasBadge: true });
    expect(await u.verifyPin('per', '4711')).toMatchObject({ ok: false, reason: 'wrong' });
    expect(await u.verifyPassword('per', 'old password')).toMatchObject({ ok: false, reason: 'wrong' });
    expect(await u.verifyPassword('per', 'new password')).toMatchObject({ ok: true });
    // The reverse.
    expect(await u.resetSecret('per', { pin: '5937' })).toMatchObject({ hasPin: true, hasPassword: false, hasBadge: true });
    expect(await u.verifyPassword('per', 'new password')).toMatchObject({ ok: false, reason: 'wrong' });
    expect(await u.verifyPin('per', '5937')).toMatchObject({ ok: true });
    expect(await u.signInWithBadge('RFID-0042')).toMatchObject({ ok: true, user: { name: 'per' } });
  });

  it('records every disable, later than the one before whatever the clock did; an old site.db gets the column', async () => {
    db.exec(`CREATE TABLE users (name TEXT PRIMARY KEY, role TEXT NOT NULL, pin_hash TEXT, password_hash TEXT, badge_hash TEXT UNIQUE,
      disabled INTEGER NOT NULL DEFAULT 0, failed_attempts INTEGER NOT NULL DEFAULT 0, locked_until_ms INTEGER, created_at_ms INTEGER NOT NULL, last_sign_in_ms INTEGER)`);
    db.prepare("INSERT INTO users (name, role, created_at_ms) VALUES ('old', 'viewer', 1)").run();
    const u = store();
    store();
    expect(u.get('old')).toMatchObject({ name: 'old', disabledAtMs: null, secretChangedMs: null });
    await u.add({ name: 'kari', role: 'shift_lead', pin: '4711' });
    expect(u.get('kari')!.disabledAtMs).toBeNull();
    expect(u.disable('kari').disabledAtMs).toBe(now);
    // Enabled again, the mark stays: sessions from before the disable stay ended (core/site).
    expect(u.enable('kari')).toMatchObject({ disabled: false, disabledAtMs: now });
    expect(u.disable('kari').disabledAtMs).toBe(now + 1);
    now -= 60_000;
    expect(u.disable('kari').disabledAtMs).toBe(now + 60_002);
    expect(u.get('kari')!.secretChangedMs).toBeNull();
  });

  it('an old PIN whose check was under way when an admin reset it does not sign in', async () => {
    const u = store();
    await u.add({ name: 'kari', role: 'shift_lead', pin: '4711' });
    // The old PIN hashed slowly (its parameters are in the hash), the new one quickly by another
    // UserStore (the CLI beside the site): the reset lands while the old PIN is checked.
    db.prepare("UPDATE users SET pin_hash = ? WHERE name = 'kari'").run(await hashSecret('4711', { N: 1 << 15, r: 8, p: 1 }));
    const check = u.verifyPin('kari', '4711');
    await store().resetSecret('kari', { pin: '4826' });
    expect(await check).toEqual({ ok: false, reason: 'wrong', failuresLeft: 2 });
    expect(await u.verifyPin('kari', '4826')).toMatchObject({ ok: true });
  });

  it('hashes with the slow default parameters unless told otherwise', async () => {
    const u = new UserStore(db);
    await u.add({ name: 'slow', role: 'viewer', pin: '9999' });
    const h = db.prepare('SELECT pin_hash FROM users').pluck().get() as string;
    expect(h).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await u.verifyPin('slow', '9999')).toMatchObject({ ok: true });
  });
});
