// The ingest_stopped alarm in the reader's language: worded in nb and de from its `failure` value
// (the error itself stays as the site logged it); English shows the site's message.
import { describe, expect, it } from 'vitest';
import type { Alarm } from '../../../core/site/api.ts';
import { alarmText, formatClock } from './messages.ts';

const failure = "commit of table 'stock' failed: EIO: injected";
const stopped: Alarm = {
  kind: 'ingest_stopped',
  message: `ingest stopped: ${failure}; events are only journaled until the site is restarted (see logs/site.log)`,
  sinceMs: 0,
  params: { failure },
};

describe('alarmText: ingest_stopped', () => {
  it('says ingest stopped, with the error, in Norwegian and German; English is the site message', () => {
    expect(alarmText('nb', stopped)).toBe(`innlesingen har stoppet: ${failure}; hendelser lagres bare i journalen til anlegget startes på nytt`);
    expect(alarmText('de', stopped)).toBe(`Einlesen gestoppt: ${failure}; Ereignisse werden nur im Journal gespeichert, bis der Standort neu gestartet wird`);
    expect(alarmText('en', stopped)).toBe(stopped.message);
  });

  it('never reads as a disk budget in any language', () => {
    for (const lang of ['en', 'nb', 'de'] as const) expect(alarmText(lang, stopped)).not.toMatch(/disk|budsjett|Budget/i);
  });
});

// Since ingest resumes in place (core/site, "Ingest that stopped"), the site sends when it tries
// next (`resumeAtMs`) or that it does not (`resumeStopped: 'damaged'`): every language said "until
// the site is restarted", and English gave the next try as a UTC instant.
describe('alarmText: ingest_stopped with what the site does about it', () => {
  const atMs = Date.UTC(2026, 11, 7, 9, 30, 15);
  const planned: Alarm = {
    kind: 'ingest_stopped',
    message: `ingest stopped: ${failure}; events are only journaled until ingest resumes (the site tries to resume it at ${new Date(atMs).toISOString()}; \`tilstand ingest resume\` tries now) (see logs/site.log)`,
    sinceMs: 0,
    params: { failure, resume: `the site tries to resume it at ${new Date(atMs).toISOString()}; \`tilstand ingest resume\` tries now`, resumeAtMs: atMs },
  };
  const damaged: Alarm = {
    kind: 'ingest_stopped',
    message: `ingest stopped: ${failure}; events are only journaled until ingest resumes (not retried: …) (see logs/site.log)`,
    sinceMs: 0,
    params: { failure, resume: 'not retried: …', resumeStopped: 'damaged' },
  };

  it('says when the site tries again, as a time of day on this PC, in every language', () => {
    const at = (lang: 'en' | 'nb' | 'de') => formatClock(lang, atMs);
    expect(alarmText('en', planned)).toBe(`ingest stopped: ${failure}; events are only journaled until ingest resumes: the site tries again at ${at('en')}`);
    expect(alarmText('nb', planned)).toBe(`innlesingen har stoppet: ${failure}; hendelser lagres bare i journalen til innlesingen fortsetter: anlegget prøver igjen kl. ${at('nb')}`);
    expect(alarmText('de', planned)).toBe(`Einlesen gestoppt: ${failure}; Ereignisse werden nur im Journal gespeichert, bis das Einlesen weiterläuft: der Standort versucht es um ${at('de')} erneut`);
    for (const lang of ['en', 'nb', 'de'] as const) {
      // A time, not the instant's UTC text, nor a duration, nor "restarted".
      expect(alarmText(lang, planned)).toMatch(/\d{2}:\d{2}:\d{2}$|\d{2}:\d{2}:\d{2} erneut$/);
      expect(alarmText(lang, planned)).not.toMatch(/2026-12-07T|restart|nytt|neu gestartet/);
    }
  });

  it('says a damaged file is not tried again and what resumes it, in every language', () => {
    expect(alarmText('en', damaged)).toBe(`ingest stopped: ${failure}; events are only journaled: the site does not try again with a damaged table file; once the file is fixed or restored, “tilstand ingest resume” or a restart resumes ingest`);
    expect(alarmText('nb', damaged)).toBe(`innlesingen har stoppet: ${failure}; hendelser lagres bare i journalen: anlegget prøver ikke igjen med en skadet tabellfil; når filen er reparert eller gjenopprettet, fortsetter innlesingen med «tilstand ingest resume» eller en omstart`);
    expect(alarmText('de', damaged)).toBe(`Einlesen gestoppt: ${failure}; Ereignisse werden nur im Journal gespeichert: bei einer beschädigten Tabellendatei versucht es der Standort nicht erneut; ist die Datei repariert oder wiederhergestellt, setzt „tilstand ingest resume“ oder ein Neustart das Einlesen fort`);
  });

  // A try under way (its read of what was journaled meanwhile takes a while): "now", not a time
  // gone (its start) after "tries again at".
  it('says a try is under way, in every language', () => {
    const resuming: Alarm = { ...planned, params: { failure, resume: 'the site is resuming it now (try 1, …)', resumeRunning: 1 } };
    expect(alarmText('en', resuming)).toBe(`ingest stopped: ${failure}; events are only journaled until ingest resumes: the site is resuming it now, reading what was journaled meanwhile`);
    expect(alarmText('nb', resuming)).toMatch(/anlegget prøver nå, og leser det som ble lagret i mellomtiden$/);
    expect(alarmText('de', resuming)).toMatch(/der Standort setzt es gerade fort und liest, was inzwischen ins Journal kam$/);
  });

  it('an older site without the values keeps today’s wording', () => {
    expect(alarmText('nb', stopped)).toMatch(/til anlegget startes på nytt$/);
    expect(alarmText('en', stopped)).toBe(stopped.message);
    // A stop reason this UI does not know: today's wording too, not a wrong one.
    const unknown: Alarm = { ...damaged, params: { failure, resumeStopped: 'later-reason' } };
    expect(alarmText('en', unknown)).toBe(unknown.message);
    expect(alarmText('de', unknown)).toMatch(/bis der Standort neu gestartet wird$/);
  });
});
