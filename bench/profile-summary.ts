// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time per function and per file, and
// inclusive time of selected functions. Usage:
//   node bin/run-ts.mjs bench/profile-summary.ts <file.cpuprofile> [topN] [inclusiveNameRegex]
import * as fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export function summarize(p: Profile, top = 25, inclusive?: RegExp): string {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const short = (url: string) => url.replace(/^file:\/\/.*?\/work\/main\//, '').replace(/^file:\/\//, '');
  const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    fn.set(label(n), (fn.get(label(n)) ?? 0) + t);
    const f = short(n.callFrame.url) || `(${n.callFrame.functionName})`;
    file.set(f, (file.get(f) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)} %`;
  const out = [`total sampled ${(total / 1e6).toFixed(2)} s`, '', 'self time by function:'];
  for (const [k, t] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(`${pct(t)}  ${k}`);
  out.push('', 'self time by file:');
  for (const [k, t] of [...file].sort((a, b) => b[1] - a[1]).slice(0, top)) out.push(`${pct(t)}  ${k}`);
  if (inclusive) {
    // Inclusive time: samples whose stack contains a frame matching the regex (counted once).
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const memo = new Map<number, string[]>();
    const matches = (id: number): string[] => {
      const m = memo.get(id);
      if (m) return m;
      const n = byId.get(id)!;
      const up = parent.has(id) ? matches(parent.get(id)!) : [];
      const mine = inclusive.test(n.callFrame.functionName) ? [n.callFrame.functionName] : [];
      const r = [...new Set([...up, ...mine])];
      memo.set(id, r);
      return r;
    };
    const inc = new Map<string, number>();
    for (const [id, t] of self) for (const name of matches(id)) inc.set(name, (inc.get(name) ?? 0) + t);
    out.push('', `inclusive time of functions matching ${inclusive}:`);
    for (const [k, t] of [...inc].sort((a, b) => b[1] - a[1])) out.push(`${pct(t)}  ${k}`);
  }
  return out.join('\n');
}

if (process.argv[1]?.endsWith('profile-summary.ts')) {
  const [file, top, re] = process.argv.slice(2);
  if (!file) {
    console.error('usage: profile-summary.ts <file.cpuprofile> [topN] [inclusiveNameRegex]');
    process.exit(2);
  }
  console.log(summarize(JSON.parse(fs.readFileSync(file, 'utf8')) as Profile, Number(top ?? 25), re ? new RegExp(re) : undefined));
}
