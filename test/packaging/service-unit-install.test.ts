// The install steps in build/tilstand.service's comment are the operations guide's: the unit said
// `sudo -u tilstand /opt/tilstand/bin/tilstand.mjs init` (the development entry, through tsx, and
// run as a script) where the guide and the unit's own ExecStart run the bundle with node.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const source = (p: string) => readFileSync(join(ROOT, p), 'utf8');

it("every install step in the unit's comment is a command of the guide's systemd section (<…> for its example values)", () => {
  const unit = source('build/tilstand.service').split('\n');
  const from = unit.findIndex((l) => l.startsWith('# Install'));
  expect(from, 'the unit has an install comment').toBeGreaterThanOrEqual(0);
  const steps: string[] = [];
  for (let i = from + 1; i < unit.length && unit[i]!.startsWith('#   '); i++) steps.push(unit[i]!.slice(4).trim());
  expect(steps.length).toBeGreaterThanOrEqual(4);

  const doc = source('docs/operations.md');
  const section = doc.slice(doc.indexOf('## Linux: systemd'));
  const block = section.slice(section.indexOf('```sh\n') + 6, section.indexOf('\n```', section.indexOf('```sh\n')));
  const commands = block.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim());
  for (const step of steps) {
    const pattern = new RegExp(`^${step.split(/<[a-z]+>/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\S+')}$`);
    expect(commands.filter((c) => pattern.test(c)), step).toHaveLength(1);
  }
  // The site's command in an install is the bundle, run with node.
  expect(steps.filter((s) => s.includes('tilstand.mjs')).every((s) => s.includes('node /opt/tilstand/dist/site/tilstand.mjs '))).toBe(true);
});
