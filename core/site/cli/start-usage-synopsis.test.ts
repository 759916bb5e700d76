// `tilstand start --help`: its synopsis (the first line, the flags in brackets) shows every flag
// start takes; --no-agent-timer was named only in the description below it.
import { describe, expect, it } from 'vitest';
import { runMain } from './test-support.ts';

describe('tilstand start usage', () => {
  it('lists every flag start takes in its synopsis line', async () => {
    const refused = await runMain(['start', '--zz-not-an-option']);
    const taken = /\(options: ([^)]*)\)/.exec(refused.err)![1]!.split(', ');
    expect(taken).toContain('--no-agent-timer');
    const help = await runMain(['start', '--help']);
    const synopsis = help.out.split('\n').find((l) => l.startsWith('  tilstand start '))!;
    for (const flag of taken) expect.soft(synopsis, flag).toMatch(new RegExp(`\\[${flag}(?![a-z-])`));
  });
});
