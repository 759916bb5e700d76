// Copies what HQ holds for a site into a local warehouse: `hq pull`, `restore`, and the local
// cache through which S3 tables are opened. Per table: immutable files first (skipped when the
// local copy has the listed size — names are unique, so the size check is the resume check),
// then snapshot and tag JSON, then the hints, then local snapshot JSON HQ no longer has is
// removed, so the copy, like HQ, holds one snapshot with EARLIEST = LATEST. Every file is written
// to a hidden temporary file and renamed: an interrupted pull leaves nothing half-written, and a
// rerun continues where it stopped. Local tags are kept (a pulled warehouse may hold tags of its
// own) unless `dropGoneTags`: the cache through which `hq` commands read S3 (hq/store.ts) shows
// what HQ holds, so a tag gone at HQ (a run tag its site expired, core/sync DESIGN.md) goes there too.

import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { localFileIO } from '../../lsm/index.ts';
import { SyncError } from '../errors.ts';
import { contractsPrefix, sitePrefix } from '../names.ts';
import type { ObjectInfo, SyncTarget } from '../targets/target.ts';

export interface MirrorProgress {
  table: string;
  key: string;
  doneFiles: number;
  totalFiles: number;
  doneBytes: number;
  totalBytes: number;
}

export interface MirrorOptions {
  /** Only these tables (default: every table of the site). */
  tables?: readonly string[];
  /** Also copy `.tilstand/contracts/` to this directory. */
  contractsDir?: string;
  onProgress?: (p: MirrorProgress) => void;
  /** Remove local tag JSON that HQ no longer has (default: local tags are kept). */
  dropGoneTags?: boolean;
}

export interface MirrorResult {
  tables: string[];
  files: number;
  downloadedFiles: number;
  downloadedBytes: number;
}

const POINTER = /^(snapshot\/snapshot-\d+|tag\/tag-[^/]+)$/;
const HINT = /^snapshot\/(EARLIEST|LATEST)$/;

/** Tables of a site at HQ: folders under `site_<id>.db/` holding a schema file. */
export function tablesOf(site: string, keys: readonly ObjectInfo[]): string[] {
  const prefix = sitePrefix(site);
  const out = new Set<string>();
  for (const { key } of keys) {
    const m = /^([^/.][^/]*)\/schema\/schema-\d+$/.exec(key.slice(prefix.length));
    if (key.startsWith(prefix) && m) out.add(m[1]!);
  }
  return [...out].sort();
}

function writeLocal(path: string, bytes: Uint8Array): void {
  fs.mkdirSync(dirname(path), { recursive: true });
  localFileIO.replaceAtomic(path, bytes);
}

export async function mirrorSite(target: SyncTarget, site: string, warehouse: string, o: MirrorOptions = {}): Promise<MirrorResult> {
  const prefix = sitePrefix(site);
  const all = await target.list(prefix);
  const tables = (o.tables ?? tablesOf(site, all)).slice();
  const known = new Set(tablesOf(site, all));
  for (const t of tables) if (!known.has(t)) throw new SyncError('NotFound', `HQ has no table '${t}' for site ${site}`);
  const dbDir = join(warehouse, `${prefix.slice(0, -1)}`);
  const result: MirrorResult = { tables, files: 0, downloadedFiles: 0, downloadedBytes: 0 };
  const work = all.filter((x) => tables.some((t) => x.key.startsWith(`${prefix}${t}/`)));
  const contracts = o.contractsDir ? all.filter((x) => x.key.startsWith(contractsPrefix(site))) : [];
  const totalFiles = work.length + contracts.length;
  const totalBytes = [...work, ...contracts].reduce((s, x) => s + x.size, 0);
  let doneFiles = 0;
  let doneBytes = 0;
  const progress = (table: string, key: string, size: number) => {
    doneFiles++;
    doneBytes += size;
    o.onProgress?.({ table, key, doneFiles, totalFiles, doneBytes, totalBytes });
  };
  const fetch = async (key: string, path: string, size: number | undefined) => {
    const bytes = await target.get(key);
    if (size !== undefined && bytes.length !== size) throw new SyncError('Verification', `${key}: got ${bytes.length} bytes, HQ lists ${size}`);
    writeLocal(path, bytes);
    result.downloadedFiles++;
    result.downloadedBytes += bytes.length;
  };
  for (const t of tables) {
    const tp = `${prefix}${t}/`;
    const local = (key: string) => join(dbDir, t, ...key.slice(tp.length).split('/'));
    const mine = work.filter((x) => x.key.startsWith(tp));
    const rel = (x: ObjectInfo) => x.key.slice(tp.length);
    const files = mine.filter((x) => !POINTER.test(rel(x)) && !HINT.test(rel(x)));
    const pointers = mine.filter((x) => POINTER.test(rel(x)));
    const hints = mine.filter((x) => HINT.test(rel(x)));
    for (const f of files) {
      const path = local(f.key);
      let have = -1;
      try {
        have = fs.statSync(path).size;
      } catch {
        // absent
      }
      if (have !== f.size) await fetch(f.key, path, f.size);
      result.files++;
      progress(t, f.key, f.size);
    }
    for (const p of [...pointers, ...hints]) {
      await fetch(p.key, local(p.key), undefined);
      result.files++;
      progress(t, p.key, p.size);
    }
    const keep = new Set(pointers.map((p) => rel(p)));
    const snapDir = join(dbDir, t, 'snapshot');
    for (const n of fs.existsSync(snapDir) ? fs.readdirSync(snapDir) : []) {
      if (/^snapshot-\d+$/.test(n) && !keep.has(`snapshot/${n}`)) fs.rmSync(join(snapDir, n), { force: true });
    }
    const tagDir = join(dbDir, t, 'tag');
    for (const n of o.dropGoneTags && fs.existsSync(tagDir) ? fs.readdirSync(tagDir) : []) {
      if (n.startsWith('tag-') && !keep.has(`tag/${n}`)) fs.rmSync(join(tagDir, n), { force: true });
    }
  }
  for (const c of contracts) {
    const rel = c.key.slice(contractsPrefix(site).length);
    await fetch(c.key, join(o.contractsDir!, ...rel.split('/')), c.size);
    progress('.contracts', c.key, c.size);
  }
  return result;
}
