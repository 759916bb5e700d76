// Prometheus text exposition (format 0.0.4) for ingest: a tiny writer, no client library.
// Concurrency: pure.

export type Labels = Readonly<Record<string, string>>;

const escape = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

export class PromText {
  private readonly lines: string[] = [];

  /** Declares a metric family once, then its samples. */
  family(name: string, type: 'gauge' | 'counter', help: string, samples: readonly { labels?: Labels; value: number }[]): this {
    this.lines.push(`# HELP ${name} ${help.replace(/\n/g, ' ')}`, `# TYPE ${name} ${type}`);
    for (const s of samples) {
      const l = Object.entries(s.labels ?? {});
      const labels = l.length === 0 ? '' : `{${l.map(([k, v]) => `${k}="${escape(v)}"`).join(',')}}`;
      const value = Number.isFinite(s.value) ? String(s.value) : s.value > 0 ? '+Inf' : s.value < 0 ? '-Inf' : 'NaN';
      this.lines.push(`${name}${labels} ${value}`);
    }
    return this;
  }

  toString(): string {
    return `${this.lines.join('\n')}\n`;
  }
}
