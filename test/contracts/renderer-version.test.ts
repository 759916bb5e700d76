// The floor UI's error reports carry the app's version (core/site/api.ts ClientErrorReport
// `version`): the renderer's build defines it from package.json, and the page hands it to its
// reporter (renderer/src/main.tsx).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../build/vite.renderer.config.ts';

const root = join(__dirname, '../..');

describe("the renderer's version", () => {
  it("is package.json's, defined by the renderer's build", () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect((config as { define?: Record<string, unknown> }).define?.__TILSTAND_VERSION__).toBe(JSON.stringify(version));
  });

  it('goes to the reporter the page creates', () => {
    const main = readFileSync(join(root, 'renderer/src/main.tsx'), 'utf8');
    expect(main).toMatch(/createReporter\([^\n]*__TILSTAND_VERSION__[^\n]*\);/);
  });
});
