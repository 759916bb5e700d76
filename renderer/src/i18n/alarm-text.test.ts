// The alarm band in the reader's language: the alarms a shift lead acts on are worded in nb and
// de from the values the site gives (durations and counts in the locale's format); English shows
// the site's own message, except a failed command, whose action every language names in words;
// an alarm without values, or of a kind worded only for IT, shows that message in every language.
import { describe, expect, it } from 'vitest';
import type { Alarm } from '../../../core/site/api.ts';
import { alarmText } from './messages.ts';

const alarm = (kind: Alarm['kind'], message: string, params?: Alarm['params']): Alarm => ({ kind, message, sinceMs: 0, ...(params ? { params } : {}) });

describe('alarmText', () => {
  it('words the floor alarms in Norwegian and German, with durations and counts in the locale', () => {
    const breach = alarm('budget_breach', 'stock is 12 min old; its budget is 10 min (demo)', { table: 'stock', ageMs: 720_000, budgetMs: 600_000 });
    expect(alarmText('nb', breach)).toBe('stock er 12 min gammel; budsjettet er 10 min');
    expect(alarmText('de', breach)).toBe('stock ist 12 Min. alt; das Budget ist 10 Min.');
    expect(alarmText('en', breach)).toBe('stock is 12 min old; its budget is 10 min (demo)');

    const letters = alarm('dead_letters', 'dead letters waiting for a look: 1234', { n: 1234 });
    expect(alarmText('nb', letters)).toBe('avviste hendelser som venter på å bli sett på: 1\u00a0234');
    expect(alarmText('de', letters)).toBe('abgewiesene Ereignisse, die auf Prüfung warten: 1.234');

    const failed = alarm('command_failed', 'assign_job for P-1 failed: resource busy', { action: 'assign_job', id: 'P-1', state: 'failed', detail: 'resource busy' });
    expect(alarmText('nb', failed)).toBe('Tildeling for P-1 feilet: resource busy');
    expect(alarmText('en', failed)).toBe('Assignment for P-1 failed: resource busy');
    const late = alarm('command_failed', 'replenish for P-2 timed out', { action: 'replenish', id: 'P-2', state: 'timed_out', detail: '' });
    expect(alarmText('de', late)).toBe('Nachbestellung für P-2: keine Antwort in der Zeit');
    expect(alarmText('en', late)).toBe('Reorder for P-2 timed out');
    // An action of a newer agent than this UI knows: as the agent named it.
    const newer = alarm('command_failed', 'move_pallet for P-3 failed', { action: 'move_pallet', id: 'P-3', state: 'failed', detail: '' });
    expect(alarmText('en', newer)).toBe('move_pallet for P-3 failed');
    expect(alarmText('nb', newer)).toBe('move_pallet for P-3 feilet');

    const silent = alarm('stream_silent', 'operations/jobs: no event for 2 h (…)', { stream: 'operations/jobs', silentMs: 7_200_000, allowedMs: 1_800_000 });
    expect(alarmText('nb', silent)).toMatch(/^operations\/jobs: ingen hendelse på 2 t \(tillatt 30 min\) — kjører modulen/);

    expect(alarmText('de', alarm('sync_stalled', 'sync to HQ has made no progress within the health window; 3 steps waiting (timeout)', { pending: 3, reason: 'waiting', windowMs: 900_000 }))).toBe(
      'die Synchronisierung mit der Zentrale kommt seit 15 Min. nicht voran; 3 Schritte warten',
    );
  });

  it('never says an age over its budget as the budget itself (a 60 s budget, 90 s old; a 2 s budget, 2.9 s old)', () => {
    const minute = alarm('budget_breach', 'work_queue is 90 s old; its budget is 60 s (agent)', { table: 'work_queue', ageMs: 90_000, budgetMs: 60_000 });
    expect(alarmText('nb', minute)).toBe('work_queue er 1 min 30 sek gammel; budsjettet er 1 min');
    expect(alarmText('de', minute)).toBe('work_queue ist 1 Min. 30 Sek. alt; das Budget ist 1 Min.');
    const seconds = alarm('budget_breach', 'approval_inbox is 3 s old; its budget is 2 s (floor)', { table: 'approval_inbox', ageMs: 2_900, budgetMs: 2_000 });
    expect(alarmText('nb', seconds)).toBe('approval_inbox er 2,9 sek gammel; budsjettet er 2 sek');
    expect(alarmText('de', seconds)).toBe('approval_inbox ist 2,9 Sek. alt; das Budget ist 2 Sek.');
  });

  it("shows the site's message for an alarm without values and for the kinds worded for IT only", () => {
    expect(alarmText('nb', alarm('dead_letters', 'dead letters waiting for a look: 2'))).toBe('dead letters waiting for a look: 2');
    expect(alarmText('de', alarm('module_refused', 'publishes by "inventory" refused: once …', { who: 'inventory' }))).toBe('publishes by "inventory" refused: once …');
  });
});
