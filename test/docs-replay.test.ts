// core/replay/README.md ("Trying a new agent version") is what an agent developer follows: record a
// period of a demo site, replay it with the agent as it is and as changed, read the difference. Its
// commands must be tilstand's and run as shown, and what it says they print must be what they
// print. The walkthrough's own lines are run here through the `tilstand` dispatcher, in order; the
// demo site they record is a LiveSite (core/replay test-support: the real ingest, inbox and agent
// on a simulated clock that ends before the wall clock's now, so `--until now` is a real end).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentSpec } from '../core/replay/agent-spec.ts';
import { DemoEvents } from '../core/replay/demo-events.ts';
import { defaultScratchParent } from '../core/replay/replay.ts';
import { LiveSite } from '../core/replay/test-support.ts';
import { runMain } from '../core/site/cli/test-support.ts';
import type { Inbox } from '../core/inbox/index.ts';

const ROOT = join(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'core/replay/README.md'), 'utf8');
const SECTION = /## Trying a new agent version\n([\s\S]*?)\n## /.exec(README)?.[1] ?? '';
const SH = /```sh\n([\s\S]*?)```/.exec(SECTION)?.[1] ?? '';
const RULES = /```json\n([\s\S]*?)```/.exec(SECTION)?.[1] ?? '';
const MIN = 60_000;

/** The walkthrough's lines: the command (without its comment) and the comment. */
const lines = SH.trimEnd()
  .split('\n')
  .map((l) => {
    const i = l.indexOf('#');
    return { cmd: (i < 0 ? l : l.slice(0, i)).trim(), comment: i < 0 ? '' : l.slice(i + 1).trim() };
  });

describe('core/replay/README.md, "Trying a new agent version"', () => {
  it('is there, with its commands and a rules config', () => {
    expect(SECTION).not.toBe('');
    expect(lines.filter((l) => l.cmd.startsWith('tilstand replay ')).length).toBeGreaterThanOrEqual(6);
    expect(RULES).not.toBe('');
  });

  it('shows only tilstand commands and flags that tilstand help lists (the commented ones too)', async () => {
    const help = (await runMain(['help'])).out;
    const usages = [...help.matchAll(/^ {2}tilstand ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)(.*)$/gm)].map((m) => ({ words: m[1]!, line: m[0] }));
    const shown = lines.flatMap((l) => [l.cmd, ...l.comment.split(/,\s*/)]).flatMap((t) => [...t.matchAll(/(?:^|\s)tilstand ([^&]+?)\s*(?:&|$)/g)].map((m) => m[1]!));
    expect(shown.length).toBeGreaterThan(8);
    const problems: string[] = [];
    for (const s of shown) {
      const usage = usages.filter((c) => s === c.words || s.startsWith(`${c.words} `)).sort((a, b) => b.words.length - a.words.length)[0];
      if (!usage) {
        problems.push(`tilstand ${s}: no such command in tilstand help`);
        continue;
      }
      // A command's usage continues on the indented lines after it.
      const rest = help.slice(help.indexOf(usage.line) + usage.line.length).split('\n').slice(1);
      const text = [usage.line, ...rest.slice(0, rest.findIndex((l) => !/^\s{5,}\S/.test(l)))].join('\n');
      for (const f of s.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) if (!new RegExp(`(?<![\\w-])${f[0]}(?![\\w-])`).test(text)) problems.push(`tilstand ${s}: ${f[0]} is not in the usage of tilstand ${usage.words}`);
    }
    expect(problems).toEqual([]);
  });

  it('its rules config is one --agent reads, with the label the page names', () => {
    const dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-docs-replay-rules-'));
    try {
      writeFileSync(join(dir, 'reorder-15.json'), RULES);
      const spec = loadAgentSpec(join(dir, 'reorder-15.json'));
      expect(spec.label).toBe('reorder-15');
      expect(spec.overrides).toEqual({ defaultReorder: { reorderPoint: 15, orderUpTo: 40 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs as written: the same agent twice differs in nothing, the changed one shows what it changed, as the page says it prints', async () => {
    const D = mkdtempSync(join(defaultScratchParent(), 'tilstand-docs-replay-'));
    // The demo site: its simulated day starts 20 minutes before now and stops 5 minutes before.
    const start = Math.floor((Date.now() - 20 * MIN) / MIN) * MIN;
    const site = new LiveSite({ startMs: start });
    const gen = new DemoEvents({ site: site.site, seed: 9 });
    site.receive(gen.initial(start + 100));
    for (let i = 0; i < 560; i++) site.receive(gen.step(start + 1000 + i * 1500 + ((i * 7919) % 1000)));
    // People: every 3 minutes, approve the oldest open assignment and reject the oldest reorder or release.
    const people = async (g: number, inbox: Inbox) => {
      if ((g - start) % (3 * MIN) !== 30_000) return;
      const open = inbox.openProposals().sort((a, b) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : 1));
      const yes = open.find((p) => p.ruleId === 'assign-job');
      if (yes) await inbox.decide(yes.id, 'approve', { user: 'lena', pin: '-' });
      const no = open.find((p) => p.ruleId === 'stock-reorder' || p.ruleId === 'release-blocked-job');
      if (no) await inbox.decide(no.id, 'reject', { user: 'lena', pin: '-', comment: 'not this shift' });
    };
    let stopped = false;
    const outputs: { cmd: string; code: number; out: string; err: string }[] = [];
    try {
      writeFileSync(join(D, 'reorder-15.json'), RULES); // the page's file, in the folder the commands run in
      for (const l of lines) {
        if (l.cmd === '' && l.comment.startsWith('…')) {
          await site.advance(start + 15 * MIN, { people }); // "a few minutes; decide some proposals"
          continue;
        }
        if (l.cmd.startsWith('D=')) continue; // the temp folder: D above
        if (l.cmd.startsWith('tilstand start ')) {
          expect(l.cmd).toContain('--data $D/data');
          await site.advance(start + 10 * MIN); // up and running when the cut is made
          continue;
        }
        if (l.cmd === 'kill %1') {
          site.close();
          stopped = true;
          continue;
        }
        if (l.cmd.startsWith('rm -rf $D')) continue; // done in finally, after the checks
        expect(l.cmd, 'a walkthrough line this test knows').toMatch(/^tilstand replay /);
        const argv = l.cmd
          .replaceAll('$D/data', site.dir)
          .replaceAll('$D', D)
          .split(/\s+/)
          .slice(1)
          .map((a) => (a === 'reorder-15.json' ? join(D, a) : a));
        const r = await runMain(argv);
        outputs.push({ cmd: l.cmd, ...r });
        expect(r.code, `${l.cmd}\n${r.err}`).toBe(0);
      }
      expect(stopped).toBe(true);
      const diffs = outputs.filter((o) => o.cmd.startsWith('tilstand replay diff '));
      expect(diffs).toHaveLength(2);
      // The same agent twice: nothing added, removed or changed.
      expect(diffs[0]!.out).toMatch(/^default → default: 0 added, 0 removed, 0 changed, [1-9]\d* unchanged; agreement \S+ → \S+; gate passed\n$/);
      // The changed agent: the line has the shape the page shows, and the report the files it names.
      const shape = /`replay diff` prints one line \(`([^`]+)`\)/.exec(SECTION.replace(/\n/g, ' '))![1]!.replace(/\d+(\.\d+)?/g, '#');
      expect(diffs[1]!.out.trimEnd().replace(/\d+(\.\d+)?/g, '#')).toBe(shape);
      const report = join(D, 'report');
      for (const f of ['report.md', 'report.html', 'report.json']) expect(existsSync(join(report, f)), f).toBe(true);
      const json = JSON.parse(readFileSync(join(report, 'report.json'), 'utf8')) as { summary: Record<string, number>; perRule: Record<string, { added: number; changed: number }>; gate: { passed: boolean } };
      for (const k of ['agentChanges', 'summary', 'perRule', 'agreement', 'examples', 'gate']) expect(json, k).toHaveProperty(k);
      // It says what the candidate changes: the reorder point of the page's rules config, nothing else.
      expect((json as unknown as { agentChanges: unknown }).agentChanges).toEqual({ rules: [], config: [{ key: 'defaultReorder', baseline: { orderUpTo: 20, reorderPoint: 5 }, candidate: { orderUpTo: 40, reorderPoint: 15 } }] });
      // A raised reorder point orders more: stock-reorder has proposals the current agent does not.
      expect(json.perRule['stock-reorder']!.added + json.perRule['stock-reorder']!.changed).toBeGreaterThan(0);
      expect(json.gate.passed).toBe(true);
    } finally {
      site.remove();
      rmSync(D, { recursive: true, force: true });
    }
  }, 180_000);
});
