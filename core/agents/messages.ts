// The agents' texts in the floor's languages. A rule says its explanation, its risk reason and
// why a proposal no longer holds (recheck) as messages (an id and parameters, core/inbox
// `Message`) and keeps a template per id and language beside its code (`Rule.messages`); the
// fragments several rules share are here. The agent renders each message in English for the
// proposal's stored text — the record HQ and the audit read — and the inbox stores the messages
// beside it, so the site can show the same proposal in Norwegian or German (`translations`).
//
// Templates: `{name}` is the parameter `name`. A parameter that is itself a message (`msg(…)`)
// is rendered in the same language; an array is joined with ", "; a number or string as it is.
// A template names the same parameters in every language (tested), so a message that renders in
// English renders in all of them. A stored message whose id or parameter a later version no
// longer has renders as undefined, and the reader falls back to the stored English text.

import { isMessage, PROPOSAL_MESSAGE_KEYS, type Json, type Message, type Proposal, type ProposalMessages } from '../inbox/index.ts';
import { AgentError } from './errors.ts';

export const MESSAGE_LANGS = ['en', 'nb', 'de'] as const;
export type MessageLang = (typeof MESSAGE_LANGS)[number];

/** Message id → its template in each language. */
export type MessageTemplates = Readonly<Record<string, Readonly<Record<MessageLang, string>>>>;

/** A message: its id and parameters (a parameter may be a message). */
export const msg = (id: string, params: Readonly<Record<string, Json>> = {}): Message => ({ id, params });

/** Fragments shared by the rules. */
export const SHARED_MESSAGES: MessageTemplates = {
  // A job's status, a resource's state and kind as the seed tables spell them: the English is the
  // code (the stored English is the record, DESIGN.md "Messages"); nb and de are the floor UI's
  // words for them (renderer VALUE_WORDS; test/contracts/agent-value-words.test.ts), but for
  // in_progress in nb: "er nå i gang", where the UI's cell says "pågår".
  'job.status.released': { en: 'released', nb: 'frigitt', de: 'freigegeben' },
  'job.status.blocked': { en: 'blocked', nb: 'blokkert', de: 'blockiert' },
  'job.status.in_progress': { en: 'in_progress', nb: 'i gang', de: 'in Arbeit' },
  'job.status.done': { en: 'done', nb: 'ferdig', de: 'erledigt' },
  'resource.state.free': { en: 'free', nb: 'ledig', de: 'frei' },
  'resource.state.busy': { en: 'busy', nb: 'opptatt', de: 'belegt' },
  'resource.state.down': { en: 'down', nb: 'ute av drift', de: 'ausgefallen' },
  'resource.kind.machine': { en: 'machine', nb: 'maskin', de: 'Maschine' },
  'resource.kind.team': { en: 'team', nb: 'team', de: 'Team' },
  // The state tables by name, as a sentence says them ("sett da arbeidskøen endret seg"; the UI's
  // navigation words in the definite form where the language needs it); English the name.
  'table.work_queue': { en: 'work_queue', nb: 'arbeidskøen', de: 'Arbeitsvorrat' },
  'table.resources': { en: 'resources', nb: 'ressursene', de: 'Ressourcen' },
  'table.stock': { en: 'stock', nb: 'lageret', de: 'Bestand' },
  // Two or more tables: the language's "and" before the last; English the ", " its stored text
  // always had ("work_queue, resources").
  'tables.list': { en: '{items}, {last}', nb: '{items} og {last}', de: '{items} und {last}' },
  'job.blocked': { en: 'blocked ({reason})', nb: 'blokkert ({reason})', de: 'blockiert ({reason})' },
  'reason.none': { en: 'no reason', nb: 'ingen årsak', de: 'kein Grund' },
  'reason.notGiven': { en: 'no reason given', nb: 'ingen årsak oppgitt', de: 'kein Grund angegeben' },
  'capability.unknown': { en: 'unknown capability', nb: 'ukjent ferdighet', de: 'unbekannte Fähigkeit' },
  'list.more': { en: '{ids} and {n} more', nb: '{ids} og {n} til', de: '{ids} und {n} weitere' },
  // Why a proposal no longer holds (Rule.recheck), said by several rules.
  'recheck.jobGone': { en: 'job {job} is no longer in the queue', nb: 'jobb {job} er ikke lenger i køen', de: 'Auftrag {job} ist nicht mehr in der Warteschlange' },
  'recheck.jobNow': { en: 'job {job} is now {status}', nb: 'jobb {job} er nå {status}', de: 'Auftrag {job} ist jetzt {status}' },
  'recheck.resourceGone': { en: 'resource {resource} no longer exists', nb: 'ressurs {resource} finnes ikke lenger', de: 'Ressource {resource} gibt es nicht mehr' },
  'recheck.resourceNow': { en: 'resource {resource} is now {state}', nb: 'ressurs {resource} er nå {state}', de: 'Ressource {resource} ist jetzt {state}' },
  'recheck.ruleGone': { en: 'rule {rule} is not installed any more', nb: 'regel {rule} er ikke installert lenger', de: 'Regel {rule} ist nicht mehr installiert' },
  // A run's withdrawal: the rule's reason and the run that found it.
  'recheck.withdrawn': { en: '{reason} (run {run})', nb: '{reason} (kjøring {run})', de: '{reason} (Lauf {run})' },
  // A withdrawal between runs: the rule's reason and the tables whose commits brought it, one or
  // several (`tableList`: "work_queue, resources", "arbeidskøen og ressursene"). The templates
  // have no plurals: each wording reads right for one table and for several (German "als sich
  // {tables} änderte" did not for two).
  'recheck.withdrawnChanged': { en: '{reason} (seen when {tables} changed)', nb: '{reason} (sett da {tables} endret seg)', de: '{reason} (bemerkt bei Änderungen an {tables})' },
};

/** A job's status as a message; a status the seed tables do not know stays its code. */
export const jobStatus = (code: string | null): Json => (code !== null && SHARED_MESSAGES[`job.status.${code}`] ? msg(`job.status.${code}`) : String(code));

/** A resource's state as a message; a state the seed tables do not know stays its code. */
export const resourceState = (code: string | null): Json => (code !== null && SHARED_MESSAGES[`resource.state.${code}`] ? msg(`resource.state.${code}`) : String(code));

/** A resource's kind as a message; a kind the seed tables do not know stays its code. */
export const resourceKind = (code: string): Json => (SHARED_MESSAGES[`resource.kind.${code}`] ? msg(`resource.kind.${code}`) : code);

/**
 * Tables named in a sentence (`recheck.withdrawnChanged`'s `tables`): a state table in words, a
 * table of the site's own by its name, two or more joined with the language's "and".
 */
export function tableList(names: readonly string[]): Json {
  const said = names.map((n): Json => (SHARED_MESSAGES[`table.${n}`] ? msg(`table.${n}`) : n));
  return said.length < 2 ? (said[0] ?? '') : msg('tables.list', { items: said.slice(0, -1), last: said[said.length - 1]! });
}

/**
 * A stored message as this version says it. A withdrawal between runs stored before its tables
 * were a `tableList` holds them as one string ("work_queue, resources"): read as that list, so
 * it is said in words as a new one is (its English is the same text).
 */
function current(m: Message): Message {
  const tables = m.id === 'recheck.withdrawnChanged' ? m.params.tables : undefined;
  return typeof tables === 'string' ? { id: m.id, params: { ...m.params, tables: tableList(tables.split(', ')) } } : m;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The parameter names a template uses, sorted. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))].sort();
}

/** A message's text in `lang`; undefined when a template or a parameter is missing. */
export function renderMessage(m: Message, templates: MessageTemplates, lang: MessageLang): string | undefined {
  const template = templates[m.id]?.[lang];
  if (template === undefined) return undefined;
  let missing = false;
  const text = template.replace(PLACEHOLDER, (_, name: string) => {
    const v = m.params[name];
    const s = paramText(v, templates, lang);
    if (s === undefined) missing = true;
    return s ?? '';
  });
  return missing ? undefined : text;
}

function paramText(v: Json | undefined, templates: MessageTemplates, lang: MessageLang): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (isMessage(v)) return renderMessage(v, templates, lang);
  if (Array.isArray(v)) {
    const parts = v.map((x) => paramText(x, templates, lang));
    return parts.some((p) => p === undefined) ? undefined : parts.join(', ');
  }
  return typeof v === 'object' ? undefined : String(v);
}

/** The templates of a set of rules and the shared fragments. A rule's ids start with its own id. */
export function messageCatalog(rules: readonly { readonly id: string; readonly messages?: MessageTemplates }[]): MessageTemplates {
  const all: Record<string, Readonly<Record<MessageLang, string>>> = { ...SHARED_MESSAGES };
  for (const r of rules) {
    for (const [id, t] of Object.entries(r.messages ?? {})) {
      if (!id.startsWith(`${r.id}.`)) throw new AgentError('InvalidArgument', `rule ${r.id}: message id '${id}' must start with '${r.id}.'`);
      // A rule may take an id a fragment starts with (`recheck`, `job`, `table`): its template
      // would take the fragment's place in every rule's texts (an installed rule's withdrawal that
      // no longer renders is not made at all).
      if (Object.hasOwn(SHARED_MESSAGES, id)) throw new AgentError('InvalidArgument', `rule ${r.id}: message id '${id}' is one of the shared fragments every rule's texts use (core/agents messages.ts); expected an id of its own under '${r.id}.'`);
      all[id] = t;
    }
  }
  return all;
}

/** The texts of a proposal in one language (those that render). */
export type ProposalTexts = { -readonly [K in keyof ProposalMessages]?: string };

/**
 * A proposal's texts (explanation, risk reason, why it was withdrawn or found stale) in each
 * language but English (the stored text is the English), each where its message renders; a
 * language with none is left out.
 */
export function translations(p: Pick<Proposal, 'messages'>, templates: MessageTemplates): Partial<Record<MessageLang, ProposalTexts>> {
  const out: Partial<Record<MessageLang, ProposalTexts>> = {};
  const m: ProposalMessages | undefined = p.messages;
  if (!m) return out;
  for (const lang of MESSAGE_LANGS) {
    if (lang === 'en') continue;
    const texts: ProposalTexts = {};
    for (const k of PROPOSAL_MESSAGE_KEYS) {
      const text = m[k] && renderMessage(current(m[k]), templates, lang);
      if (text !== undefined) texts[k] = text;
    }
    if (Object.keys(texts).length > 0) out[lang] = texts;
  }
  return out;
}
