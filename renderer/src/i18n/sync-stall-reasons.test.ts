// The sync_stalled alarm in nb and de says which case it is (core/site params.reason): a PC HQ
// refuses (another PC sends for the site: a take-over, not the line), one step failing while HQ
// takes the others, a table left out of sending, or steps waiting with nothing sent. A reason this
// UI does not know, or none, is said neutrally: never "no progress" for what may be a refusal.
import { describe, expect, it } from 'vitest';
import type { Alarm } from '../../../core/site/api.ts';
import { alarmText } from './messages.ts';

const stalled = (params: Alarm['params'], message = 'sync to HQ is not healthy; 2 steps waiting (…)'): Alarm => ({ kind: 'sync_stalled', message, sinceMs: 0, params });
const WINDOW = 15 * 60_000;

describe('sync_stalled by reason', () => {
  it('a refused PC: another PC sends for this site, with where to read what to do', () => {
    const a = stalled({ pending: 2, reason: 'refused', windowMs: WINDOW });
    expect(alarmText('nb', a)).toBe('hovedkontoret avviser synkroniseringen: en annen PC sender for dette anlegget (docs/operations.md, «Two PCs for one site»); 2 steg venter');
    expect(alarmText('de', a)).toBe('die Zentrale weist die Synchronisierung ab: ein anderer PC sendet für diesen Standort (docs/operations.md, „Two PCs for one site“); 2 Schritte warten');
    // English shows the site's message, which names the sender HQ has.
    expect(alarmText('en', a)).toBe(a.message);
  });

  it("HQ refusing the site's access key: said as a refusal, with what to check", () => {
    const a = stalled({ pending: 3, reason: 'credentials', windowMs: WINDOW });
    expect(alarmText('nb', a)).toBe('hovedkontoret avviser synkroniseringen: anleggets tilgangsnøkkel godtas ikke (sjekk nøkkelen og hovedkontorets regler for anlegget; for en mappe, at anlegget får skrive i den); 3 steg venter');
    expect(alarmText('de', a)).toBe('die Zentrale weist die Synchronisierung ab: der Zugangsschlüssel dieses Standorts wird nicht angenommen (Schlüssel und Regeln der Zentrale für den Standort prüfen; bei einem Ordner, ob der Standort hineinschreiben darf); 3 Schritte warten');
  });

  it('one step failing while HQ takes the others, and a table left out of sending, for the window', () => {
    const step = stalled({ pending: 1, reason: 'step', windowMs: WINDOW });
    expect(alarmText('nb', step)).toBe('synkroniseringen til hovedkontoret er ikke i orden: ett steg har feilet i 15 min mens hovedkontoret tok imot andre forespørsler; 1 steg venter');
    expect(alarmText('de', step)).toBe('die Synchronisierung mit der Zentrale ist nicht in Ordnung: ein Schritt schlägt seit 15 Min. fehl, während die Zentrale andere Anfragen annimmt; 1 Schritt wartet');
    const planning = stalled({ pending: 0, reason: 'planning', windowMs: WINDOW });
    expect(alarmText('nb', planning)).toBe('synkroniseringen til hovedkontoret er ikke i orden: en tabell eller kontraktfil har vært utelatt fra sendingen i 15 min; 0 steg venter');
    expect(alarmText('de', planning)).toBe('die Synchronisierung mit der Zentrale ist nicht in Ordnung: eine Tabelle oder Vertragsdatei wird seit 15 Min. nicht gesendet; 0 Schritte warten');
  });

  it('steps waiting with nothing sent: no progress, for how long', () => {
    const a = stalled({ pending: 1234, reason: 'waiting', windowMs: WINDOW });
    expect(alarmText('nb', a)).toBe('synkroniseringen til hovedkontoret har stått stille i 15 min; 1\u00a0234 steg venter');
    expect(alarmText('de', a)).toBe('die Synchronisierung mit der Zentrale kommt seit 15 Min. nicht voran; 1.234 Schritte warten');
  });

  it('a reason it does not know, or none: not healthy, nothing guessed', () => {
    for (const params of [{ pending: 3, reason: 'newer', windowMs: WINDOW }, { pending: 3 }] as Record<string, string | number>[]) {
      expect(alarmText('nb', stalled(params))).toBe('synkroniseringen til hovedkontoret er ikke i orden; 3 steg venter');
      expect(alarmText('de', stalled(params))).toBe('die Synchronisierung mit der Zentrale ist nicht in Ordnung; 3 Schritte warten');
    }
  });
});
