// Why the site ended a session (core/site/api.ts RefusalCode `session.ended`), the user store's
// refusals (`user.*`) and config.json refusing a reorder point (`reorder.levels`,
// `config.refused`) in the reader's language: worded in en, nb and de, and the site's English
// message for a code without the params it needs. Through the real client,
// store and screens (server-side markup) where a person meets them.
import { describe, expect, it } from 'vitest';
import type { ApiErrorBody } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { SignIn } from '../screens/SignIn.tsx';
import { refusalText } from './messages.ts';
import { errorLine, storeRefusing } from './refusal-testing.ts';

describe('why the site ended the session, on the sign-in screen', () => {
  it('words a user disabled since the sign-in in en, nb and de', async () => {
    const error: ApiErrorBody = { kind: 'unauthenticated', message: 'user Ada can no longer sign in (disabled); sign in again', code: 'session.ended', params: { user: 'Ada', why: 'disabled' } };
    const store = storeRefusing('setReorderPolicy', error);
    expect(await store.getState().setReorderPolicy('BOLT', null, { reorderPoint: 5, orderUpTo: 20 })).toBe(false);
    expect(store.getState().user).toBeNull();
    expect(errorLine(store, 'nb', SignIn)).toBe('Ada ble logget ut: brukeren er deaktivert. Logg inn igjen');
    expect(errorLine(store, 'de', SignIn)).toBe('Ada wurde abgemeldet: der Benutzer wurde deaktiviert. Bitte erneut anmelden');
    expect(errorLine(store, 'en', SignIn)).toBe('Ada was signed out: the user has been disabled. Sign in again');
  });

  it('words the other reasons, and falls back to the message for a reason or params it does not know', () => {
    const ended = (why: string, extra: Record<string, number> = {}) => ({ message: 'the English text', code: 'session.ended', params: { user: 'Ada', why, ...extra } });
    expect(refusalText('nb', ended('locked'))).toBe('Ada ble logget ut: brukeren er sperret etter for mange feil forsøk. Logg inn igjen');
    expect(refusalText('de', ended('removed'))).toBe('Ada wurde abgemeldet: den Benutzer gibt es nicht mehr. Bitte erneut anmelden');
    expect(refusalText('nb', ended('secretReset'))).toBe('Ada ble logget ut: PIN-en eller passordet ble tilbakestilt etter denne innloggingen. Logg inn igjen');
    expect(refusalText('de', ended('idle', { idleMs: 600_000 }))).toMatch(/^Ada wurde nach 10 .* ohne Benutzung des Bildschirms abgemeldet/);
    expect(refusalText('nb', ended('idle'))).toBe('the English text');
    expect(refusalText('nb', ended('fired'))).toBe('the English text');
    expect(refusalText('de', { message: 'the English text', code: 'session.ended', params: { why: 'disabled' } })).toBe('the English text');
  });
});

describe("the user store's refusals, on the users screen's error line", () => {
  it('words a password too short in en, nb and de', async () => {
    const error: ApiErrorBody = { kind: 'invalid', message: 'password: expected 8 to 256 characters', code: 'user.passwordLength', params: { min: 8, max: 256 } };
    const store = storeRefusing('addUser', error);
    store.setState({ screen: 'users' });
    expect(await store.getState().addUser('Nils', ['operator'], 'abc')).toBe(false);
    expect(errorLine(store, 'nb', App)).toBe('Et passord har 8 til 256 tegn');
    expect(errorLine(store, 'de', App)).toBe('Ein Passwort hat 8 bis 256 Zeichen');
    expect(errorLine(store, 'en', App)).toBe('A password has 8 to 256 characters');
  });

  it('words each of the others, and falls back to the message without their params', () => {
    const r = (code: string, params?: Record<string, string | number>) => ({ message: 'the English text', code, ...(params ? { params } : {}) });
    expect(refusalText('nb', r('user.nameInvalid', { name: 'a..b' }))).toMatch(/^Brukernavnet a\.\.b kan ikke brukes: 1 til 64 tegn/);
    expect(refusalText('de', r('user.noSecret', { name: 'Pia' }))).toBe('Benutzer Pia: eine PIN, ein Passwort oder einen Ausweis angeben');
    expect(refusalText('nb', r('user.roleInvalid', { role: 'boss' }))).toBe('Rollen boss finnes ikke');
    expect(refusalText('de', r('user.pinInvalid', { min: 4, max: 12 }))).toBe('Eine PIN hat 4 bis 12 Ziffern');
    expect(refusalText('nb', r('user.badgeLength', { min: 4, max: 256 }))).toBe('Et kort har 4 til 256 tegn');
    expect(refusalText('de', r('user.badgeTaken'))).toBe('Dieser Ausweis gehört schon einem anderen Benutzer');
    expect(refusalText('nb', r('user.notFound', { name: 'Nobody' }))).toBe('Brukeren Nobody finnes ikke');
    for (const code of ['user.nameInvalid', 'user.noSecret', 'user.roleInvalid', 'user.pinInvalid', 'user.badgeLength', 'user.notFound', 'user.passwordLength']) {
      expect(refusalText('nb', r(code)), code).toBe('the English text');
    }
  });
});

describe('config.json refusing a reorder point, on the stock screen’s error line', () => {
  it('words levels the wrong way round, for an item and for a location of it', async () => {
    const error: ApiErrorBody = {
      kind: 'invalid',
      message: 'config agent.reorderByItem.BOLT: expected orderUpTo > reorderPoint, got 10 ≤ 50',
      code: 'reorder.levels',
      params: { item: 'BOLT', reorderPoint: 50, orderUpTo: 10 },
    };
    const store = storeRefusing('setReorderPolicy', error);
    store.setState({ screen: 'stock' });
    expect(await store.getState().setReorderPolicy('BOLT', null, { reorderPoint: 50, orderUpTo: 10 })).toBe(false);
    expect(errorLine(store, 'nb', App)).toBe('BOLT: «Bestill opp til» (10) må være større enn bestillingspunktet (50)');
    expect(errorLine(store, 'de', App)).toBe('BOLT: „Auffüllen bis“ (10) muss größer sein als der Meldebestand (50)');
    expect(errorLine(store, 'en', App)).toBe('BOLT: “Order up to” (10) must be more than the reorder point (50)');
    const at = { message: 'x', code: 'reorder.levels', params: { item: 'BOLT', location: 'A-01', reorderPoint: 7, orderUpTo: 7 } };
    expect(refusalText('nb', at)).toBe('BOLT på A-01: «Bestill opp til» (7) må være større enn bestillingspunktet (7)');
    expect(refusalText('de', { ...at, params: { item: 'BOLT' } })).toBe('x');
  });

  it('words a key of config.json that does not validate', () => {
    const r = { message: 'config agent.reorderByItem.NUT: expected orderUpTo > reorderPoint, got 2 ≤ 5', code: 'config.refused', params: { key: 'agent.reorderByItem.NUT' } };
    expect(refusalText('nb', r)).toBe('Ikke lagret: stedets innstillingsfil (config.json) har en feil ved agent.reorderByItem.NUT; spør IT');
    expect(refusalText('de', r)).toBe('Nicht gespeichert: die Einstellungsdatei des Standorts (config.json) hat einen Fehler bei agent.reorderByItem.NUT; bitte die IT fragen');
    expect(refusalText('de', { ...r, params: {} })).toBe(r.message);
  });
});
