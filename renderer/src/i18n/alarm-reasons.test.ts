// A table over its budget says why no commit mends it in every language the floor reads: events
// for it held behind a missing seq (how many, which streams) and ingest stopped on an error
// (core/site budget_breach params `held`, `streams`, `stopped`). nb and de once said only the age.
import { describe, expect, it } from 'vitest';
import type { Alarm } from '../../../core/site/api.ts';
import { alarmText } from './messages.ts';

const breach = (message: string, extra: Record<string, string | number>): Alarm => ({
  kind: 'budget_breach',
  message,
  sinceMs: 0,
  params: { table: 'work_queue', ageMs: 90_000, budgetMs: 60_000, ...extra },
});

describe('budget_breach says why the table is late', () => {
  it('names the events held behind a missing seq and their streams', () => {
    const one = breach('work_queue is 90 s old; its budget is 60 s (agent); 1 event for it waits behind a missing one (streams: gap)', { held: 1, streams: 'operations/jobs' });
    expect(alarmText('nb', one)).toBe('work_queue er 1 min 30 sek gammel; budsjettet er 1 min; 1 hendelse for den venter bak en manglende seq (operations/jobs)');
    expect(alarmText('de', one)).toBe('work_queue ist 1 Min. 30 Sek. alt; das Budget ist 1 Min.; 1 Ereignis dafür wartet hinter einer fehlenden Seq (operations/jobs)');
    // English shows the site's message, which says it too.
    expect(alarmText('en', one)).toBe(one.message);

    const many = breach('work_queue is 90 s old; …', { held: 1234, streams: 'operations/jobs, operations/moves' });
    expect(alarmText('nb', many)).toBe('work_queue er 1 min 30 sek gammel; budsjettet er 1 min; 1\u00a0234 hendelser for den venter bak en manglende seq (operations/jobs, operations/moves)');
    expect(alarmText('de', many)).toBe('work_queue ist 1 Min. 30 Sek. alt; das Budget ist 1 Min.; 1.234 Ereignisse dafür warten hinter einer fehlenden Seq (operations/jobs, operations/moves)');
    // No stream named (its gap closed as the status was made): no empty brackets.
    expect(alarmText('de', breach('…', { held: 2, streams: '' }))).toMatch(/; 2 Ereignisse dafür warten hinter einer fehlenden Seq$/);
  });

  it('says ingest stopped, alone or after the held events', () => {
    const stopped = breach('work_queue is 90 s old; its budget is 60 s (agent); ingest stopped, events are only journaled', { stopped: 1 });
    expect(alarmText('nb', stopped)).toBe('work_queue er 1 min 30 sek gammel; budsjettet er 1 min; innlesingen har stoppet, hendelser lagres bare i journalen');
    expect(alarmText('de', stopped)).toBe('work_queue ist 1 Min. 30 Sek. alt; das Budget ist 1 Min.; Einlesen gestoppt, Ereignisse werden nur im Journal gespeichert');
    expect(alarmText('en', stopped)).toBe(stopped.message);
    const both = breach('…', { held: 1, streams: 'operations/jobs', stopped: 1 });
    expect(alarmText('nb', both)).toBe('work_queue er 1 min 30 sek gammel; budsjettet er 1 min; 1 hendelse for den venter bak en manglende seq (operations/jobs); innlesingen har stoppet, hendelser lagres bare i journalen');
  });

  it('adds nothing when the site gives no reason (a slow commit, an unchecked inbox)', () => {
    expect(alarmText('nb', breach('…', {}))).toBe('work_queue er 1 min 30 sek gammel; budsjettet er 1 min');
    expect(alarmText('de', breach('…', { held: 0, stopped: 0 }))).toBe('work_queue ist 1 Min. 30 Sek. alt; das Budget ist 1 Min.');
  });
});
