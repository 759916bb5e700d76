// The ingest_stopped alarm in the reader's language: worded in nb and de from its `failure` value
// (the error itself stays as the site logged it); English shows the site's message.
import { describe, expect, it } from 'vitest';
import type { Alarm } from '../../../core/site/api.ts';
import { alarmText } from './messages.ts';

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
