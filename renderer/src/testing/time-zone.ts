// Test support (a `testing/` folder: only tests import it, scripts/check-imports.mjs): a file's
// or a describe block's tests in a given time zone (this PC's, as the renderer formats local
// times), the zone before them put back after. Node applies a changed TZ at once.
import { afterAll, beforeAll } from 'vitest';

// The tests run in node; the renderer's own type check knows no node globals.
const env = (globalThis as unknown as { process: { env: Record<string, string | undefined> } }).process.env;

export function inTimeZone(zone: string): void {
  let was: string | undefined;
  beforeAll(() => {
    was = env.TZ;
    env.TZ = zone;
  });
  afterAll(() => {
    if (was === undefined) delete env.TZ;
    else env.TZ = was;
  });
}
