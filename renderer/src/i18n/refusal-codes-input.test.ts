// What the site refuses in a request before it looks at it (core/site api-validate.ts: the
// `input.*` codes, with the field and the limit), and config.json that is no settings file at all
// (`config.file`), in the reader's language: worded in en, nb and de (never the site's message,
// written for logs: "request.user: not a user name: …"), and the English message for a code
// without the params it needs. Through the real client,
// store and screens (server-side markup) where a person meets them; the bodies are as the site
// sends them (core/site/api-validate.test.ts, refusal-codes-session-user.test.ts).
import { describe, expect, it } from 'vitest';
import type { ApiErrorBody } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { FirstRun } from '../screens/FirstRun.tsx';
import { SignIn } from '../screens/SignIn.tsx';
import { formatNumber, refusalText } from './messages.ts';
import { errorLine, storeRefusing } from './refusal-testing.ts';

const MAX = Number.MAX_SAFE_INTEGER;

describe('a user name the site does not take (input.name)', () => {
  const error: ApiErrorBody = {
    kind: 'invalid',
    message: "request: expected {user, secret} or {badge} (request.user: not a user name: must not contain a slash; request: unexpected field 'user')",
    code: 'input.name',
    params: { field: 'user', max: 64 },
  };

  it('on the sign-in screen: worded in en, nb and de, not with the site’s message', async () => {
    const store = storeRefusing('signIn', error);
    store.setState({ user: null });
    await store.getState().signIn('Ola/Per', '2580');
    expect(errorLine(store, 'nb', SignIn)).toBe('Brukernavn: 1 til 64 tegn, uten / eller \\, .., kontrolltegn, usynlige tegn, andre mellomrom enn det vanlige, mellomrom først eller sist, eller ord som blander latinske, kyrilliske og greske bokstaver');
    expect(errorLine(store, 'de', SignIn)).toBe('Benutzername: 1 bis 64 Zeichen, ohne / oder \\, .., Steuerzeichen, unsichtbare Zeichen, andere Leerzeichen als das normale, Leerzeichen am Anfang oder Ende oder Wörter, die lateinische, kyrillische und griechische Buchstaben mischen');
    // The English shift lead who typed "Ola/Per" reads the rule, not the site's validator.
    expect(errorLine(store, 'en', SignIn)).toBe('User name: 1 to 64 characters, without / or \\, .., control characters, invisible characters, spaces other than the plain one, a space at the start or end, or a word that mixes Latin, Cyrillic and Greek letters');
  });

  it('on the first-run screen (the first admin’s name) and the users screen (a new user’s)', async () => {
    const first = storeRefusing('initSite', { kind: 'invalid', message: 'request.adminName: not a user name: expected at most 64 characters, got 65', code: 'input.name', params: { field: 'adminName', max: 64 } });
    first.setState({ firstRun: { initialized: false, siteId: null, restoredSite: null }, user: null });
    await first.getState().initSite('osl1', 'a'.repeat(65), '4826');
    expect(errorLine(first, 'nb', FirstRun)).toMatch(/^Brukernavn: 1 til 64 tegn, uten \/ eller/);
    expect(errorLine(first, 'de', FirstRun)).toMatch(/^Benutzername: 1 bis 64 Zeichen/);
    expect(errorLine(first, 'en', FirstRun)).toMatch(/^User name: 1 to 64 characters, without \/ or/);

    const users = storeRefusing('addUser', { kind: 'invalid', message: 'request.name: not a user name: must not contain a slash', code: 'input.name', params: { field: 'name', max: 64 } });
    users.setState({ screen: 'users' });
    expect(await users.getState().addUser('Per/Åsen', ['operator'], '4826')).toBe(false);
    expect(errorLine(users, 'nb', App)).toMatch(/^Brukernavn: 1 til 64 tegn, uten \/ eller \\, \.\., kontrolltegn/);
    expect(errorLine(users, 'de', App)).toMatch(/^Benutzername: 1 bis 64 Zeichen, ohne \/ oder \\, \.\., Steuerzeichen/);
    expect(errorLine(users, 'en', App)).toMatch(/^User name: 1 to 64 characters, without \/ or \\, \.\., control characters/);
  });
});

describe('text too long (input.tooLong) and a number out of range (input.range)', () => {
  it('a search too long on the stock screen’s error line', async () => {
    const store = storeRefusing('stock', { kind: 'invalid', message: 'request.search: longer than 128 characters', code: 'input.tooLong', params: { field: 'search', max: 128 } });
    store.setState({ screen: 'stock' });
    await store.getState().loadStock('x'.repeat(129));
    expect(errorLine(store, 'nb', App)).toBe('Søk: høyst 128 tegn');
    expect(errorLine(store, 'de', App)).toBe('Suche: höchstens 128 Zeichen');
    expect(errorLine(store, 'en', App)).toBe('Search: at most 128 characters');
  });

  it('a reorder point too large on the stock screen’s error line', async () => {
    const message = `request.policy: expected {reorderPoint, orderUpTo} or null (request.policy: expected null, got object; request.policy.reorderPoint: expected an integer in 0..${MAX}, got number)`;
    const store = storeRefusing('setReorderPolicy', { kind: 'invalid', message, code: 'input.range', params: { field: 'policy.reorderPoint', min: 0, max: MAX } });
    store.setState({ screen: 'stock' });
    expect(await store.getState().setReorderPolicy('BOLT', 'A-01', { reorderPoint: 1e20, orderUpTo: 30 })).toBe(false);
    expect(errorLine(store, 'nb', App)).toBe(`Bestillingspunkt: et helt tall fra 0 til ${formatNumber('nb', MAX)}`);
    expect(errorLine(store, 'de', App)).toBe(`Meldebestand: eine ganze Zahl von 0 bis ${formatNumber('de', MAX)}`);
    expect(errorLine(store, 'en', App)).toBe(`Reorder point: a whole number from 0 to ${formatNumber('en', MAX)}`);
  });

  it('names each field a floor form has as the form does', () => {
    const r = (code: string, params: Record<string, string | number>) => ({ message: 'the English text', code, params });
    expect(refusalText('nb', r('input.tooLong', { field: 'comment', max: 2000 }))).toBe(`Kommentar: høyst ${formatNumber('nb', 2000)} tegn`);
    expect(refusalText('de', r('input.tooLong', { field: 'secret', max: 256 }))).toBe('PIN oder Passwort: höchstens 256 Zeichen');
    expect(refusalText('nb', r('input.tooLong', { field: 'badge', max: 256 }))).toBe('Kort: høyst 256 tegn');
    expect(refusalText('de', r('input.tooLong', { field: 'contains', max: 128 }))).toBe('Suche: höchstens 128 Zeichen');
    expect(refusalText('nb', r('input.tooLong', { field: 'note', max: 500 }))).toBe('Hvorfor: høyst 500 tegn');
    expect(refusalText('nb', r('input.range', { field: 'policy.orderUpTo', min: 1, max: MAX }))).toBe(`Bestill opp til: et helt tall fra 1 til ${formatNumber('nb', MAX)}`);
    expect(refusalText('nb', r('input.range', { field: 'at.snapshotId', min: 1, max: MAX }))).toBe(`Øyeblikksbilde: et helt tall fra 1 til ${formatNumber('nb', MAX)}`);
    expect(refusalText('de', r('input.range', { field: 'from.timestampMs', min: 0, max: MAX }))).toBe(`Zeit: eine ganze Zahl von 0 bis ${formatNumber('de', MAX)}`);
  });

  it('falls back to the English message without the params it needs', () => {
    expect(refusalText('nb', { message: 'the English text', code: 'input.tooLong', params: { field: 'comment' } })).toBe('the English text');
    expect(refusalText('de', { message: 'the English text', code: 'input.range', params: { field: 'limit', max: 10 } })).toBe('the English text');
    expect(refusalText('nb', { message: 'the English text', code: 'input.name', params: { max: 64 } })).toBe('the English text');
    expect(refusalText('de', { message: 'the English text', code: 'input.refused' })).toBe('the English text');
    expect(refusalText('en', { message: 'the English text', code: 'input.tooLong', params: { field: 'comment' } })).toBe('the English text');
  });
});

describe('a direction-changing character pasted into a comment or a note (input.characters)', () => {
  // core/site api-validate.ts `freeText`: a bidi control (U+202A–202E, U+2066–2069) in a decision's
  // comment or a dismissal's note. It was `input.refused`, worded "reload the page … tell IT": no
  // help to a shift lead who pasted the comment from a mail.
  it('on the inbox’s error line: the field and the character, in en, nb and de', async () => {
    const message = 'request.comment: must not contain U+202E, a direction-changing character (the text after it would show reversed)';
    const store = storeRefusing('decide', { kind: 'invalid', message, code: 'input.characters', params: { field: 'comment', char: 'U+202E' } }, 'shift_lead');
    store.setState({ selected: { id: 'P-1', status: 'open' } as never });
    expect(await store.getState().decide('approve', 'ok \u202Eevorppa')).toBe(false);
    store.setState({ selected: null }); // the error line is the App's, not the panel's
    expect(errorLine(store, 'en', App)).toBe('Comment: holds a character that turns the text around (U+202E, often pasted with the text); type it again or delete that part');
    expect(errorLine(store, 'nb', App)).toBe('Kommentar: inneholder et tegn som snur teksten (U+202E, ofte limt inn med teksten); skriv den på nytt eller slett den delen');
    expect(errorLine(store, 'de', App)).toBe('Kommentar: enthält ein Zeichen, das den Text umdreht (U+202E, oft mit dem Text eingefügt); neu tippen oder diesen Teil löschen');
  });

  it('names a dismissal’s note as its form does; without its params, the English message', () => {
    const r = { message: 'the English text', code: 'input.characters', params: { field: 'note', char: 'U+2067' } };
    expect(refusalText('nb', r)).toBe('Hvorfor: inneholder et tegn som snur teksten (U+2067, ofte limt inn med teksten); skriv den på nytt eller slett den delen');
    expect(refusalText('de', r)).toMatch(/^Warum: enthält ein Zeichen, das den Text umdreht \(U\+2067/);
    expect(refusalText('nb', { message: 'the English text', code: 'input.characters', params: { field: 'note' } })).toBe('the English text');
  });
});

describe('what only a hand-made request sends (input.refused)', () => {
  it('says the site refused the request, naming the field as sent (or none), never the English', () => {
    const message = "request.ids[0]: expected a string, got number";
    expect(refusalText('nb', { message, code: 'input.refused', params: { field: 'ids[0]' } })).toBe('Stedet avviste forespørselen (ids[0]): last inn siden på nytt; skjer det igjen, si fra til IT');
    expect(refusalText('de', { message, code: 'input.refused', params: { field: 'method' } })).toBe('Der Standort hat die Anfrage abgelehnt (method): die Seite neu laden; wenn es wieder passiert, die IT informieren');
    expect(refusalText('nb', { message: 'request: expected an object, got an array', code: 'input.refused', params: { field: '' } })).toBe('Stedet avviste forespørselen: last inn siden på nytt; skjer det igjen, si fra til IT');
    // A field a form has keeps the form's word for it.
    expect(refusalText('de', { message: 'request.siteId: not a site id', code: 'input.refused', params: { field: 'siteId' } })).toMatch(/^Der Standort hat die Anfrage abgelehnt \(Standort-ID\)/);
    expect(refusalText('en', { message, code: 'input.refused', params: { field: 'ids[0]' } })).toBe('The site refused the request (ids[0]): reload the page; if it happens again, tell IT');
  });
});

describe('config.json that is no settings file (config.file), on the stock screen’s error line', () => {
  it('words it in en, nb and de, not with the site’s message (which names the file’s path)', async () => {
    const message = '/var/lib/tilstand/config.json: expected a JSON object, got an array';
    const store = storeRefusing('setReorderPolicy', { kind: 'invalid', message, code: 'config.file' });
    store.setState({ screen: 'stock' });
    expect(await store.getState().setReorderPolicy('BOLT', null, { reorderPoint: 5, orderUpTo: 20 })).toBe(false);
    expect(errorLine(store, 'nb', App)).toBe('Ikke lagret: stedets innstillingsfil (config.json) kan ikke leses som innstillinger (den må inneholde ett JSON-objekt); spør IT');
    expect(errorLine(store, 'de', App)).toBe('Nicht gespeichert: die Einstellungsdatei des Standorts (config.json) ist als Einstellungen nicht lesbar (sie muss ein JSON-Objekt enthalten); bitte die IT fragen');
    expect(errorLine(store, 'en', App)).toBe('Not saved: the site’s settings file (config.json) cannot be read as settings (it must hold one JSON object); ask IT');
  });
});
