// The agents' texts in the floor's languages. A rule says its explanation, its risk reason and
// why a proposal no longer holds (recheck) as messages (an id and parameters, core/inbox
// `Message`) and keeps a template per id and language beside its code (`Rule.messages`); the
// fragments several rules share are here. The agent renders each message in English for the
// proposal's stored text — the record HQ and the audit read — and the inbox stores the messages
// beside it, so the site can show the same proposal in Norwegian or German (`translations`).
//
// Templates: `{name}` is the parameter `name`. A parameter that is itself a message (`msg(…)`)
// is rendered in the same language; an array is joined with ", "; a string as it is; a number in
// nb and de in the language's number format, as the floor UI writes numbers (`numberText`:
// "−18", "1 234,5", "1.234,5"), in English as it always was (the record): an unmarked number is a
// quantity. `{name:data}` is a value of the site's own data (a capability, a blocked reason, a
// status or kind the catalog has no word for, an id): a string or a number there is shown as data,
// as stored, in the language's quotation marks (`DATA_QUOTES`: «pick», «20261207», „pick“; none in
// English, the record), never translated, grouped or given a decimal comma (an order number
// 20261207 that a rule file passes as a number read "20 261 207" in nb); a message there (a value the
// catalog knows, "unknown capability") is words, unquoted. A template names the same parameters,
// with the same marks, in every language (tested), so a message that renders in English renders
// in all of them. A stored message whose id or parameter a later version no
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
  // A blocked reason is the site's own text (or `reason.none`/`reason.notGiven`): data.
  'job.blocked': { en: 'blocked ({reason:data})', nb: 'blokkert ({reason:data})', de: 'blockiert ({reason:data})' },
  'reason.none': { en: 'no reason', nb: 'ingen årsak', de: 'kein Grund' },
  'reason.notGiven': { en: 'no reason given', nb: 'ingen årsak oppgitt', de: 'kein Grund angegeben' },
  'capability.unknown': { en: 'unknown capability', nb: 'ukjent ferdighet', de: 'unbekannte Fähigkeit' },
  'list.more': { en: '{ids} and {n} more', nb: '{ids} og {n} til', de: '{ids} und {n} weitere' },
  // Why a proposal no longer holds (Rule.recheck), said by several rules.
  'recheck.jobGone': { en: 'job {job} is no longer in the queue', nb: 'jobb {job} er ikke lenger i køen', de: 'Auftrag {job} ist nicht mehr in der Warteschlange' },
  'recheck.jobNow': { en: 'job {job} is now {status:data}', nb: 'jobb {job} er nå {status:data}', de: 'Auftrag {job} ist jetzt {status:data}' },
  'recheck.resourceGone': { en: 'resource {resource} no longer exists', nb: 'ressurs {resource} finnes ikke lenger', de: 'Ressource {resource} gibt es nicht mehr' },
  'recheck.resourceNow': { en: 'resource {resource} is now {state:data}', nb: 'ressurs {resource} er nå {state:data}', de: 'Ressource {resource} ist jetzt {state:data}' },
  'recheck.ruleGone': { en: 'rule {rule} is not installed any more', nb: 'regel {rule} er ikke installert lenger', de: 'Regel {rule} ist nicht mehr installiert' },
  // A run's withdrawal: the rule's reason and the run that found it.
  'recheck.withdrawn': { en: '{reason} (run {run})', nb: '{reason} (kjøring {run})', de: '{reason} (Lauf {run})' },
  // A withdrawal between runs: the rule's reason and the tables whose commits brought it, one or
  // several (`tableList`: "work_queue, resources", "arbeidskøen og ressursene"). The templates
  // have no plurals: each wording reads right for one table and for several (German "als sich
  // {tables} änderte" did not for two).
  'recheck.withdrawnChanged': { en: '{reason} (seen when {tables} changed)', nb: '{reason} (sett da {tables} endret seg)', de: '{reason} (bemerkt bei Änderungen an {tables})' },
};

/** A job's status as a message; a status the seed tables do not know stays its code (shown as data: `{status:data}`). */
export const jobStatus = (code: string | null): Json => (code !== null && SHARED_MESSAGES[`job.status.${code}`] ? msg(`job.status.${code}`) : String(code));

/** A resource's state as a message; a state the seed tables do not know stays its code (shown as data: `{state:data}`). */
export const resourceState = (code: string | null): Json => (code !== null && SHARED_MESSAGES[`resource.state.${code}`] ? msg(`resource.state.${code}`) : String(code));

/** A resource's kind as a message; a kind the seed tables do not know stays its code (shown as data: `{kind:data}`). */
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

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)(:data)?\}/g;

/** The parameters a template uses, sorted: each name, with `:data` where it is marked as the site's data. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]! + (m[2] ?? '')))].sort();
}

/**
 * The quotation marks around a value of the site's data (`{name:data}`) in each language. None in
 * English: the English text is the record (DESIGN.md "Messages"), word for word what it was.
 */
const DATA_QUOTES: Readonly<Record<MessageLang, readonly [string, string]>> = { en: ['', ''], nb: ['«', '»'], de: ['„', '“'] };

/** The floor UI's locale of each language (renderer/src/i18n/messages.ts LOCALES). */
const NUMBER_LOCALES: Readonly<Record<MessageLang, string>> = { en: 'en-GB', nb: 'nb-NO', de: 'de-DE' };

const numberFormats = new Map<string, Intl.NumberFormat>();

/**
 * A number in `lang`'s format, as the floor UI writes numbers (grouping, decimal comma, minus
 * sign: "−18" in Norwegian), with every digit it has, none added or rounded; English as it always
 * was (the record), and so a number no format writes exactly (`1e+21`, NaN).
 */
function numberText(n: number, lang: MessageLang): string {
  const stored = String(n);
  const m = lang === 'en' ? null : /^-?\d+(?:\.(\d+))?$/.exec(stored);
  const digits = m?.[1]?.length ?? 0;
  if (m === null || digits > 20) return stored;
  const key = `${lang}|${digits}`;
  let f = numberFormats.get(key);
  if (f === undefined) numberFormats.set(key, (f = new Intl.NumberFormat(NUMBER_LOCALES[lang], { minimumFractionDigits: digits, maximumFractionDigits: digits })));
  // Formatted from the text, not the double: the digits String() gave are the ones shown.
  return f.format(stored as `${number}`);
}

/** A message's text in `lang`; undefined when a template or a parameter is missing. */
export function renderMessage(m: Message, templates: MessageTemplates, lang: MessageLang): string | undefined {
  const template = templates[m.id]?.[lang];
  if (template === undefined) return undefined;
  let missing = false;
  const text = template.replace(PLACEHOLDER, (_, name: string, data: string | undefined) => {
    const v = m.params[name];
    const s = paramText(v, templates, lang, data !== undefined);
    if (s === undefined) missing = true;
    return s ?? '';
  });
  return missing ? undefined : text;
}

function paramText(v: Json | undefined, templates: MessageTemplates, lang: MessageLang, data: boolean): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (isMessage(v)) return renderMessage(v, templates, lang);
  if (Array.isArray(v)) {
    const parts = v.map((x) => paramText(x, templates, lang, data));
    return parts.some((p) => p === undefined) ? undefined : parts.join(', ');
  }
  // A number marked as data (an id a site's rule passes as a number: a door, an order number) is
  // the site's data as stored, quoted as a string there is; an unmarked one is a quantity.
  if (typeof v === 'number' && !data) return numberText(v, lang);
  if (typeof v === 'object') return undefined;
  const [open, close] = data && (typeof v === 'string' || typeof v === 'number') ? DATA_QUOTES[lang] : ['', ''];
  return `${open}${String(v)}${close}`;
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
