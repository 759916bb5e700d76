// The agents' texts in the floor's languages. A rule says its explanation and risk reason as
// messages (an id and parameters, core/inbox `Message`) and keeps a template per id and language
// beside its code (`Rule.messages`); the fragments several rules share are here. The agent
// renders each message in English for the proposal's stored text — the record HQ and the audit
// read — and stores the messages beside it, so the site can show the same proposal in Norwegian
// or German (`translations`).
//
// Templates: `{name}` is the parameter `name`. A parameter that is itself a message (`msg(…)`)
// is rendered in the same language; an array is joined with ", "; a number or string as it is.
// A template names the same parameters in every language (tested), so a message that renders in
// English renders in all of them. A stored message whose id or parameter a later version no
// longer has renders as undefined, and the reader falls back to the stored English text.

import type { Json, Message, Proposal, ProposalMessages } from '../inbox/index.ts';
import { AgentError } from './errors.ts';

export const MESSAGE_LANGS = ['en', 'nb', 'de'] as const;
export type MessageLang = (typeof MESSAGE_LANGS)[number];

/** Message id → its template in each language. */
export type MessageTemplates = Readonly<Record<string, Readonly<Record<MessageLang, string>>>>;

/** A message: its id and parameters (a parameter may be a message). */
export const msg = (id: string, params: Readonly<Record<string, Json>> = {}): Message => ({ id, params });

/** Fragments shared by the rules. */
export const SHARED_MESSAGES: MessageTemplates = {
  'job.released': { en: 'released', nb: 'frigitt', de: 'freigegeben' },
  'job.blocked': { en: 'blocked ({reason})', nb: 'blokkert ({reason})', de: 'blockiert ({reason})' },
  'reason.none': { en: 'no reason', nb: 'ingen årsak', de: 'kein Grund' },
  'reason.notGiven': { en: 'no reason given', nb: 'ingen årsak oppgitt', de: 'kein Grund angegeben' },
  'capability.unknown': { en: 'unknown capability', nb: 'ukjent ferdighet', de: 'unbekannte Fähigkeit' },
  'list.more': { en: '{ids} and {n} more', nb: '{ids} og {n} til', de: '{ids} und {n} weitere' },
};

const isMessage = (v: unknown): v is Message =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Message).id === 'string' && typeof (v as Message).params === 'object' && (v as Message).params !== null;

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
      all[id] = t;
    }
  }
  return all;
}

/** The texts of a proposal in one language. */
export interface ProposalTexts {
  explanation?: string;
  riskReason?: string;
}

/**
 * A proposal's explanation and risk reason in each language but English (the stored text is the
 * English), each where its message renders; a language with neither is left out.
 */
export function translations(p: Pick<Proposal, 'messages'>, templates: MessageTemplates): Partial<Record<MessageLang, ProposalTexts>> {
  const out: Partial<Record<MessageLang, ProposalTexts>> = {};
  const m: ProposalMessages | undefined = p.messages;
  if (!m) return out;
  for (const lang of MESSAGE_LANGS) {
    if (lang === 'en') continue;
    const explanation = renderMessage(m.explanation, templates, lang);
    const riskReason = renderMessage(m.riskReason, templates, lang);
    if (explanation === undefined && riskReason === undefined) continue;
    out[lang] = { ...(explanation !== undefined ? { explanation } : {}), ...(riskReason !== undefined ? { riskReason } : {}) };
  }
  return out;
}
