// Where `hq` commands mirror S3 tables by default: the user's own cache folder, not the system's
// temporary directory, where any local user could create the folder first and put data files the
// mirror would reuse (it keeps a file already there at the right size) — the rows an analyst reads.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultHqCacheDir, HqStore } from './hq/store.ts';
import { DirectoryTarget } from './targets/directory.ts';

describe('the default HQ cache folder', () => {
  it("is under the user's cache folder: $XDG_CACHE_HOME, %LOCALAPPDATA% on Windows, else ~/.cache", () => {
    const d = 's3://bucket/prefix';
    expect(defaultHqCacheDir(d, { XDG_CACHE_HOME: '/srv/cache' }, 'linux', '/home/ana')).toMatch(/^\/srv\/cache\/tilstand\/hq\/[0-9a-f]{16}$/);
    expect(defaultHqCacheDir(d, {}, 'linux', '/home/ana')).toMatch(/^\/home\/ana\/\.cache\/tilstand\/hq\/[0-9a-f]{16}$/);
    // A relative XDG_CACHE_HOME is ignored, as the spec says.
    expect(defaultHqCacheDir(d, { XDG_CACHE_HOME: 'cache' }, 'linux', '/home/ana')).toMatch(/^\/home\/ana\/\.cache\//);
    expect(defaultHqCacheDir(d, { LOCALAPPDATA: '/c/Users/ana/AppData/Local' }, 'win32', '/c/Users/ana')).toMatch(/^\/c\/Users\/ana\/AppData\/Local\/tilstand\/hq\//);
    // One folder per target, the same each time.
    expect(defaultHqCacheDir(d, {}, 'linux', '/h')).toBe(defaultHqCacheDir(d, {}, 'linux', '/h'));
    expect(defaultHqCacheDir(d, {}, 'linux', '/h')).not.toBe(defaultHqCacheDir('s3://other/prefix', {}, 'linux', '/h'));
  });

  it('is what an HqStore uses when not told, never under the temporary directory', () => {
    const store = new HqStore(new DirectoryTarget(join(tmpdir(), 'tilstand-hq-cache-dir-test')));
    expect(store.cacheDir.startsWith(tmpdir())).toBe(false);
    expect(store.cacheDir).toBe(defaultHqCacheDir(store.target.description));
  });
});
