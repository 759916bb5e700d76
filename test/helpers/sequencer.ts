// The order vitest.config.ts's two projects run in: vitest's own (a file that failed last time
// first, then the longest of the last run; with no record, as on a fresh checkout, the largest file
// first), over the files of both projects as one queue. vitest's BaseSequencer runs one project's
// files after the other's: the own-process files first, and the two workers ran the big files of
// each project side by side, the end of the first half packed badly (1,040 s on 2 cores against
// 947 s with both projects in one shuffled queue, 2026-12-08).
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export class OneQueueSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const key = (s: TestSpecification) => `${s.project.name}:${relative(this.ctx.config.root, s.moduleId)}`;
    return [...files].sort((a, b) => {
      const ra = cache.getFileTestResults(key(a));
      const rb = cache.getFileTestResults(key(b));
      if (ra && rb) {
        if (ra.failed !== rb.failed) return ra.failed ? -1 : 1;
        return rb.duration - ra.duration;
      }
      const sa = cache.getFileStats(key(a));
      const sb = cache.getFileStats(key(b));
      if (!sa || !sb) return !sa && sb ? -1 : !sb && sa ? 1 : 0; // unknown first
      return sb.size - sa.size;
    });
  }
}
