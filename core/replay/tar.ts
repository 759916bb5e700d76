// A minimal POSIX ustar writer and reader, enough for a fixture archive: regular files and
// directories, names up to 255 bytes (ustar prefix + name), sizes below 8 GiB. Written entries are
// deterministic: sorted paths, mode 0644/0755, uid/gid 0, mtime 0, no user names.
// Reading accepts what this writer writes (and plain ustar from other tools); anything else
// (links, devices, PAX/GNU extensions) is refused with the entry's name, and so is an archive that
// ends before its end-of-archive (zero) block.

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

/** Extracts `file` into `dir`; refuses entries that would land outside it. Returns the file paths. */
export function extractTar(file: string, dir: string): string[] {
  const root = resolve(dir);
  mkdirSync(root, { recursive: true });
  const fd = openSync(file, 'r');
  const h = Buffer.alloc(BLOCK);
  const buf = Buffer.allocUnsafe(1 << 20);
  const out: string[] = [];
  try {
    for (;;) {
      // The writer ends every archive with zero blocks: an archive that stops at an entry's end
      // without them was cut short (a copy that stopped), and its later entries are missing.
      readExactly(fd, h, BLOCK, "the next entry's header or the end-of-archive blocks (the archive was cut short)");
      if (h.every((b) => b === 0)) break;
      let sum = 0;
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
      const stored = parseInt(text(h, 148, 8).trim(), 8);
      const prefix = text(h, 345, 155);
      const path = prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100);
      if (stored !== sum) throw new Error(`tar: bad header checksum at entry '${shownEntry(path)}'`);
      const type = String.fromCharCode(h[156]!);
      const size = parseInt(text(h, 124, 12).trim() || '0', 8);
      const target = resolve(root, path);
      if (target !== root && !target.startsWith(root + sep)) throw new Error(`tar: entry '${shownEntry(path)}' points outside the target directory`);
      if (type === '5') {
        mkdirSync(target, { recursive: true });
        continue;
      }
      if (type !== '0' && type !== '\0') throw new Error(`tar: entry '${shownEntry(path)}' has type '${shownEntry(type)}'; only files and directories are supported`);
      mkdirSync(dirname(target), { recursive: true });
      const shown = shownEntry(path);
      const dst = openSync(target, 'w');
      let left = size;
      try {
        while (left > 0) {
          const n = Math.min(buf.length, left);
          readExactly(fd, buf, n, shown);
          writeSync(dst, buf, 0, n);
          left -= n;
        }
      } finally {
        closeSync(dst);
      }
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad > 0) readExactly(fd, buf, pad, shown);
      out.push(path);
    }
  } finally {
    closeSync(fd);
  }
  return out;
}
