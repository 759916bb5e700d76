// A one-line progress bar on stderr for `replay run` (only on a TTY or with --progress).
// Wall-clock time is used for the display only; nothing of it reaches the run's output.

import type { ReplayProgress } from './replay.ts';

export function progressBar(out: NodeJS.WritableStream & { isTTY?: boolean }, width = 30): { update(p: ReplayProgress): void; done(): void } {
  const t0 = performance.now();
  let last = 0;
  let shown = false;
  const tty = out.isTTY === true;
  return {
    update(p) {
      const now = performance.now();
      if (now - last < 200 && p.events < p.totalEvents) return;
      last = now;
      // At most whole: a damaged manifest may count fewer events than the file holds (the run then
      // refuses it as damaged), and more than the width was a negative run of dots, a RangeError.
      const f = p.totalEvents === 0 ? 1 : Math.min(1, p.events / p.totalEvents);
      const filled = Math.round(f * width);
      const rate = p.events / Math.max((now - t0) / 1000, 1e-3);
      const line = `replay [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(f * 100).toFixed(1).padStart(5)} %  ${p.events}/${p.totalEvents} events  ${Math.round(rate)} ev/s  sim ${new Date(p.simMs).toISOString().slice(0, 19)}Z  ${p.agentRuns} agent run${p.agentRuns === 1 ? '' : 's'}`;
      out.write(tty ? `\r${line}` : `${line}\n`);
      shown = true;
    },
    done() {
      if (shown && tty) out.write('\n');
    },
  };
}
