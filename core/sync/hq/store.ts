// HQ's view of what sites shipped: list sites and tables, and open a site's table with core/lsm's
// `Table.open` exactly as on the site. A directory target is opened in place; an object store is
// mirrored into a local cache folder first (mirror.ts; immutable files are fetched once), because
// the table store's FileIO is synchronous.

import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { Table } from '../../lsm/index.ts';
import { snapshotFromJson } from '../../lsm/snapshot.ts';
import { SyncError } from '../errors.ts';
import { checkSiteId, sitePrefix } from '../names.ts';
import { DirectoryTarget } from '../targets/directory.ts';
import { getIfPresent, type ObjectInfo, type SyncTarget } from '../targets/target.ts';
import { mirrorSite, tablesOf, whereAtHq } from './mirror.ts';

export interface HqStoreOptions {
  /** Where object-store tables are cached (default: `defaultHqCacheDir`). */
  cacheDir?: string;
  /**
   * Called with each damaged tag JSON the cache of an object store leaves out (mirror.ts
   * `onDamagedTag`): the `hq` commands say it on stderr. See `damagedTags`.
   */
  onDamagedTag?: (key: string, error: SyncError) => void;
}

/** A site at HQ: how many tables it shipped, and the newest commit time among their snapshots there. */
export interface SiteState {
  site: string;
  tables: number;
  stateAsOfMs: number | null;
}

/** A table's snapshot file at HQ: `site_<id>.db/<table>/snapshot/snapshot-<n>` → the table's folder and n. */
const SNAPSHOT_KEY = /^(site_[A-Za-z0-9][A-Za-z0-9_-]*\.db\/[^/.][^/]*\/)snapshot\/snapshot-(\d+)$/;

/** The newest snapshot file of each site's table among `keys`: `site_<id>.db/<table>/` → its snapshot id. */
function newestSnapshots(keys: readonly Pick<ObjectInfo, 'key'>[]): Map<string, number> {
  const newest = new Map<string, number>();
  for (const { key } of keys) {
    const m = SNAPSHOT_KEY.exec(key);
    if (m) newest.set(m[1]!, Math.max(newest.get(m[1]!) ?? -1, Number(m[2])));
  }
  return newest;
}

/** The site ids among `keys` (each `site_<id>.db/…`), sorted. */
export function sitesOf(keys: readonly Pick<ObjectInfo, 'key'>[]): string[] {
  const out = new Set<string>();
  for (const { key } of keys) {
    const m = /^site_([A-Za-z0-9][A-Za-z0-9_-]*)\.db\//.exec(key);
    if (m) out.add(m[1]!);
  }
  return [...out].sort();
}

/**
 * The site ids of a directory HQ at `root`: its `site_<id>.db` folders, sorted (the root's entries,
 * not a listing of every key under it). A symbolic link to a folder counts as the folder (HQ's
 * admin moved a site onto a disk of its own): taken as an entry, it was no folder, and the site
 * was missing from `hq sites` while its tables read through the link. A link to nothing (its disk
 * not mounted) is no site, as an empty mount point is none.
 */
export function directorySites(root: string): string[] {
  const folders = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory() || (d.isSymbolicLink() && linksToFolder(join(root, d.name))));
  return sitesOf(folders.map((d) => ({ key: `${d.name}/` })));
}

/**
 * Whether the symbolic link at `path` leads to a folder: false when it leads nowhere, in a loop or
 * where the reader may not look (as `lost+found` beside the sites, it fails no listing).
 */
function linksToFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The default folder S3 tables are mirrored into: `<user cache>/tilstand/hq/<hash of target>`, the
 * user cache being $XDG_CACHE_HOME (when absolute), else %LOCALAPPDATA% on Windows, else ~/.cache.
 * The user's own, not the system's temporary directory: there every local user could create the
 * folder first, and the mirror reuses a data file already present at the right size — another user
 * could have put the rows an analyst then reads, or a symbolic link out of the cache.
 */
export function defaultHqCacheDir(description: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home: string = homedir()): string {
  const xdg = env.XDG_CACHE_HOME;
  const local = env.LOCALAPPDATA;
  const base = xdg && isAbsolute(xdg) ? xdg : platform === 'win32' && local && isAbsolute(local) ? local : join(home, '.cache');
  return join(base, 'tilstand', 'hq', createHash('sha256').update(description).digest('hex').slice(0, 16));
}

export class HqStore {
  readonly cacheDir: string;
  private readonly onDamagedTag: HqStoreOptions['onDamagedTag'];
  /** Per table folder at HQ (`site_<id>.db/<table>/`): the tags its last mirror left out as damaged, by name. */
  private readonly damaged = new Map<string, Map<string, SyncError>>();

  constructor(
    readonly target: SyncTarget,
    o: HqStoreOptions = {},
  ) {
    this.cacheDir = o.cacheDir ?? defaultHqCacheDir(target.description);
    this.onDamagedTag = o.onDamagedTag;
  }

  /**
   * The tags of `table` HQ holds damaged that the local copy of an object store left out when the
   * table was last opened, by name (none for a directory HQ, read in place, where reading such a
   * tag fails as corruption). The copy is not the record of what HQ holds: a command that reads the
   * list of the tags, or that tag, must fail as on a directory HQ (cli/hq.ts).
   */
  damagedTags(site: string, table: string): ReadonlyMap<string, SyncError> {
    return this.damaged.get(`${sitePrefix(site)}${table}/`) ?? new Map();
  }

  /** Site ids with a `site_<id>.db/` at HQ. */
  async sites(): Promise<string[]> {
    return sitesOf(await this.siteKeys());
  }

  /**
   * Every key under HQ's `site_<id>.db/` folders: of a directory HQ one listing of each (its root
   * may hold folders that are no site's and that the reader may not read — `lost+found` of a disk
   * of its own, root's with mode 0700; `System Volume Information` of a Windows share — and a
   * listing of the whole root failed on them, exit 5), elsewhere one listing of everything.
   */
  private async siteKeys(): Promise<ObjectInfo[]> {
    if (!(this.target instanceof DirectoryTarget)) return this.target.list('');
    const keys: ObjectInfo[] = [];
    for (const site of directorySites(this.target.root)) for (const k of await this.target.list(sitePrefix(site))) keys.push(k);
    return keys;
  }

  /**
   * Each site with its tables and how current HQ's copy is: the newest commit time among its
   * tables' synced snapshots (HQ keeps one per table; null before a site's first snapshot arrived).
   * One listing, and one read of each table's snapshot file (`snapshotTime`: one a site's sync
   * replaced since the listing is looked for again).
   */
  async siteStates(): Promise<SiteState[]> {
    const keys = await this.siteKeys();
    const newest = newestSnapshots(keys);
    const out: SiteState[] = [];
    for (const site of sitesOf(keys)) {
      const tables = tablesOf(site, keys);
      let stateAsOfMs: number | null = null;
      for (const table of tables) {
        const dir = `${sitePrefix(site)}${table}/`;
        const id = newest.get(dir);
        if (id === undefined) continue;
        const at = await this.snapshotTime(dir, id);
        if (at !== undefined) stateAsOfMs = stateAsOfMs === null ? at : Math.max(stateAsOfMs, at);
      }
      out.push({ site, tables: tables.length, stateAsOfMs });
    }
    return out;
  }

  /**
   * The commit time of table folder `dir`'s snapshot `id`, read at HQ. A site that syncs meanwhile
   * puts its next snapshot JSON and then removes that one (HQ keeps one per table): gone since the
   * listing, the folder is listed again and its newest read, a bounded number of times — one
   * pruned between listing and read failed `hq sites` for every site. Undefined: the table has no
   * snapshot at HQ any more.
   */
  private async snapshotTime(dir: string, id: number): Promise<number | undefined> {
    for (let attempt = 0; ; attempt++) {
      const key = `${dir}snapshot/snapshot-${id}`;
      const bytes = await getIfPresent(this.target, key);
      if (bytes !== undefined) return snapshotFromJson(bytes.toString('utf8'), whereAtHq(this.target, key)).timeMillis;
      if (attempt === 3) throw new SyncError('NotFound', `${dir}: every snapshot listed at HQ was replaced while it was read; try again`);
      const again = newestSnapshots(await this.target.list(`${dir}snapshot/`)).get(dir);
      if (again === undefined) return undefined;
      id = again;
    }
  }

  async tables(site: string): Promise<string[]> {
    checkSiteId(site);
    return tablesOf(site, await this.target.list(sitePrefix(site)));
  }

  /**
   * The names of a table's tags at HQ, from one listing of its `tag/` folder (no table opened, no
   * mirror: what `hq proposals` needs to say which evidence tags HQ still holds).
   */
  async tagNames(site: string, table: string): Promise<Set<string>> {
    const prefix = `${sitePrefix(checkSiteId(site))}${table}/tag/tag-`;
    return new Set((await this.target.list(prefix)).map((o) => o.key.slice(prefix.length)).filter((n) => n.length > 0 && !n.includes('/')));
  }

  /** The warehouse directory that holds `site_<id>.db/` for reading (the share itself, or the cache). */
  async warehouseFor(site: string, tables?: readonly string[]): Promise<string> {
    if (this.target instanceof DirectoryTarget) return this.target.root;
    // A damaged tag (an old one torn at HQ) is left out of the copy and noted: it failed the copy,
    // and with it every command on the table, also those that never read that tag.
    for (const k of [...this.damaged.keys()]) if (k.startsWith(sitePrefix(site)) && (tables === undefined || tables.some((t) => k === `${sitePrefix(site)}${t}/`))) this.damaged.delete(k);
    await mirrorSite(this.target, site, this.cacheDir, {
      dropGoneTags: true,
      ...(tables ? { tables } : {}),
      onDamagedTag: (key, e) => {
        const m = /^(.*\/)tag\/tag-([^/]+)$/.exec(key)!;
        const held = this.damaged.get(m[1]!) ?? new Map<string, SyncError>();
        held.set(m[2]!, e);
        this.damaged.set(m[1]!, held);
        this.onDamagedTag?.(key, e);
      },
    });
    return this.cacheDir;
  }

  async openTable(site: string, table: string): Promise<Table> {
    const known = await this.tables(site);
    if (!known.includes(table)) {
      throw new SyncError('NotFound', `HQ has no table '${table}' for site ${site}${known.length ? ` (it has: ${known.join(', ')})` : ''}`);
    }
    const warehouse = await this.warehouseFor(site, [table]);
    return Table.open(join(warehouse, sitePrefix(site).slice(0, -1), table), { name: `site_${site}.${table}` });
  }
}
