// A rule of a site's own that reads a table of the site's own (docs/operations.md, "Rules of your
// own"): a notice for each dock door the yard system reports `down`. It reads `yard_doors` as the
// demo defines it in config.json (`tables`: door_id, state free | occupied | down, trailer_id,
// since), declared in `reads`; a site without that table refuses the file (`tilstand config
// check` and the start name `agent.ruleFiles[<i>]`).
//
// A new demo directory runs it: `tilstand start --demo` writes this file to
// <data>/rules/door-down.mts and names it in config.json (core/site/init.ts DEMO_RULE_FILE).
// Elsewhere, to run it: copy it into the data directory and name it in config.json,
//   "agent": { …, "ruleFiles": ["rules/door-down.mts"] }
// then `tilstand config check --data <dir>` and a restart. A notice (module null) sends nothing to
// a module: a person sees it in the inbox, and approving it records that someone saw to the door.
//
// One outage is one situation: the notice is keyed by the door and the time it went down (`since`),
// so a door that goes down again is a new notice. Keyed by the door alone (version 2), a door that
// went down again within the inbox's quiet window after a decision (`resuggestAfterDecisionMs`, 8 h)
// was suppressed: the second outage got no notice at all.
//
// Self-contained: the only import is a type, which is dropped when the file is loaded, so a copy
// anywhere runs as this one does (only this file travels with a replay fixture).
import type { Recheck, Rule } from '../../../core/agents/index.ts';

const TABLE = 'yard_doors';

/** A door row's fields as the rule uses them (rows come in JSON forms: `since` as ISO text, UTC). */
const text = (v: unknown): string => (typeof v === 'string' ? v : '?');

/**
 * `since` as an instant with its zone (`2026-12-06T05:07:04.839Z`), as the built-in rules give
 * times: a TIMESTAMP(3) row carries the UTC wall clock without one (`2026-12-06T05:07:04.839`),
 * which the floor would show as written; with `Z` it shows it in the PC's own time zone.
 */
const instant = (v: unknown): string => {
  if (typeof v !== 'string') return '?';
  const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(v) ? v : `${v.replace(' ', 'T')}Z`);
  return Number.isNaN(ms) ? v : new Date(ms).toISOString();
};

/** A door's state as a message (`door-down.state.*`), so nb and de say it in words; another as stored. */
const STATES = new Set(['free', 'occupied', 'down']);
const state = (v: unknown): string | { id: string; params: Record<string, never> } => (typeof v === 'string' && STATES.has(v) ? { id: `door-down.state.${v}`, params: {} } : text(v));

const doorDown: Rule = {
  id: 'door-down',
  version: '3',
  description: 'A notice for each dock door the yard system reports down (yard_doors).',
  reads: [TABLE],
  messages: {
    'door-down.explanation': {
      en: 'Dock door {door} has been down since {since}: no trailer can be docked there.',
      nb: 'Port {door} har vært ute av drift siden {since}: ingen tilhenger kan legge til der.',
      de: 'Tor {door} ist seit {since} außer Betrieb: dort kann kein Auflieger andocken.',
    },
    'door-down.risk': {
      en: 'a notice: nothing is sent to a module',
      nb: 'et varsel: ingenting sendes til en modul',
      de: 'ein Hinweis: nichts wird an ein Modul gesendet',
    },
    'door-down.up': {
      en: 'door {door} is {state} now',
      nb: 'port {door} er {state} nå',
      de: 'Tor {door} ist jetzt {state}',
    },
    // A door's state as a parameter of its own (English: the stored code, the record; nb and de in
    // words), as the built-in rules say a job's status. A state the yard system adds later is
    // passed as stored.
    'door-down.state.free': { en: 'free', nb: 'ledig', de: 'frei' },
    'door-down.state.occupied': { en: 'occupied', nb: 'opptatt', de: 'belegt' },
    'door-down.state.down': { en: 'down', nb: 'ute av drift', de: 'außer Betrieb' },
    'door-down.again': {
      en: 'door {door} has been down again since {since}',
      nb: 'port {door} har vært ute av drift igjen siden {since}',
      de: 'Tor {door} ist seit {since} wieder außer Betrieb',
    },
    'door-down.gone': {
      en: 'door {door} is no longer reported',
      nb: 'port {door} er ikke lenger meldt',
      de: 'Tor {door} wird nicht mehr gemeldet',
    },
  },
  evaluate(ctx) {
    const doors = ctx.siteTables[TABLE];
    if (doors === undefined) return [];
    return doors
      .scan()
      .filter((r) => r.state === 'down')
      .map((r) => ({
        action: 'door_down',
        module: null,
        params: { door_id: text(r.door_id), since: instant(r.since) },
        keyParams: ['door_id', 'since'],
        risk: 'low' as const,
        riskReason: { id: 'door-down.risk', params: {} },
        explanation: { id: 'door-down.explanation', params: { door: text(r.door_id), since: instant(r.since) } },
        evidence: [{ table: TABLE, rows: [r] }],
      }));
  },
  // Holds while the door is still down since the same time (the approval's compare-and-set reads
  // its latest row); down since another time, it is another outage, with a notice of its own.
  recheck(ctx, p): Recheck {
    const door = String(p.params.door_id);
    const row = ctx.siteTables[TABLE]?.get({ door_id: door });
    if (row === undefined) return { holds: false, reason: { id: 'door-down.gone', params: { door } } };
    if (row.state !== 'down') return { holds: false, reason: { id: 'door-down.up', params: { door, state: state(row.state) } } };
    if (instant(row.since) !== p.params.since) return { holds: false, reason: { id: 'door-down.again', params: { door, since: instant(row.since) } } };
    return { holds: true };
  },
  // A notice has no command whose effect could be seen.
  effectSeen: () => false,
};

export default doorDown;
