// A decision's comment and a dismissal's note are shown on the floor PC and, synced, at HQ: a bidi
// embedding, override or isolate control (U+202A–202E, U+2066–2069) in one turned the text after
// it around ("\u202Eevorppa" shows as "approve"). Refused at the API's boundary, naming the field
// and the character (`input.characters`, its own code: the floor UI worded the generic
// `input.refused` as "reload the page … tell IT" for a pasted comment); right-to-left text itself, and the marks U+200E/200F, are taken.
import { describe, expect, it } from 'vitest';
import { ApiValidationError, validateCall } from './api-validate.ts';

const BIDI = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069].map((c) => String.fromCodePoint(c));

function refusal(method: Parameters<typeof validateCall>[0], req: unknown): ApiValidationError {
  try {
    validateCall(method, req);
  } catch (e) {
    if (e instanceof ApiValidationError) return e;
    throw e;
  }
  throw new Error('not refused');
}

describe('bidi controls in free text', () => {
  it.each(BIDI)('decide.comment with U+%s is refused naming the field and the character', (ch) => {
    const code = `U+${ch.codePointAt(0)!.toString(16).toUpperCase()}`;
    const e = refusal('decide', { id: 'P-1', decision: 'approve', comment: `ok ${ch}evorppa` });
    expect(e.message).toBe(`request.comment: must not contain ${code}, a direction-changing character (the text after it would show reversed)`);
    expect(e.refusal).toEqual({ code: 'input.characters', params: { field: 'comment', char: code } });
  });

  it.each(BIDI)('dismissDeadLetters.note with U+%s is refused naming the field', (ch) => {
    const e = refusal('dismissDeadLetters', { ids: ['12'], note: `door was ${ch}nepo` });
    expect(e.message).toMatch(/^request\.note: must not contain U\+20[26][0-9A-F], a direction-changing character/);
    expect(e.refusal.code).toBe('input.characters');
    expect(e.refusal.params?.field).toBe('note');
    expect(e.refusal.params?.char).toBe(`U+${ch.codePointAt(0)!.toString(16).toUpperCase()}`);
  });

  it('takes right-to-left text, the direction marks, and other scripts', () => {
    for (const text of ['מאושר', 'تمت الموافقة', 'ok \u200Fשלום\u200E done', 'Kåre sa ja', 'ドア 3']) {
      expect(() => validateCall('decide', { id: 'P-1', decision: 'approve', comment: text })).not.toThrow();
      expect(() => validateCall('dismissDeadLetters', { ids: ['12'], note: text })).not.toThrow();
    }
  });
});

describe('bidi controls in the CLI’s --comment and --note', () => {
  it('tilstand decide --comment and deadletters dismiss --note refuse them, exit 2, naming the option', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { initDataDir } = await import('./init.ts');
    const { runMain } = await import('./cli/test-support.ts');
    const data = mkdtempSync(join(tmpdir(), 'tilstand-bidi-cli-'));
    try {
      await initDataDir({ data, site: 'north', admin: { name: 'anna', pin: '4826' } });
      const decide = await runMain(['decide', 'P-1', 'approve', '--user', 'anna', '--pin', '4826', '--comment', 'ok \u202Eevorppa', '--data', data]);
      expect([decide.code, decide.out, decide.err]).toEqual([2, '', "tilstand: option '--comment': must not contain U+202E, a direction-changing character (the text after it would show reversed)\n"]);
      const dismiss = await runMain(['deadletters', 'dismiss', '--id', '12', '--user', 'anna', '--pin', '4826', '--note', 'door \u2067was\u2069 open', '--data', data]);
      expect([dismiss.code, dismiss.out, dismiss.err]).toEqual([2, '', "tilstand: option '--note': must not contain U+2067, a direction-changing character (the text after it would show reversed)\n"]);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});

describe('bidi controls in a dismissal note from the control socket', () => {
  it('dismissAs / dismissWithPin refuse them before anything is dismissed, InvalidArgument naming the note', async () => {
    const { dismissAs } = await import('./dismiss.ts');
    const ingestor = {} as Parameters<typeof dismissAs>[0];
    let thrown: unknown;
    try {
      await dismissAs(ingestor, [12n], 'Lena', 'door \u202Dwas open');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({ kind: 'InvalidArgument', message: 'note: must not contain U+202D, a direction-changing character (the text after it would show reversed)' });
  });
});

describe('bidi controls in a decision comment from the control socket', () => {
  it('inbox.decide refuses them, InvalidArgument naming the comment, before the inbox is asked', async () => {
    const { agentControlHandlers } = await import('./cli/agent-cli.ts');
    let asked = 0;
    const inbox = { decide: () => void asked++ } as unknown as Parameters<typeof agentControlHandlers>[1];
    const decide = new Map(agentControlHandlers({} as Parameters<typeof agentControlHandlers>[0], inbox)).get('inbox.decide')!;
    const work = { progress: () => undefined, interruptible: () => undefined };
    expect(() => decide({ proposal: 'P-1', decision: 'approve', user: 'anna', pin: '4826', comment: 'ok \u2066x' }, work)).toThrow(
      expect.objectContaining({ kind: 'InvalidArgument', message: 'comment: must not contain U+2066, a direction-changing character (the text after it would show reversed)' }),
    );
    expect(asked).toBe(0);
    decide({ proposal: 'P-1', decision: 'approve', user: 'anna', pin: '4826', comment: 'ok' }, work);
    expect(asked).toBe(1);
  });
});
