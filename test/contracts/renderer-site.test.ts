// The renderer imports only types from core (scripts/check-imports.mjs), and its client needs the
// DOM's types, so the few names it keeps of its own are read from its source here and checked
// against the site's: its API methods, the client-error report's method, the input-age header and
// the close code of an ended session's event socket. And every refusal code the site sends
// (api.ts RefusalCode) is worded by the renderer in each of its languages, English included.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENT_ERROR_METHOD, INPUT_AGE_HEADER, REFUSAL_CODES, SITE_METHODS, type RefusalCode } from '../../core/site/api.ts';
import { SESSION_ENDED_CODE } from '../../core/site/ui-server.ts';
import { MESSAGES, refusalText, type Lang } from '../../renderer/src/i18n/messages.ts';

const client = readFileSync(join(__dirname, '../../renderer/src/api/client.ts'), 'utf8');
const constant = (name: string): string => {
  const m = new RegExp(`^export const ${name} = ([^;]+);$`, 'm').exec(client);
  if (!m) throw new Error(`renderer/src/api/client.ts has no \`export const ${name} = …;\``);
  return m[1]!;
};

describe("the renderer's copies of the site's names", () => {
  it("knows every method of the site's API", () => {
    const list = /^const METHODS: SiteMethod\[\] = \[([^\]]*)\];$/m.exec(client)?.[1];
    expect(list).toBeDefined();
    expect([...list!.matchAll(/'(\w+)'/g)].map((m) => m[1]).sort()).toEqual([...SITE_METHODS].sort());
  });

  it('sends the input age in the header the site reads (HTTP headers are case-insensitive)', () => {
    expect(constant('INPUT_AGE_HEADER').toLowerCase()).toBe(`'${INPUT_AGE_HEADER}'`);
  });

  it("knows the close code the site ends a session's event socket with", () => {
    expect(constant('SESSION_ENDED_CODE')).toBe(String(SESSION_ENDED_CODE));
  });

  it("sends its error reports under the method the site answers them at (not a SiteMethod: the transport's)", () => {
    const m = /^const CLIENT_ERROR_METHOD = ([^;]+);$/m.exec(client);
    expect(m, 'renderer/src/api/client.ts: `const CLIENT_ERROR_METHOD = …;`').not.toBeNull();
    expect(m![1]).toBe(`'${CLIENT_ERROR_METHOD}'`);
  });
});

/**
 * A refusal of each code with the params the site sends with it (api.ts RefusalCode's comment).
 * Typed by the code: a code added to the site without an entry here fails the type check.
 */
const SAMPLES: Record<RefusalCode, Record<string, string | number> | undefined> = {
  'signin.wrong': { left: 2 },
  'signin.locked': { untilMs: Date.UTC(2026, 11, 5, 9, 30) },
  'signin.badgeUnknown': { left: 2 },
  'signin.badgeLocked': { untilMs: Date.UTC(2026, 11, 5, 9, 30) },
  'signin.disabled': undefined,
  'signin.busy': undefined,
  'pin.guessable': { pin: '1111', why: 'repeated' },
  'role.refused': { user: 'Olav', role: 'operator', allowed: 'shift_lead,admin' },
  'proposal.notFound': { id: 'P-1' },
  'proposal.notOpen': { id: 'P-1', status: 'rejected' },
  'proposal.decidedMeanwhile': { id: 'P-1', status: 'deferred', by: 'per' },
  'user.exists': { name: 'Per' },
  'user.selfDisable': undefined,
  'user.selfDemote': undefined,
  'session.required': undefined,
  'site.notSetUp': undefined,
  'site.alreadySetUp': undefined,
  'site.stopping': undefined,
  'site.stopped': undefined,
  'init.exists': undefined,
  'init.restoredOther': { site: 'osl1' },
  'init.otherSite': { sites: 'osl1,osl2' },
  'init.restoreNote': undefined,
  'init.restoreUnfinished': undefined,
  'init.adminExists': { admin: 'kari' },
  'init.configLost': undefined,
  'session.ended': { user: 'Olav', why: 'disabled' },
  'user.nameInvalid': { name: 'a..b' },
  'user.noSecret': { name: 'Per' },
  'user.roleInvalid': { role: 'boss' },
  'user.pinInvalid': { min: 4, max: 12 },
  'user.passwordLength': { min: 8, max: 256 },
  'user.badgeLength': { min: 4, max: 256 },
  'user.badgeTaken': undefined,
  'user.notFound': { name: 'Per' },
  'reorder.levels': { item: 'BOLT', reorderPoint: 50, orderUpTo: 10 },
  'config.refused': { key: 'agent.reorderByItem.NUT' },
  'config.file': undefined,
  'input.name': { field: 'adminName', max: 64 },
  'input.tooLong': { field: 'comment', max: 2000 },
  'input.range': { field: 'policy.reorderPoint', min: 0, max: Number.MAX_SAFE_INTEGER },
  'input.refused': { field: 'ids[0]' },
  'input.characters': { field: 'comment', char: 'U+202E' },
  'request.tooLarge': { max: 65_536 },
  'request.refused': undefined,
};

describe("the renderer's words for the site's refusal codes", () => {
  const MESSAGE = 'the site’s English message';
  it.each([...REFUSAL_CODES])('%s: worded in en, nb and de (not the site’s message, nothing left unfilled), with its text in every catalog', (code) => {
    const r = { message: MESSAGE, code, ...(SAMPLES[code] ? { params: SAMPLES[code] } : {}) };
    // English too is worded from its catalog: the site's message is for logs and the CLI
    // ("request.user: not a user name: …"), and is shown only for a code a UI does not know.
    for (const lang of ['en', 'nb', 'de'] as const satisfies readonly Lang[]) {
      const text = refusalText(lang, r);
      expect(text, `${code} in ${lang}`).not.toBe(MESSAGE);
      expect(text, `${code} in ${lang}`).not.toMatch(/\{\w+\}/);
    }
    // The catalogs' words for it (refusal.<code>…), in each language, and not left in English.
    const keys = Object.keys(MESSAGES.en).filter((k) => k === `refusal.${code}` || k.startsWith(`refusal.${code}.`));
    expect(keys, `a catalog entry refusal.${code}…`).not.toHaveLength(0);
    for (const k of keys) {
      for (const lang of ['en', 'nb', 'de'] as const) expect((MESSAGES[lang] as Record<string, string>)[k], `${k} in ${lang}`).toBeTruthy();
      expect((MESSAGES.nb as Record<string, string>)[k], `${k} in nb`).not.toBe((MESSAGES.en as Record<string, string>)[k]);
      expect((MESSAGES.de as Record<string, string>)[k], `${k} in de`).not.toBe((MESSAGES.en as Record<string, string>)[k]);
    }
  });

  it('shows the site’s message for a code this UI does not know, in every language', () => {
    for (const lang of ['en', 'nb', 'de'] as const satisfies readonly Lang[]) {
      expect(refusalText(lang, { message: MESSAGE, code: 'some.newerCode', params: { x: 1 } }), lang).toBe(MESSAGE);
      expect(refusalText(lang, { message: MESSAGE }), lang).toBe(MESSAGE);
    }
  });
});
