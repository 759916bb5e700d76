// Why a tag never reached HQ comes to the floor UI as a kind (core/site api.ts SyncDropKind, in the
// sync view's `dropped`), which the renderer words in each of its languages: a kind added to the
// site without an entry here fails the type check, and one the renderer does not word would be
// shown by its generic sentence with the site's English reason.
import { describe, expect, it } from 'vitest';
import type { SyncDropKind } from '../../core/site/api.ts';
import type { DropKind } from '../../core/sync/engine.ts';
import { MESSAGES, syncDroppedKey, type Lang } from '../../renderer/src/i18n/messages.ts';

/** Every kind the site sends. Typed by the kind: one added to the site without an entry here fails the type check. */
const KINDS: Record<SyncDropKind, true> = { deleted: true };

// The engine's kinds are the site's: one the engine adds must be added to the site API too.
const engineKinds: Record<DropKind, SyncDropKind> = { deleted: 'deleted' };

describe('the kinds of a dropped tag, worded by the renderer', () => {
  it('each in its own sentence, in every language', () => {
    expect(Object.values(engineKinds).every((k) => k in KINDS)).toBe(true);
    for (const kind of Object.keys(KINDS)) {
      const key = syncDroppedKey(kind);
      expect(key, kind).not.toBe('sync.dropped.other');
      for (const lang of Object.keys(MESSAGES) as Lang[]) {
        const text = MESSAGES[lang][key];
        expect(text, `${lang} ${key}`).toMatch(/\{tag\}/);
        expect(text, `${lang} ${key}`).toMatch(/\{table\}/);
        expect(text, `${lang} ${key}`).toMatch(/\{when\}/);
        if (lang !== 'en') expect(text, `${lang} ${key}`).not.toBe(MESSAGES.en[key]);
      }
    }
  });
});
