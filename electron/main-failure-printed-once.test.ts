// A site that does not start in the Electron app is said once on the console: the site's own log
// line ("site north did not start: …", logs/site.log and the console), not again by runMain's
// "the site did not start: …", and not a third time with its stack by electron/main.mjs, which
// printed every error runMain threw (`mainFailure`: what main.mjs prints and its exit code).
// An error nobody said yet (a bug in the shell) is still printed, with its stack.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { initDataDir } from '../core/site/init.ts';
import { Site } from '../core/site/site.ts';
import { mainFailure, runMain, ShellArgsError } from './main-process.ts';
import type { ElectronLike, WebContentsLike } from './shell.ts';

let dir: string;
let before: Record<'SIGINT' | 'SIGTERM' | 'SIGHUP', Function[]>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-once-'));
  before = { SIGINT: process.rawListeners('SIGINT'), SIGTERM: process.rawListeners('SIGTERM'), SIGHUP: process.rawListeners('SIGHUP') };
});
afterEach(() => {
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) for (const l of process.rawListeners(s)) if (!before[s].includes(l)) process.off(s, l as () => void);
  rmSync(dir, { recursive: true, force: true });
});

function fakeElectron(): ElectronLike {
  const contents = (): WebContentsLike => ({ id: 1, send: () => undefined, on: () => undefined, setWindowOpenHandler: () => undefined, isDestroyed: () => false });
  return {
    app: { requestSingleInstanceLock: () => true, on: () => undefined, whenReady: () => Promise.resolve(), quit: () => undefined },
    dialog: { showErrorBox: () => undefined },
    BrowserWindow: class {
      webContents = contents();
      async loadURL() {}
      on() {}
      isMinimized() {
        return false;
      }
      restore() {}
      focus() {}
    },
    Menu: { setApplicationMenu: () => undefined },
    ipcMain: { handle: () => undefined },
    protocol: { registerSchemesAsPrivileged: () => undefined, handle: () => undefined },
    session: { defaultSession: { webRequest: { onHeadersReceived: () => undefined }, setPermissionRequestHandler: () => undefined, setPermissionCheckHandler: () => undefined, on: () => undefined } },
  };
}

/** Runs runMain as main.mjs does: what reaches the console (the log's lines, then main.mjs's own). */
async function consoleOf(argv: string[], startSite: Parameters<typeof runMain>[2]['startSite']): Promise<{ lines: string[]; code: number }> {
  const lines: string[] = [];
  try {
    await runMain(fakeElectron(), argv, { startSite, log: (l) => void lines.push(l) });
    return { lines, code: 0 };
  } catch (e) {
    const f = mainFailure(e);
    if (f.line !== undefined) lines.push(f.line);
    return { lines, code: f.code };
  }
}

it("a real site's refused start is said once, with no stack after it", { timeout: 30_000 }, async () => {
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'north', admin: { name: 'ada', pin: '246810' } });
  const configPath = join(data, 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  writeFileSync(configPath, JSON.stringify({ ...config, agent: { ...config.agent, ruleFiles: ['rules/missing.mts'] } }, null, 2));
  const { lines, code } = await consoleOf(['--data', data], (o) => Site.start(o));
  expect(code).toBe(1);
  expect(lines.filter((l) => l.includes('rules/missing.mts')), lines.join('\n')).toHaveLength(1);
  expect(lines.filter((l) => /\n\s+at /.test(l)), 'no stack printed').toEqual([]);
});

it("a start refused before the site's log exists is said once, by runMain", async () => {
  const { lines, code } = await consoleOf(['--demo', '--data', join(dir, 'demo')], async () => {
    throw new Error('broker: cannot listen on port 1883');
  });
  expect(code).toBe(1);
  expect(lines).toEqual(['the site did not start: broker: cannot listen on port 1883']);
});

it('an error nobody said is printed with its stack; a bad flag with its usage, exit 2', () => {
  const bug = new TypeError('x is undefined');
  expect(mainFailure(bug)).toEqual({ line: bug.stack, code: 1 });
  expect(mainFailure(new ShellArgsError('--htp-port: unknown option'))).toEqual({ line: '--htp-port: unknown option', code: 2 });
  expect(mainFailure('a string')).toEqual({ line: 'a string', code: 1 });
});

it('main.mjs prints what mainFailure says, not the stack itself', () => {
  const src = readFileSync(new URL('./main.mjs', import.meta.url), 'utf8');
  expect(src).toContain('mainFailure(');
  expect(src).not.toMatch(/e\.stack/);
});
