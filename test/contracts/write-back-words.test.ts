// Write-back's own command details (core/inbox timedOutDetail, notSentDetail) reach the floor UI as
// a code and numbers (core/site api.ts WRITE_BACK_CODES, core/inbox writeBackWords) beside the
// stored English; the renderer words every code in each of its languages (i18n/messages.ts
// writeBackText). They showed in the site's English in nb and de.
import { describe, expect, it } from 'vitest';
import { notSentDetail, timedOutDetail, writeBackWords, type CommandState } from '../../core/inbox/proposal.ts';
import { WRITE_BACK_CODES } from '../../core/site/api.ts';
import { MESSAGES, writeBackText, type Lang } from '../../renderer/src/i18n/messages.ts';

const STATES: CommandState[] = ['pending', 'sent', 'acknowledged', 'applied', 'failed', 'timed_out'];
/** Every detail write-back writes, one per code at least. */
const DETAILS = [...STATES.map((s) => timedOutDetail(61_000, s)), notSentDetail(600_000, 601_000)];
const LANGS = ['en', 'nb', 'de'] as const satisfies readonly Lang[];

describe("write-back's own details and the floor UI's words for them", () => {
  it('every detail write-back writes has a code the site names, and every code is written', () => {
    const codes = DETAILS.map((d) => writeBackWords(d)?.code);
    for (const c of codes) expect(WRITE_BACK_CODES as readonly unknown[]).toContain(c);
    expect([...new Set(codes)].sort()).toEqual([...WRITE_BACK_CODES].sort());
  });

  it.each(DETAILS)('%s: worded in en, nb and de (nothing left unfilled; nb and de not the English)', (detail) => {
    const words = writeBackWords(detail)!;
    const f = { value: detail, ...words };
    const text = Object.fromEntries(LANGS.map((lang) => [lang, writeBackText(lang, f)]));
    for (const lang of LANGS) expect(text[lang], lang).not.toMatch(/\{\w+\}/);
    expect(text.nb).not.toBe(detail);
    expect(text.de).not.toBe(detail);
    // The English from the catalog says what the stored English says (the state in the UI's words).
    expect(text.en).toBe(detail.replace(/\(last state: (\w+)\)$/, (_m, s: string) => `(last state: ${MESSAGES.en[`progress.${s}` as keyof typeof MESSAGES.en]})`));
  });

  it('has words for each code in every catalog, not left in English', () => {
    const keys = Object.keys(MESSAGES.en).filter((k) => k.startsWith('trail.writeBack.'));
    expect(keys).toHaveLength(WRITE_BACK_CODES.length);
    for (const k of keys) {
      for (const lang of LANGS) expect((MESSAGES[lang] as Record<string, string>)[k], `${k} in ${lang}`).toBeTruthy();
      expect((MESSAGES.nb as Record<string, string>)[k]).not.toBe((MESSAGES.en as Record<string, string>)[k]);
      expect((MESSAGES.de as Record<string, string>)[k]).not.toBe((MESSAGES.en as Record<string, string>)[k]);
    }
  });

  it("shows the site's English for a code this UI does not know", () => {
    for (const lang of LANGS) expect(writeBackText(lang, { value: 'gave up', code: 'command.newer', params: { x: 1 } })).toBe('gave up');
  });
});
