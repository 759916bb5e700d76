// What the operator's documents tell them to type exists: every `tilstand <command>` that
// docs/operations.md and README.md show (in an inline code span that starts with `tilstand `,
// after `tilstand.mjs ` anywhere, or as `npm start -- …`) is a command `tilstand help` lists,
// and every flag shown with it is in that command's usage. A command renamed or a flag dropped in the code leaves these pages
// telling a site to type what is refused; this keeps the two together.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../core/site/cli/test-support.ts';

const ROOT = join(import.meta.dirname, '..');
const DOCS = ['docs/operations.md', 'README.md'];

/** Each command of `tilstand help` (its words) with the text of its usage: its line and the lines continuing it. */
function usageBlocks(help: string): Map<string, string> {
  const blocks = new Map<string, string>();
  let current: string | null = null;
  let hqFlags = '';
  for (const line of help.split('\n')) {
    const start = /^ {2}tilstand ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)/.exec(line);
    if (start) {
      current = start[1]!;
      blocks.set(current, `${blocks.get(current) ?? ''}\n${line}`);
    } else if (/^\s+every hq command takes/.test(line)) {
      hqFlags = line; // the flags every hq command takes, said once under them
      current = null;
    } else if (current !== null && /^\s{3,}\S/.test(line)) {
      blocks.set(current, `${blocks.get(current)}\n${line}`);
    } else {
      current = null;
    }
  }
  for (const [k, v] of blocks) if (k.startsWith('hq ')) blocks.set(k, `${v}\n${hqFlags}`);
  return blocks;
}

interface Mention { doc: string; words: string[]; flags: string[]; text: string }

/** The `tilstand` commands a document shows, with the flags written after them. */
function mentions(doc: string, text: string): Mention[] {
  const out: Mention[] = [];
  const take = (span: string) => {
    const m = /^((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)(.*)$/s.exec(span);
    if (!m) return; // `tilstand …`: no command named
    out.push({ doc, words: m[1]!.split(' '), flags: [...m[2]!.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((f) => f[0]), text: span.replace(/\s+/g, ' ') });
  };
  // Inline code spans (fenced blocks taken out first: their lines are read below).
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const span of prose.matchAll(/`([^`]+)`/g)) {
    const s = span[1]!.trim();
    if (s.startsWith('tilstand ')) take(s.slice('tilstand '.length));
  }
  // `node …/tilstand.mjs <command> …`, in prose and in fenced blocks, up to the end of its line or span.
  for (const m of text.matchAll(/tilstand\.mjs ([^`"\n]*)/g)) take(m[1]!.replace(/\s+#.*$/, ''));
  // `npm start -- …` is `tilstand start …` (package.json's start script).
  for (const m of text.matchAll(/npm start -- ([^`\n]*)/g)) take(`start ${m[1]!.replace(/\s+#.*$/, '')}`);
  return out;
}

/** The help commands a mention names: the longest one its words start with, else every command under its words (`tilstand hq …`). */
function commandsOf(words: string[], blocks: Map<string, string>): string[] {
  for (let n = words.length; n >= 1; n--) {
    const key = words.slice(0, n).join(' ');
    if (blocks.has(key)) return [key];
  }
  for (let n = words.length; n >= 1; n--) {
    const prefix = `${words.slice(0, n).join(' ')} `;
    const under = [...blocks.keys()].filter((k) => k.startsWith(prefix));
    if (under.length > 0) return under;
  }
  return [];
}

describe('the commands and flags the operator documents show', () => {
  it('are listed by tilstand help, each flag in its command\'s usage', async () => {
    const help = await runMain(['help']);
    expect(help.code).toBe(0);
    // `npm start -- …` is read as `tilstand start …` only while the script says so.
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start).toMatch(/tilstand\.mjs start$/);
    const blocks = usageBlocks(help.out);
    expect(blocks.size).toBeGreaterThan(30); // the parse found the usage, not an empty map that passes anything
    const problems: string[] = [];
    let checked = 0;
    for (const doc of DOCS) {
      for (const m of mentions(doc, readFileSync(join(ROOT, doc), 'utf8'))) {
        checked++;
        const cmds = commandsOf(m.words, blocks);
        if (cmds.length === 0) {
          problems.push(`${m.doc}: \`tilstand ${m.text}\`: tilstand help lists no command "${m.words.join(' ')}"`);
          continue;
        }
        const usage = cmds.map((c) => blocks.get(c)).join('\n');
        for (const f of m.flags) {
          if (!new RegExp(`(?<![\\w-])${f}(?![\\w-])`).test(usage)) problems.push(`${m.doc}: \`tilstand ${m.text}\`: ${f} is not in the usage of ${cmds.join(', ')}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(problems).toEqual([]);
  });
});
