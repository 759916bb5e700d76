// The order proposals were made in, as the site orders them (store `sortByUrgency`'s last tie-break).
/** Two texts with the numbers in them compared as numbers (`…-000-9` before `…-000-10`), a text that ends first first. */
function compareNumbered(a: string, b: string): number {
  const x = a.split(/(\d+)/);
  const y = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    let p = x[i]!;
    let q = y[i]!;
    if (p === q) continue;
    if (i % 2 === 1) {
      // Digits: without leading zeros, the longer is the larger.
      p = p.replace(/^0+/, '');
      q = q.replace(/^0+/, '');
      if (p.length !== q.length) return p.length - q.length;
    }
    if (p !== q) return p < q ? -1 : 1;
  }
  return x.length - y.length || (a < b ? -1 : a > b ? 1 : 0);
}
/**
 * Proposal ids (`P-<run id>-<n>`) in the order they were made, as core/inbox orders them (its
 * `compareProposalIds`, copied: the renderer imports only types from core; the two are checked
 * alike in test/contracts/renderer-proposal-order.test.ts, which is why it is a file of its own,
 * without the DOM): by run id, its numbers as numbers (two runs in one millisecond, `…-000` then
 * `…-000-2`), then by `n` as a number. By `n` alone, a later run's first proposal stood before an
 * earlier run's third, where the site lists it after.
 */
export function compareProposalIds(a: string, b: string): number {
  const x = a.slice(0, a.lastIndexOf('-'));
  const y = b.slice(0, b.lastIndexOf('-'));
  const run = x === y ? 0 : compareNumbered(x, y);
  const n = Number(a.slice(a.lastIndexOf('-') + 1)) - Number(b.slice(b.lastIndexOf('-') + 1));
  return run || (Number.isNaN(n) ? 0 : n) || (a < b ? -1 : a > b ? 1 : 0);
}
