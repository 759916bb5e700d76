// HQ no longer holding this site's sender marker (core/sync problem 'gone': HQ's share not mounted,
// HQ's copy deleted) has words of its own on the Sync screen and in the sync_stalled alarm, in each
// language: said neutrally ("not healthy") it read as weather, while nothing is sent until the
// share is back or an administrator takes over.
import { describe, expect, it } from 'vitest';
import type { Alarm } from '../../../core/site/api.ts';
import { alarmText, syncReasonKey, translate, type Lang } from './messages.ts';

describe("sync problem 'gone'", () => {
  it('the Sync screen words it in en, nb and de, asking whether the share is mounted', () => {
    const key = syncReasonKey('gone');
    expect(key).toBe('sync.reason.gone');
    const words: Record<Lang, RegExp> = { en: /share mounted/, nb: /deling montert/, de: /Freigabe der Zentrale .*eingehängt/ };
    for (const lang of ['en', 'nb', 'de'] as const) expect(translate(lang, key!)).toMatch(words[lang]);
  });

  it('the sync_stalled alarm says it in nb and de, not "not healthy"', () => {
    const a: Alarm = { kind: 'sync_stalled', message: 'sync to HQ is stopped: …; 2 steps waiting', sinceMs: 0, params: { pending: 2, reason: 'gone', windowMs: 15 * 60_000 } };
    expect(alarmText('nb', a)).toBe(
      'synkroniseringen til hovedkontoret er stanset: hovedkontoret har ikke lenger anleggets avsendermerke (er hovedkontorets deling montert? ble hovedkontorets kopi slettet?); ingenting sendes før det er tilbake (docs/operations.md, «HQ’s folder is empty»); 2 steg venter',
    );
    expect(alarmText('de', a)).toContain('die Synchronisierung mit der Zentrale ist angehalten: die Zentrale hat die Absendermarke dieses Standorts nicht mehr');
    expect(alarmText('en', a)).toBe(a.message);
  });
});
