// Log recovery's merge (log-recovery.ts) of one lost commit's entries: each proposal's chain kept
// in its order, the chains merged by their next entry. It looked through every chain for each
// entry it took: for a commit of 1,000 proposals about a million comparisons, at open after a
// crash. The result must not change: a randomized comparison with that merge (the model), and a
// lost commit of many operations against the same operations logged without a crash.
import { afterEach, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import { readDecisionLog, type DecisionLogEntry } from './decision-log.ts';
import type { Inbox } from './inbox.ts';
import { mergeByHead } from './log-recovery.ts';
import { compareProposalIds } from './proposal.ts';
import { inboxTest, proposalInput } from './test-support.ts';

const test = inboxTest('tilstand-log-recovery-merge-');
afterEach(() => vi.restoreAllMocks());

/** The merge as it was: for each item, every chain's head compared. */
function modelMerge<T>(chains: readonly (readonly T[])[], order: (a: T, b: T) => number): T[] {
  const rest = chains.map((c) => [...c]);
  const out: T[] = [];
  for (;;) {
    let next: T[] | undefined;
    for (const ch of rest) if (ch.length > 0 && (next === undefined || order(ch[0]!, next[0]!) < 0)) next = ch;
    if (next === undefined) return out;
    out.push(next.shift()!);
  }
}

/** A small seeded generator (the test prints its seed). */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Item {
  chain: number;
  at: number;
  rank: number;
}
// A total order between the heads of different chains (the chain decides a tie), as the
// recovery's is (one chain per proposal, and the proposal id decides last).
const byTime = (a: Item, b: Item) => a.at - b.at || a.rank - b.rank || a.chain - b.chain;

function chainsOf(rand: () => number, n: number): Item[][] {
  return Array.from({ length: n }, (_, chain) => {
    // Mostly in time order, but not always (a clock stepped back within a chain): a chain keeps its own order.
    let at = Math.floor(rand() * 50);
    return Array.from({ length: 1 + Math.floor(rand() * 4) }, () => ({ chain, at: (at += Math.floor(rand() * 20) - 3), rank: Math.floor(rand() * 4) }));
  });
}

it('merges 1,000 chains with n log n comparisons, not one per chain per entry', () => {
  const chains = chainsOf(prng(7), 1_000);
  const total = chains.reduce((n, c) => n + c.length, 0);
  let comparisons = 0;
  const merged = mergeByHead(chains, (a, b) => (comparisons++, byTime(a, b)));
  expect(merged).toEqual(modelMerge(chains, byTime));
  // A binary heap: at most two comparisons per level per entry taken.
  expect(comparisons).toBeLessThanOrEqual(2 * total * Math.ceil(Math.log2(chains.length + 1)));
});

it('gives what the merge before it gave (randomized; the seed is printed)', () => {
  const seed = Number(process.env.MERGE_SEED ?? Date.now() % 2 ** 31);
  console.log(`log-recovery merge seed ${seed} (MERGE_SEED=${seed} repeats it)`);
  const rand = prng(seed);
  for (let round = 0; round < 200; round++) {
    const chains = chainsOf(rand, Math.floor(rand() * 40));
    expect(mergeByHead(chains, byTime), `seed ${seed}, round ${round}`).toEqual(modelMerge(chains, byTime));
  }
});

/** The next inbox commit fails once, as on a full disk: its rows stay in the writer for the next commit. */
function failNextCommit(): void {
  vi.spyOn(TableWriter.prototype, 'commit').mockImplementationOnce(() => {
    throw new Error('disk full');
  });
}

/**
 * The entries as a rebuild can give them back: the withdrawing run and the module or state that
 * moved a command on are not stored (`agent`, `write-back`), and a rebuilt entry says so. The two
 * databases are two sites (the topic names it).
 */
const comparable = (e: DecisionLogEntry) => {
  const { recovered: _, ...detail } = e.detail as Record<string, unknown>;
  if (typeof detail.topic === 'string') detail.topic = detail.topic.replace('/s2/', '/s1/');
  return { ...e, actor: e.event === 'withdrawn' ? 'agent' : e.event.startsWith('command_') ? 'write-back' : e.actor, detail };
};

/**
 * One operation's withdrawals share its time, and a rebuild puts them by proposal id in the order
 * they were made (`compareProposalIds`, not `…-10` before `…-2`): the order the agent gave them in
 * is in no row, and the agent gives them in that order (it walks `openProposals`).
 */
const byId = <T extends { id: string }>(ps: readonly T[]): T[] => [...ps].sort((a, b) => compareProposalIds(a.id, b.id));

it('a lost commit of many operations is rebuilt as the same operations logged without a crash', async () => {
  await test.users.add({ name: 'per', role: 'shift_lead', pin: '2222' });
  /** The same operations on database `db`; `crash`: each commit after the first fails, and the process stops in the last one's log commit. */
  const run = async (db: string, crash: boolean) => {
    const start = test.now;
    const inbox = test.open({ database: db });
    const op = async (f: () => unknown) => {
      test.now += 1_000;
      if (crash) failNextCommit();
      await (crash ? expect(async () => f()).rejects.toThrow('disk full') : f());
      vi.restoreAllMocks();
    };
    const r1 = inbox.submit({ runId: 'r1', proposals: Array.from({ length: 120 }, (_, i) => proposalInput(`J-${i}`, 'r1')), withdrawals: [] }).created;
    await op(() => inbox.submit({ runId: 'r2', proposals: Array.from({ length: 80 }, (_, i) => proposalInput(`K-${i}`, 'r2')), withdrawals: byId(r1.slice(0, 50)).map((p) => ({ id: p.id, reason: 'started' })) }));
    for (const p of r1.slice(50, 60)) await op(() => inbox.decide(p.id, 'defer', { user: 'per', pin: '2222', comment: `later ${p.id}` }));
    for (const p of r1.slice(50, 55)) await op(() => inbox.decide(p.id, 'approve', { user: 'lena', pin: '1111' }));
    for (const p of r1.slice(55, 58)) await op(() => inbox.decide(p.id, 'reject', { user: 'lena', pin: '1111' }));
    for (const p of r1.slice(50, 53)) await op(() => inbox.markCommand(p.id, 'sent'));
    await op(() => inbox.markCommand(r1[50]!.id, 'acknowledged', 'assigned', 'operations'));
    const last = () => inbox.submit({ runId: 'r3', proposals: Array.from({ length: 60 }, (_, i) => proposalInput(`L-${i}`, 'r3')), withdrawals: byId(inbox.openProposals().filter((p) => p.runId === 'r2').slice(0, 10)).map((p) => ({ id: p.id, reason: 'moved' })) });
    test.now += 1_000;
    if (crash) await killedInLogCommit(inbox, last);
    else {
      last();
      inbox.close();
    }
    test.now = start;
    return test.open({ database: db });
  };
  const logged = await run('site_s2', false);
  const rebuilt = await run('site_s1', true);
  const all = (i: Inbox) => readDecisionLog(i.logTable).map(comparable);
  expect(all(rebuilt).length).toBe(120 + 80 + 50 + 10 + 5 + 3 + 3 + 1 + 60 + 10);
  expect(all(rebuilt)).toEqual(all(logged));
});

/** The process stops inside the log's commit of the next operation: the inbox's commit is done. */
async function killedInLogCommit(inbox: Inbox, operation: () => unknown): Promise<void> {
  const internals = inbox as unknown as { log: { commit: () => void }; writer: { commit: () => void } };
  internals.log.commit = () => {
    throw new Error('killed in the log commit');
  };
  await expect(async () => operation()).rejects.toThrow('killed');
  internals.writer.commit = internals.log.commit;
  expect(() => inbox.close()).toThrow('killed');
}
