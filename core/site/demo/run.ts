// Runs the four simulated modules against a broker, and the yard system when the data directory
// has one: `runDemoModules` (in-process, from `tilstand start --demo`) and `readModuleSecrets`
// (credentials from `<data>/secrets/modules.json`).
//
// Rate: each module steps every `stepMs` (default 1000 ms, so ~4 events/s in all, more for
// operations' paired changes) after a snapshot burst of ~200 `r` events at start.
//
// The yard module (yard.ts) is not a seed module: a demo directory made before it existed has no
// broker user for it (and no yard_doors table), so it runs only when its credentials are there
// and the caller does not say otherwise (`yard: false`). Both callers (`tilstand start --demo`,
// `tilstand demo`) pass `yard` from the data directory's config.json (demo/site.ts
// `demoYardMissing`: the table defined and a binding writing it) and say why it does not run.

import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModuleSecrets } from '../init.ts';
import { SITE_MODULES } from '../site-db.ts';
import type { DemoModule, DemoModuleOptions, DemoModuleStats } from './module.ts';
import { OperationsModule } from './operations.ts';
import { commerceModule, inventoryModule, procurementModule } from './stock-modules.ts';
import { YardModule } from './yard.ts';

/** The demo's module that is not a seed module (its table is the demo site's own, demo/site.ts). */
export const DEMO_YARD_MODULE = 'yard';

const FACTORIES: Record<(typeof SITE_MODULES)[number] | typeof DEMO_YARD_MODULE, (o: DemoModuleOptions) => DemoModule> = {
  operations: (o) => new OperationsModule(o),
  inventory: inventoryModule,
  commerce: commerceModule,
  procurement: procurementModule,
  [DEMO_YARD_MODULE]: (o) => new YardModule(o),
};

export interface DemoRunOptions {
  url: string;
  site: string;
  /** Module → broker credentials. */
  credentials: ModuleSecrets['modules'];
  /** Where the modules keep their outboxes and their state (`<module>.state.json`). */
  outboxDir: string;
  seed?: number;
  stepMs?: number;
  onWarning?: (message: string) => void;
  /** Run the yard module (default: when `credentials` has it); false where the site has no table for it. */
  yard?: boolean;
}

export interface DemoModules {
  modules: readonly DemoModule[];
  stats(): DemoModuleStats[];
  connected(): Promise<void>;
  stop(): Promise<void>;
}

export function readModuleSecrets(path: string): ModuleSecrets {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read module credentials from ${path}: ${(e as Error).message}`);
  }
  const s = v as ModuleSecrets;
  if (!s || typeof s.site !== 'string' || !s.modules || typeof s.modules !== 'object') throw new Error(`${path}: expected {site, modules: {<module>: {username, password}}}`);
  return s;
}

export function runDemoModules(o: DemoRunOptions): DemoModules {
  mkdirSync(o.outboxDir, { recursive: true, mode: 0o700 });
  const seed = o.seed ?? 1;
  const stepMs = o.stepMs ?? 1000;
  // Every module's credentials before any module is made: each one's client starts connecting (and
  // reconnecting) as it is made, and a throw after the first left those running with no one to
  // stop them (`tilstand demo` printed the error and never exited).
  for (const name of SITE_MODULES) {
    if (!o.credentials[name]) throw new Error(`no broker credentials for module '${name}'`);
  }
  const names: (keyof typeof FACTORIES)[] = [...SITE_MODULES];
  const yard = o.yard ?? o.credentials[DEMO_YARD_MODULE] !== undefined;
  if (yard && !o.credentials[DEMO_YARD_MODULE]) throw new Error(`no broker credentials for module '${DEMO_YARD_MODULE}'`);
  if (yard) names.push(DEMO_YARD_MODULE);
  const modules: DemoModule[] = [];
  try {
    startAll(o, names, seed, stepMs, modules);
  } catch (e) {
    // Those made so far are closed (one not started saves nothing: its saved state stays as it was).
    for (const m of modules) m.stop().catch(() => undefined);
    throw e;
  }
  return {
    connected: () => Promise.all(modules.map((m) => m.connected())).then(() => undefined),
    modules,
    stats: () => modules.map((m) => m.getStats()),
    stop: async () => {
      await Promise.all(modules.map((m) => m.stop()));
    },
  };
}

function startAll(o: DemoRunOptions, names: readonly (keyof typeof FACTORIES)[], seed: number, stepMs: number, modules: DemoModule[]): void {
  for (const name of names) {
    const c = o.credentials[name]!;
    modules.push(
      FACTORIES[name]({
        url: o.url,
        site: o.site,
        username: c.username,
        password: c.password,
        outboxPath: join(o.outboxDir, `${name}.outbox.db`),
        statePath: join(o.outboxDir, `${name}.state.json`),
        seed,
        stepMs,
        ...(o.onWarning ? { onWarning: o.onWarning } : {}),
      }),
    );
  }
  // Each connects (and reconnects) in the background; `connected()` waits for all.
  for (const m of modules) m.start();
}
