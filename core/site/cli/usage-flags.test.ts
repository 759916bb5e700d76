// Every `tilstand` command's usage shows every flag the command takes, each with what to type after
// it, and shows no flag it refuses (`decide` took --json and its usage did not say so; the hq
// commands took --access-key/--secret-key/--cache unseen). Black-box: the commands come from
// `tilstand help`, what a command takes from the list its unknown-option error prints, whether a
// flag takes a value from the parser's "expects a value" (never running the command: an unknown
// option always follows), and what it shows from its own `--help`.
import { describe, expect, it } from 'vitest';
import { runMain } from './test-support.ts';

const BOGUS = '--zz-not-an-option';

/** The commands `tilstand help` lists: the words after `tilstand` up to the first flag or placeholder. */
async function commands(): Promise<string[][]> {
  const help = await runMain(['help']);
  expect(help.code).toBe(0);
  const out = new Map<string, string[]>();
  for (const line of help.out.split('\n')) {
    const m = /^ {2}tilstand ((?:[a-z][a-z-]*(?: |$))+)/.exec(line);
    if (!m) continue;
    const words = m[1]!.trim().split(' ');
    if (words.length === 1 && (words[0] === 'help' || words[0] === 'table')) continue;
    out.set(words.join(' '), words);
  }
  return [...out.values()];
}

/** The block of a command's `--help` output that is its own: its line and the lines continuing it. */
function ownUsage(helpText: string, command: string): string {
  const own: string[] = [];
  let taking = false;
  for (const line of helpText.split('\n')) {
    const start = /^(?:usage: | {2})tilstand (.*)$/.exec(line);
    if (start) taking = start[1]!.startsWith(`${command} `) || start[1] === command;
    if (taking) own.push(line);
  }
  return own.join('\n');
}

describe('tilstand usage against the flags each command takes', () => {
  it('every flag taken is in the usage, with its value; every flag in the usage is taken', async () => {
    const found = await commands();
    const names = found.map((c) => c.join(' '));
    // The list really is the commands (a parse gone wrong would check nothing).
    for (const c of ['init', 'status', 'start', 'decide', 'proposals', 'agent run', 'evidence', 'users add', 'deadletters dismiss', 'hq tables', 'hq export', 'sync now', 'restore', 'table put', 'table tag create', 'replay export', 'replay run', 'replay diff']) {
      expect(names, c).toContain(c);
    }
    let flagsChecked = 0;
    const problems: string[] = [];
    for (const words of found) {
      const name = words.join(' ');
      const refused = await runMain([...words, BOGUS]);
      const listed = /\(options: ([^)]*)\)/.exec(refused.err);
      expect([refused.code, listed !== null], `${name}: ${refused.err}`).toEqual([2, true]);
      const taken = listed![1]!.split(', ');
      const help = await runMain([...words, '--help']);
      expect(help.code, name).toBe(0);
      const usage = ownUsage(help.out, name);
      expect(usage, name).not.toBe('');
      for (const flag of taken) {
        flagsChecked++;
        // A flag followed by an unknown option: a switch passes it to the parser, which refuses
        // the unknown one; a flag with a value says it expects one, and what.
        const probe = await runMain([...words, flag, BOGUS]);
        expect(probe.code, `${name} ${flag}`).toBe(2);
        const takesValue = probe.err.includes(`option '${flag}' expects a value`);
        const shown = takesValue ? new RegExp(`${flag}[ =][^\\s|\\]]`) : new RegExp(`${flag}(?![a-z0-9-])`);
        if (!shown.test(usage)) problems.push(`${name}: takes ${flag}${takesValue ? ' <value>' : ''}, its usage does not show it${takesValue ? ' with a value' : ''}`);
      }
      for (const [used] of usage.matchAll(/--[a-z][a-z0-9-]*/g)) {
        if (!taken.includes(used)) problems.push(`${name}: its usage shows ${used}, which it refuses`);
      }
    }
    expect(problems).toEqual([]);
    expect(flagsChecked).toBeGreaterThan(100);
  }, 120_000);
});
