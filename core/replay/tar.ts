// A minimal POSIX ustar writer and reader, enough for a fixture archive: regular files and
// directories, names up to 255 bytes (ustar prefix + name), sizes below 8 GiB. Written entries are
// deterministic: sorted paths, mode 0644/0755, uid/gid 0, mtime 0, no user names.
// Reading accepts what this writer writes and what the usual tools write when a fixture is
// unpacked and packed again: plain ustar; pax extended headers as bsdtar (libarchive, macOS's
// `tar`) and GNU tar `--format=pax` write them (`x` for the next entry, `g` for every later one:
// `path` and `size` read; mtimes with fractions, xattrs, user names and a `linkpath` ignored, links
// being refused whatever their target); GNU tar's long names (`L`, `K`); and macOS's `._<name>`
// AppleDouble entries, skipped as metadata. Anything else (links, devices, sparse files) is refused
// with the entry's name, and so is an archive that ends before its end-of-archive (zero) block, an
// entry whose path leaves the target folder, and a damaged extended header or size.
import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, statSync, writeSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

const BLOCK = 512;

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function splitName(path: string): { name: string; prefix: string } {
  const bytes = Buffer.byteLength(path);
  if (bytes <= 100) return { name: path, prefix: '' };
  // Split at a '/' so that prefix ≤ 155 and name ≤ 100 bytes.
  for (let i = path.length - 1; i > 0; i--) {
    if (path[i] !== '/') continue;
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name.length > 0) return { name, prefix };
  }
  throw new Error(`tar: path too long for ustar (${bytes} bytes): ${path}`);
}

function header(path: string, size: number, type: '0' | '5'): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  const { name, prefix } = splitName(path);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(type === '5' ? 0o755 : 0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  h.write('ustar\u000000', 257, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/**
 * Every file under `dir`, as '/'-separated relative paths, sorted. A symbolic link (or a FIFO,
 * socket, device) is refused, naming it: what is read or written through it lies outside `dir`
 * (a fixture's copy keeps the link, and the replay's scratch warehouse would commit through it).
 */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p, r);
      else if (st.isFile()) out.push(r);
      else throw new Error(`${r} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}, not a file or folder of its own`);
    }
  };
  walk(dir, '');
  return out.sort();
}

/** Writes every file under `dir` into the archive `file` (paths relative to dir, sorted). */
export function writeTar(dir: string, file: string): void {
  const fd = openSync(file, 'w');
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    for (const rel of listFiles(dir)) {
      const path = join(dir, ...rel.split('/'));
      const size = statSync(path).size;
      writeSync(fd, header(rel, size, '0'));
      const src = openSync(path, 'r');
      let left = size;
      try {
        while (left > 0) {
          const n = readSync(src, buf, 0, Math.min(buf.length, left), null);
          if (n === 0) throw new Error(`tar: ${path} shrank while being archived`);
          writeSync(fd, buf, 0, n);
          left -= n;
        }
      } finally {
        closeSync(src);
      }
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad > 0) writeSync(fd, Buffer.alloc(pad));
    }
    writeSync(fd, Buffer.alloc(BLOCK * 2));
  } finally {
    closeSync(fd);
  }
}

function readExactly(fd: number, buf: Buffer, n: number, what: string): void {
  let off = 0;
  while (off < n) {
    const r = readSync(fd, buf, off, n - off, null);
    if (r === 0) throw new Error(`tar: unexpected end of archive in ${what}`);
    off += r;
  }
}

const text = (b: Buffer, start: number, len: number): string => {
  const s = b.subarray(start, start + len);
  const z = s.indexOf(0);
  return s.subarray(0, z < 0 ? len : z).toString('utf8');
};

/**
 * An entry's name for a message: read from a header that may be damaged (a later entry of an archive
 * cut or overwritten), so whatever bytes lie there — a terminal's escape sequences too — are shown
 * escaped (control, format and unassigned characters as `\uXXXX`) and cut at 100 characters.
 */
export function shownEntry(path: string): string {
  const escaped = path.replace(/[\p{C}\\]/gu, (c) => (c === '\\' ? '\\\\' : [...c].map((u) => `\\u${u.codePointAt(0)!.toString(16).padStart(4, '0')}`).join('')));
  const chars = [...escaped];
  return chars.length > 100 ? `${chars.slice(0, 99).join('')}…` : escaped;
}

/** A size field: octal digits (NUL- or space-ended), or what is wrong with it. */
function sizeField(h: Buffer): number | string {
  const raw = text(h, 124, 12);
  const t = raw.trim();
  if (t === '') return 0;
  // GNU's base-256 form (first byte 0x80) for sizes of 8 GiB and more: a fixture's files are far below.
  if (!/^[0-7]+$/.test(t)) return `size '${shownEntry(raw)}' is not a size`;
  return parseInt(t, 8);
}

/**
 * A pax extended header's records (`<length> <key>=<value>\n`, the length in bytes counting the
 * whole record), or undefined if they do not add up.
 */
function paxRecords(data: Buffer): Map<string, string> | undefined {
  const out = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    // Some writers pad the data with NULs after the last record.
    if (data[at] === 0 && data.subarray(at).every((b) => b === 0)) break;
    const space = data.indexOf(0x20, at);
    if (space < 0 || space - at > 20) return undefined;
    const lenText = data.toString('ascii', at, space);
    if (!/^[1-9]\d*$/.test(lenText)) return undefined;
    const len = Number(lenText);
    const endAt = at + len;
    if (endAt > data.length || data[endAt - 1] !== 0x0a) return undefined;
    const rec = data.subarray(space + 1, endAt - 1);
    const eq = rec.indexOf(0x3d);
    if (eq <= 0) return undefined;
    out.set(rec.toString('utf8', 0, eq), rec.toString('utf8', eq + 1));
    at = endAt;
  }
  return out;
}

/** Longest extended header (or GNU long name) read: a name or a few attributes, never megabytes. */
const MAX_EXTENDED = 1 << 20;

/** The first four bytes of an AppleDouble file (macOS's extended attributes and resource fork). */
const APPLE_DOUBLE = 0x00051607;

/** Extracts `file` into `dir`; refuses entries that would land outside it. Returns the file paths. */
export function extractTar(file: string, dir: string): string[] {
  const root = resolve(dir);
  mkdirSync(root, { recursive: true });
  const fd = openSync(file, 'r');
  const h = Buffer.alloc(BLOCK);
  const buf = Buffer.allocUnsafe(1 << 20);
  const out: string[] = [];
  // pax `g` records hold for every later entry, `x` records (and GNU `L`/`K` names) for the next one.
  const global = new Map<string, string>();
  let local: Map<string, string> | undefined;
  let longName: string | undefined;
  let pendingFrom: string | undefined;
  try {
    for (;;) {
      // The writer ends every archive with zero blocks: an archive that stops at an entry's end
      // without them was cut short (a copy that stopped), and its later entries are missing.
      readExactly(fd, h, BLOCK, "the next entry's header or the end-of-archive blocks (the archive was cut short)");
      if (h.every((b) => b === 0)) {
        if (pendingFrom !== undefined) throw new Error(`tar: extended header '${shownEntry(pendingFrom)}' with no entry after it (the archive was cut short)`);
        break;
      }
      let sum = 0;
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
      const stored = parseInt(text(h, 148, 8).trim(), 8);
      // Only POSIX ustar ("ustar\0") has a prefix field; GNU's format ("ustar  ") keeps times there.
      const posix = h.toString('latin1', 257, 263) === 'ustar\0';
      const prefix = posix ? text(h, 345, 155) : '';
      const headerPath = prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100);
      if (stored !== sum) throw new Error(`tar: bad header checksum at entry '${shownEntry(headerPath)}'`);
      const type = String.fromCharCode(h[156]!);
      const headerSize = sizeField(h);
      if (typeof headerSize === 'string') throw new Error(`tar: entry '${shownEntry(headerPath)}': ${headerSize}`);
      if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
        if (headerSize > MAX_EXTENDED) throw new Error(`tar: extended header '${shownEntry(headerPath)}' of ${headerSize} bytes is too long`);
        const data = Buffer.alloc(Math.ceil(headerSize / BLOCK) * BLOCK);
        readExactly(fd, data, data.length, shownEntry(headerPath));
        const body = data.subarray(0, headerSize);
        if (type === 'L' || type === 'K') {
          // GNU: the next entry's name (L) or link target (K), NUL-ended.
          const z = body.indexOf(0);
          if (type === 'L') longName = body.subarray(0, z < 0 ? body.length : z).toString('utf8');
        } else {
          const records = paxRecords(body);
          if (!records) throw new Error(`tar: extended header '${shownEntry(headerPath)}' is damaged (its records do not add up)`);
          if (type === 'g') {
            // An empty value takes a global key back.
            for (const [k, v] of records) v === '' ? global.delete(k) : global.set(k, v);
          } else local = records;
        }
        if (type !== 'g') pendingFrom = headerPath;
        continue;
      }
      const attr = (key: string): string | undefined => {
        const v = local?.get(key) ?? global.get(key);
        return v === '' ? undefined : v;
      };
      const path = attr('path') ?? longName ?? headerPath;
      const paxSize = attr('size');
      const entryAttrs = [...(local?.keys() ?? []), ...global.keys()];
      local = undefined;
      longName = undefined;
      pendingFrom = undefined;
      let size = headerSize;
      if (paxSize !== undefined) {
        if (!/^\d{1,15}$/.test(paxSize)) throw new Error(`tar: entry '${shownEntry(path)}': pax header: size '${shownEntry(paxSize)}' is not a size`);
        size = Number(paxSize);
      }
      if (path === '' || path.includes('\0')) throw new Error(`tar: entry '${shownEntry(path)}' has no usable name`);
      const target = resolve(root, path);
      if (target !== root && !target.startsWith(root + sep)) throw new Error(`tar: entry '${shownEntry(path)}' points outside the target directory`);
      if (type === '5') {
        mkdirSync(target, { recursive: true });
        // A folder's data (none is written) would be read as the next header.
        if (size > 0) throw new Error(`tar: entry '${shownEntry(path)}' is a folder with ${size} bytes of data`);
        continue;
      }
      if (type !== '0' && type !== '\0') throw new Error(`tar: entry '${shownEntry(path)}' has type '${shownEntry(type)}'; only files and directories are supported`);
      // GNU tar's pax form of a sparse file: its data is a map and fragments, not the file's bytes.
      if (entryAttrs.some((k) => k.startsWith('GNU.sparse.'))) throw new Error(`tar: entry '${shownEntry(path)}' is a sparse file; only whole files are supported`);
      const shown = shownEntry(path);
      let left = size;
      let n = Math.min(buf.length, left);
      readExactly(fd, buf, n, shown);
      // macOS's tar writes a file's extended attributes as an AppleDouble entry of its own,
      // `._<name>` beside it: metadata, no file of the archive (libarchive's reader takes it so too).
      const appleDouble = /(^|\/)\._[^/]+$/.test(path) && n >= 4 && buf.readUInt32BE(0) === APPLE_DOUBLE;
      const dst = appleDouble ? undefined : (mkdirSync(dirname(target), { recursive: true }), openSync(target, 'w'));
      try {
        for (;;) {
          if (dst !== undefined) writeSync(dst, buf, 0, n);
          left -= n;
          if (left === 0) break;
          n = Math.min(buf.length, left);
          readExactly(fd, buf, n, shown);
        }
      } finally {
        if (dst !== undefined) closeSync(dst);
      }
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad > 0) readExactly(fd, buf, pad, shown);
      if (!appleDouble) out.push(path);
    }
  } finally {
    closeSync(fd);
  }
  return out;
}
