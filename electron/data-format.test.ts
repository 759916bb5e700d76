// The Electron main's start path (runMain → core/site's Site.start, as electron/main.mjs wires it)
// on a data directory a newer Tilstand requires: refused before anything changes, the reason in the
// error box the floor PC shows (core/site/data-format.ts; its CLI tests: core/site/data-format.test.ts).

import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { dataFormatPath, DATA_FORMAT, DataFormatError } from '../core/site/data-format.ts';
import { initDataDir } from '../core/site/init.ts';
import { Site } from '../core/site/site.ts';
import { runMain } from './main-process.ts';
import type { ElectronLike } from './shell.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-electron-format-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Every file and folder under `root`: size, mtime and content hash (folders: mtime and names). */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    const names = readdirSync(d).sort();
    out.set(d, `dir ${statSync(d).mtimeMs} ${names.join(',')}`);
    for (const n of names) {
      const p = join(d, n);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else out.set(p, `${st.size} ${st.mtimeMs} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    }
  };
  walk(root);
  return out;
}

/** The `electron` module replaced: records error boxes and windows, never opens one. */
function fakeElectron() {
  const rec = { windows: 0, errorBoxes: [] as Array<{ title: string; content: string }> };
  const e: ElectronLike = {
    app: { requestSingleInstanceLock: () => true, on: () => undefined, whenReady: () => Promise.resolve(), quit: () => undefined },
    dialog: { showErrorBox: (title, content) => void rec.errorBoxes.push({ title, content }) },
    BrowserWindow: class {
      webContents = { id: 1, send: () => undefined, on: () => undefined, setWindowOpenHandler: () => undefined, isDestroyed: () => false };
      constructor() {
        rec.windows++;
      }
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
  return { e, rec };
}

it('the Electron main refuses a directory a newer version requires, says why in its error box, and changes nothing', async () => {
  const data = join(dir, 'd');
  await initDataDir({ data, site: 'north', scrypt: { N: 1024, r: 8, p: 1 } });
  writeFileSync(dataFormatPath(data), JSON.stringify({ written: DATA_FORMAT + 1, requires: DATA_FORMAT + 1, by: 'tilstand 9.9.9' }));
  const before = snapshot(data);
  const { e, rec } = fakeElectron();
  const lines: string[] = [];
  await expect(runMain(e, ['--data', data, '--http-port', '0', '--mqtt-port', '0'], { startSite: (o) => Site.start({ ...o, agentTimer: false }), log: (l) => lines.push(l) })).rejects.toThrow(DataFormatError);
  expect(rec.errorBoxes).toHaveLength(1);
  expect(rec.errorBoxes[0]!.content).toContain(`requires a program that knows data format ${DATA_FORMAT + 1} or later`);
  expect(rec.errorBoxes[0]!.content).toContain('restore the copy of the directory taken before the upgrade');
  expect(rec.windows).toBe(0);
  expect(snapshot(data)).toEqual(before);
});
