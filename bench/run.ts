// `npm run bench [-- --quick] [-- --only ingest,reads] [-- --profile]` — see bench/README.md.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIGURES, runBench, SCALES, type Figure } from './harness.ts';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const value = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
if (flag('--help') || flag('-h')) {
  console.log(`usage: npm run bench -- [--quick | --micro] [--only ${FIGURES.join(',')}] [--profile] [--out DIR]`);
  process.exit(0);
}
const only = value('--only')?.split(',').map((s) => s.trim()) as Figure[] | undefined;
for (const f of only ?? []) {
  if (!FIGURES.includes(f)) {
    console.error(`--only: unknown figure '${f}' (one of ${FIGURES.join(', ')})`);
    process.exit(2);
  }
}
const scale = flag('--micro') ? SCALES.micro : flag('--quick') ? SCALES.quick : SCALES.full;
const outDir = value('--out') ?? join(dirname(fileURLToPath(import.meta.url)), 'results');
const { markdown } = await runBench({ scale, only, profile: flag('--profile'), outDir });
console.log(`\n${markdown}`);
