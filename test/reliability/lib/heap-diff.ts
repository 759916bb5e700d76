// What grew between two V8 heap snapshots of one process, and who holds it.
//
//   node bin/run-ts.mjs test/reliability/lib/heap-diff.ts <earlier.heapsnapshot> <later.heapsnapshot> [--top N]
//
// The soak writes such pairs when TILSTAND_SOAK_HEAP_DIR is set (README.md, "Investigating memory
// growth"); any two `v8.writeHeapSnapshot()` / `--heapsnapshot-signal` files of one process do.
//
// V8 keeps an object's snapshot id for its lifetime, so "new" means "id absent from the earlier
// snapshot" (not "id above its largest": synthetic nodes carry huge ids). For each new object the
// shortest path from the GC roots (breadth-first over strong edges) is climbed until it reaches an
// object that already existed: that object and the edge below it are the *holder*. New objects
// are summed per holder, so a cache that grows shows as one line — "held by Map .table", its path
// ending "ManifestStore.lists > RecentCache.map" — however many kinds of object hang below it. Per holder the path from the root
// is printed (the way to find it in code), and the constructors of what it holds.
//
// Self sizes only (V8's shallow sizes), the unit DevTools shows in its "Shallow size" column.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The parts of a `.heapsnapshot` (V8's JSON) this tool reads. */
export interface HeapSnapshot {
  nodeCount: number;
  /** Per node: type name, name, id, self size, first edge index, edge count. */
  type: string[];
  name: string[];
  id: Float64Array;
  selfSize: Float64Array;
  firstEdge: Uint32Array;
  edgeCount: Uint32Array;
  /** Per edge: type name, name (property, or `[index]`), target node index. */
  edgeType: string[];
  edgeName: string[];
  edgeTo: Uint32Array;
}

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Parses a `.heapsnapshot` file; throws naming the file when it is not one. */
export function loadHeapSnapshot(path: string): HeapSnapshot {
  let raw: RawSnapshot;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8')) as RawSnapshot;
  } catch (e) {
    throw new Error(`${path}: not a heap snapshot (${(e as Error).message})`);
  }
  const meta = raw?.snapshot?.meta;
  if (!meta || !Array.isArray(raw.nodes) || !Array.isArray(raw.edges) || !Array.isArray(raw.strings)) {
    throw new Error(`${path}: not a heap snapshot (no snapshot.meta, nodes, edges or strings)`);
  }
  const nf = meta.node_fields;
  const ef = meta.edge_fields;
  const F = nf.length;
  const E = ef.length;
  const [ti, ni, ii, si, ci] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) => nf.indexOf(f));
  const [eti, eni, eto] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f));
  if ([ti, ni, ii, si, ci, eti, eni, eto].some((i) => i! < 0)) throw new Error(`${path}: heap snapshot fields not understood (${nf.join(',')} / ${ef.join(',')})`);
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const n = raw.nodes.length / F;
  const s: HeapSnapshot = {
    nodeCount: n,
    type: new Array<string>(n),
    name: new Array<string>(n),
    id: new Float64Array(n),
    selfSize: new Float64Array(n),
    firstEdge: new Uint32Array(n),
    edgeCount: new Uint32Array(n),
    edgeType: new Array<string>(raw.edges.length / E),
    edgeName: new Array<string>(raw.edges.length / E),
    edgeTo: new Uint32Array(raw.edges.length / E),
  };
  let edge = 0;
  for (let i = 0; i < n; i++) {
    const o = i * F;
    s.type[i] = nodeTypes[raw.nodes[o + ti!]!]!;
    s.name[i] = raw.strings[raw.nodes[o + ni!]!]!;
    s.id[i] = raw.nodes[o + ii!]!;
    s.selfSize[i] = raw.nodes[o + si!]!;
    s.firstEdge[i] = edge;
    s.edgeCount[i] = raw.nodes[o + ci!]!;
    edge += s.edgeCount[i]!;
  }
  for (let e = 0; e < s.edgeTo.length; e++) {
    const o = e * E;
    const t = edgeTypes[raw.edges[o + eti!]!]!;
    const v = raw.edges[o + eni!]!;
    s.edgeType[e] = t;
    // element and hidden edges carry an index; the rest a string-table index.
    s.edgeName[e] = t === 'element' || t === 'hidden' ? `[${v}]` : String(raw.strings[v]);
    s.edgeTo[e] = raw.edges[o + eto!]! / F;
  }
  return s;
}

/** `Map`, `closure updateTags`, `string "abc…"`: a node as a person reading code recognises it. */
export function nodeLabel(s: HeapSnapshot, i: number): string {
  if (i === 0) return '(root)';
  const t = s.type[i]!;
  const name = s.name[i]!;
  if (t === 'object' || t === 'native' || t === 'synthetic') return name.length > 60 ? `${name.slice(0, 60)}…` : name;
  if (t === 'string' || t === 'concatenated string' || t === 'sliced string') return `string ${JSON.stringify(name.slice(0, 30))}${name.length > 30 ? '…' : ''}`;
  return `${t} ${name.slice(0, 40)}`.trim();
}

/**
 * Breadth-first from the root (node 0) over strong edges: each reachable node's parent and the
 * edge that reached it (-1 for the root and for nodes reachable only through weak edges).
 */
export function shortestRetainers(s: HeapSnapshot): { parent: Int32Array; via: Int32Array } {
  const parent = new Int32Array(s.nodeCount).fill(-1);
  const via = new Int32Array(s.nodeCount).fill(-1);
  const seen = new Uint8Array(s.nodeCount);
  const queue = new Uint32Array(s.nodeCount);
  let head = 0;
  let tail = 0;
  queue[tail++] = 0;
  seen[0] = 1;
  while (head < tail) {
    const i = queue[head++]!;
    const end = s.firstEdge[i]! + s.edgeCount[i]!;
    for (let e = s.firstEdge[i]!; e < end; e++) {
      if (s.edgeType[e] === 'weak') continue;
      const to = s.edgeTo[e]!;
      if (seen[to]) continue;
      seen[to] = 1;
      parent[to] = i;
      via[to] = e;
      queue[tail++] = to;
    }
  }
  return { parent, via };
}

export interface Holder {
  /** The object that existed in the earlier snapshot and holds the new ones ("(unreachable)" when none). */
  holder: string;
  /** The edge from the holder down to the new objects (a property name or `[index]`). */
  edge: string;
  /** The holder's shortest path from the root, root first, as `label.edge` steps. */
  path: string[];
  count: number;
  bytes: number;
  /** The new objects below this holder by label, largest first (at most 5). */
  kinds: Array<{ label: string; count: number; bytes: number }>;
}

export interface HeapDiff {
  newCount: number;
  newBytes: number;
  /** The earlier and later snapshots' total self sizes. */
  totalBytes: [number, number];
  holders: Holder[];
}

/** How many steps of a holder's path from the root are kept (the nearest ones). */
const PATH_STEPS = 12;

/** What `later` holds that `earlier` did not, summed per holder (largest first, `top` of them). */
export function diffHeaps(earlier: HeapSnapshot, later: HeapSnapshot, top = 15): HeapDiff {
  const before = new Set<number>();
  for (let i = 0; i < earlier.nodeCount; i++) before.add(earlier.id[i]!);
  const { parent, via } = shortestRetainers(later);
  const groups = new Map<string, { node: number; edge: string; count: number; bytes: number; kinds: Map<string, { count: number; bytes: number }> }>();
  let newCount = 0;
  let newBytes = 0;
  // Per new node, once known: the nearest old node on its shortest path (-1: none) and the edge
  // leaving that node. Memoized, so a long chain of new objects (a linked list) is climbed once.
  const UNKNOWN = -2;
  const holderOf = new Int32Array(later.nodeCount).fill(UNKNOWN);
  const edgeOf = new Int32Array(later.nodeCount).fill(-1);
  const chain: number[] = [];
  for (let i = 0; i < later.nodeCount; i++) {
    if (before.has(later.id[i]!)) continue;
    const size = later.selfSize[i]!;
    newCount++;
    newBytes += size;
    // Climb to the nearest old object on the shortest path; the edge below it names the growth.
    let cur = i;
    let holder = -1;
    let edge = -1;
    chain.length = 0;
    for (;;) {
      if (holderOf[cur] !== UNKNOWN) {
        holder = holderOf[cur]!;
        edge = edgeOf[cur]!;
        break;
      }
      chain.push(cur);
      const p = parent[cur]!;
      if (p < 0) break; // reachable through weak edges only
      if (before.has(later.id[p]!)) {
        holder = p;
        edge = via[cur]!;
        break;
      }
      cur = p;
    }
    for (const c of chain) {
      holderOf[c] = holder;
      edgeOf[c] = edge;
    }
    const old = holder >= 0;
    const key = old ? `${holder}\u0000${later.edgeName[edge]}` : '(unreachable)';
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { node: holder, edge: old ? later.edgeName[edge]! : '', count: 0, bytes: 0, kinds: new Map() }));
    g.count++;
    g.bytes += size;
    const label = nodeLabel(later, i);
    const kindKey = later.type[i] === 'object' ? label : later.type[i]!;
    const k = g.kinds.get(kindKey) ?? { count: 0, bytes: 0 };
    k.count++;
    k.bytes += size;
    g.kinds.set(kindKey, k);
  }
  const holders = [...groups.values()]
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top)
    .map((g): Holder => {
      const path: string[] = [];
      // (The root's own step is left out: its edges lead to the global object and the GC roots' groups.)
      for (let cur = g.node; cur >= 0 && parent[cur]! > 0 && path.length < PATH_STEPS; cur = parent[cur]!) {
        path.unshift(`${nodeLabel(later, parent[cur]!)}.${later.edgeName[via[cur]!]}`);
      }
      return {
        holder: g.node >= 0 ? nodeLabel(later, g.node) : '(unreachable)',
        edge: g.edge,
        path,
        count: g.count,
        bytes: g.bytes,
        kinds: [...g.kinds].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 5).map(([label, v]) => ({ label, ...v })),
      };
    });
  const total = (s: HeapSnapshot) => s.selfSize.reduce((a, b) => a + b, 0);
  return { newCount, newBytes, totalBytes: [total(earlier), total(later)], holders };
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;

/** The report a person reads: totals, then each holder with its path and what it holds. */
export function formatHeapDiff(d: HeapDiff): string {
  const out = [
    `heap (self sizes): ${mib(d.totalBytes[0])} -> ${mib(d.totalBytes[1])}; objects new in the later snapshot: ${d.newCount.toLocaleString('en-US')}, ${mib(d.newBytes)}`,
    '',
  ];
  for (const h of d.holders) {
    out.push(`${mib(h.bytes).padStart(12)}  ${String(h.count).padStart(9)} objects  held by ${h.holder}${h.edge ? ` .${h.edge}` : ''}`);
    if (h.path.length > 0) out.push(`${' '.repeat(14)}path: ${h.path.join(' > ')}`);
    out.push(`${' '.repeat(14)}of which: ${h.kinds.map((k) => `${k.label} ${k.count} (${mib(k.bytes)})`).join(', ')}`);
  }
  return out.join('\n');
}

if (process.argv[1] && import.meta.filename === resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const t = args.indexOf('--top');
  const top = t >= 0 ? Number(args.splice(t, 2)[1]) : 15;
  if (args.length !== 2 || !Number.isInteger(top) || top < 1) {
    console.error('usage: heap-diff.ts <earlier.heapsnapshot> <later.heapsnapshot> [--top N]  (N: a positive integer)');
    process.exit(2);
  }
  console.log(formatHeapDiff(diffHeaps(loadHeapSnapshot(args[0]!), loadHeapSnapshot(args[1]!), top)));
}
