// A fixture archive unpacked and packed again with the usual tools: bsdtar (libarchive; macOS's
// `tar`) writes pax extended headers (`x`) for long or non-ASCII names, fractional mtimes and the
// extended attributes a Mac puts on every file; GNU tar `--format=pax` writes one before every
// entry, and its default format writes `L` long names. The reader refused them all ("has type 'x';
// only files and directories are supported"). It reads them now, and still refuses what would land
// outside the fixture, links, sparse files and sizes or headers that do not add up.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoEvents } from './demo-events.ts';
import { exportFixture, makeCut } from './export.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { extractTar, listFiles, writeTar } from './tar.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

const dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-tar-pax-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const has = (cmd: string): boolean => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status === 0;
const gnuTar = (() => {
  const r = spawnSync('tar', ['--version'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('GNU tar');
})();
const tools: Array<{ name: string; available: boolean; argv: (file: string, src: string) => string[] }> = [
  { name: 'bsdtar', available: has('bsdtar'), argv: (file, src) => ['bsdtar', '-cf', file, '-C', src, '.'] },
  { name: 'GNU tar --format=pax', available: gnuTar, argv: (file, src) => ['tar', '--format=pax', '-cf', file, '-C', src, '.'] },
  { name: 'GNU tar (gnu format)', available: gnuTar, argv: (file, src) => ['tar', '--format=gnu', '-cf', file, '-C', src, '.'] },
];
// Under CI=true nothing skips for a missing system package (.ci/run installs libarchive-tools and tar).
for (const t of tools) {
  if (t.available) continue;
  const cmd = t.argv('x', 'y')[0];
  if (process.env.CI === 'true') throw new Error(`tar-pax.test.ts: ${cmd} is not installed, and under CI=true no case may skip (.ci/run installs it)`);
  console.warn(`\n*** tar-pax.test.ts: ${cmd} is not installed: the '${t.name}' cases are SKIPPED (install libarchive-tools / GNU tar) ***\n`);
}

function pack(tool: (typeof tools)[number], src: string, file: string): void {
  const [cmd, ...args] = tool.argv(file, src);
  const r = spawnSync(cmd!, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
}

/** Sets an extended attribute as a Mac puts on downloaded files, where the file system takes one. */
function macAttribute(path: string): void {
  spawnSync('python3', ['-c', 'import os,sys; os.setxattr(sys.argv[1], "user.com.apple.provenance", b"\\x01\\x02\\x00")', path], { stdio: 'ignore' });
}

/** Every file under `d` with its bytes. */
function contents(d: string): Record<string, string> {
  return Object.fromEntries(listFiles(d).map((f) => [f, readFileSync(join(d, ...f.split('/'))).toString('base64')]));
}

// ---- hand-built archives -------------------------------------------------------------------

const BLOCK = 512;
function hdr(name: string, size: number, type: string, opts: { prefix?: string; magic?: 'ustar' | 'gnu'; sizeField?: string } = {}): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100, 'ascii');
  h.write('0000000\0', 108, 'ascii');
  h.write('0000000\0', 116, 'ascii');
  h.write(opts.sizeField ?? `${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  h.write('00000000000\0', 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  if ((opts.magic ?? 'ustar') === 'ustar') h.write('ustar\u000000', 257, 'ascii');
  else h.write('ustar  \0', 257, 'ascii');
  if (opts.prefix) h.write(opts.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}
const padded = (data: Buffer): Buffer => Buffer.concat([data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK)]);
/** One pax record: its length counts its own digits. */
function record(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let n = Buffer.byteLength(body) + 1;
  while (`${n}${body}`.length !== n) n = Buffer.byteLength(`${n}${body}`);
  return `${n}${body}`;
}
const pax = (type: 'x' | 'g', records: string, name = 'PaxHeader/x'): Buffer => {
  const data = Buffer.from(records, 'utf8');
  return Buffer.concat([hdr(name, data.length, type), padded(data)]);
};
const file = (name: string, data: string, opts?: Parameters<typeof hdr>[3]): Buffer => {
  const b = Buffer.from(data);
  return Buffer.concat([hdr(name, b.length, '0', opts), padded(b)]);
};
const end = Buffer.alloc(BLOCK * 2);

let n = 0;
function extract(parts: Buffer[]): { files: Record<string, string>; target: string } {
  const f = join(dir, `hand-${++n}.tar`);
  writeFileSync(f, Buffer.concat(parts));
  const target = join(dir, `hand-${n}`);
  extractTar(f, target);
  return { files: Object.fromEntries(listFiles(target).map((p) => [p, readFileSync(join(target, ...p.split('/')), 'utf8')])), target };
}
function refused(parts: Buffer[]): string {
  try {
    extract(parts);
  } catch (e) {
    return (e as Error).message;
  }
  return 'not refused';
}

describe('extractTar: archives the usual tools write', () => {
  const src = join(dir, 'tools-src');
  const long = `${'a'.repeat(120)}/${'b'.repeat(110)}/${'c'.repeat(60)}.json`; // 293 bytes: no ustar form
  beforeAll(() => {
    const files: Record<string, Buffer> = {
      'fixture.json': Buffer.from('{}\n'),
      [long]: Buffer.from('long\n'),
      'config/rules/0/dør-nede.mts': Buffer.from('export default [];\n'),
      'warehouse/site_s1.db/stock/bucket-0/data-0.parquet': Buffer.alloc(3000, 7),
      'warehouse/site_s1.db/stock/snapshot/EARLIEST': Buffer.alloc(0),
      'decisions.json': Buffer.alloc(BLOCK, 0x5b),
    };
    for (const [p, b] of Object.entries(files)) {
      const at = join(src, ...p.split('/'));
      mkdirSync(join(at, '..'), { recursive: true });
      writeFileSync(at, b);
      macAttribute(at);
    }
  });
  for (const tool of tools) {
    it.skipIf(!tool.available)(`${tool.name}: every file with its bytes`, () => {
      const archive = join(dir, `${tool.name.replace(/\W+/g, '-')}.tar`);
      pack(tool, src, archive);
      const target = join(dir, `${tool.name.replace(/\W+/g, '-')}-out`);
      extractTar(archive, target);
      expect(contents(target)).toEqual(contents(src));
    });
  }
});

describe('extractTar: hand-built extended headers', () => {
  it('a pax path and size for the next entry only; a global header for every later one; other keys ignored', () => {
    const long = `${'d'.repeat(150)}/${'e'.repeat(140)}.json`;
    const { files } = extract([
      pax('g', record('comment', 'made by hand') + record('mtime', '1796639273.738661392') + record('SCHILY.xattr.user.x', 'a\nb=c')),
      pax('x', record('path', long) + record('mtime', '1.5')),
      file('trunc-name', 'one'),
      file('plain.json', 'two'),
      // A size in the pax header replaces the header's (a writer puts it there past 8 GiB).
      pax('x', record('size', '5')),
      file('sized.json', 'three', { sizeField: '00000000000\0' }),
      file('after.json', 'four'),
      end,
    ]);
    expect(files).toEqual({ [long]: 'one', 'plain.json': 'two', 'sized.json': 'three', 'after.json': 'four' });
  });

  it("GNU long names ('L', and 'K' for a link's, ignored); GNU headers' prefix field is not a prefix", () => {
    const long = `${'f'.repeat(200)}/g.json`;
    const gnuL = (name: string) => {
      const b = Buffer.from(`${name}\0`);
      return Buffer.concat([hdr('././@LongLink', b.length, 'L', { magic: 'gnu' }), padded(b)]);
    };
    const { files } = extract([gnuL(long), file(long.slice(0, 100), 'long', { magic: 'gnu' }), file('x.json', 'x', { magic: 'gnu' }), end]);
    expect(files).toEqual({ [long]: 'long', 'x.json': 'x' });
    // GNU format keeps atime/ctime where ustar has the prefix: those bytes are no folder.
    const h = file('y.json', 'y', { magic: 'gnu' });
    h.write('14753341254\0', 345, 'ascii');
    let sum = 0;
    h.write('        ', 148, 'ascii');
    for (let i = 0; i < BLOCK; i++) sum += h[i]!;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
    expect(extract([h, end]).files).toEqual({ 'y.json': 'y' });
  });

  it('still refuses: paths outside the folder, links, sparse files, sizes and headers that do not add up', () => {
    const outside = /points outside the target directory/;
    expect(refused([pax('x', record('path', '/tmp/tilstand-pax-escape.json')), file('a.json', 'x'), end])).toMatch(outside);
    expect(refused([pax('x', record('path', '../escape.json')), file('a.json', 'x'), end])).toMatch(outside);
    expect(refused([pax('x', record('path', 'ok/../../escape.json')), file('a.json', 'x'), end])).toMatch(outside);
    expect(refused([pax('g', record('path', '../escape.json')), file('a.json', 'x'), end])).toMatch(outside);
    const gnuL = Buffer.concat([hdr('././@LongLink', 10, 'L', { magic: 'gnu' }), padded(Buffer.from('../x.json\0'))]);
    expect(refused([gnuL, file('a.json', 'x', { magic: 'gnu' }), end])).toMatch(outside);
    // A link (its target from a pax linkpath, out of the fixture) is no file of a fixture.
    expect(refused([pax('x', record('linkpath', '../../etc/passwd')), hdr('a.json', 0, '2'), end])).toMatch(/entry 'a\.json' has type '2'; only files and directories are supported/);
    expect(refused([pax('x', record('GNU.sparse.major', '1') + record('GNU.sparse.minor', '0')), file('a.json', 'x'), end])).toMatch(/entry 'a\.json' is a sparse file/);
    // The pax size says more than the archive holds: cut short, not read as the next header.
    expect(refused([pax('x', record('size', '4096')), file('a.json', 'x'), end])).toMatch(/unexpected end of archive in a\.json/);
    expect(refused([pax('x', record('size', '12abc')), file('a.json', 'x'), end])).toMatch(/entry 'a\.json': pax header: size '12abc' is not a size/);
    expect(refused([file('a.json', 'x', { sizeField: '0000000zz1\0' }), end])).toMatch(/entry 'a\.json': size '0000000zz1' is not a size/);
    // A record whose length does not match its bytes.
    expect(refused([pax('x', '99 path=a.json\n'), file('b.json', 'x'), end])).toMatch(/extended header .*is damaged/);
    expect(refused([pax('x', record('path', 'a.json')), end])).toMatch(/extended header 'PaxHeader\/x' with no entry after it/);
  });
});

describe('a fixture exported, unpacked and packed again by the tools', () => {
  let fixture = '';
  let baseline: Record<string, string> = {};
  beforeAll(async () => {
    const site = new LiveSite();
    try {
      const gen = new DemoEvents({ site: site.site, seed: 5 });
      site.receive(gen.initial(T0 + 100));
      await site.advance(T0 + 90_000);
      makeCut(site.catalog, site.database, 'replay-repack', { clock: site.clock });
      for (let i = 0; i < 40; i++) site.receive(gen.step(T0 + 100_000 + i * 2_000));
      await site.advance(T0 + 3 * 60_000);
      site.close();
      fixture = join(dir, 'fixture');
      await exportFixture({ data: site.dir, tag: 'repack', untilMs: T0 + 3 * 60_000, atMs: T0 + 90_000, out: fixture });
    } finally {
      site.remove();
    }
    for (const f of listFiles(fixture)) macAttribute(join(fixture, ...f.split('/')));
    const out = join(dir, 'run-folder');
    await runReplay({ fixture, out });
    baseline = contents(out);
  }, 120_000);

  for (const tool of tools) {
    it.skipIf(!tool.available)(`${tool.name}: replays as the folder does`, async () => {
      const archive = join(dir, `repacked-${tool.name.replace(/\W+/g, '-')}.tar`);
      pack(tool, fixture, archive);
      const out = join(dir, `run-${tool.name.replace(/\W+/g, '-')}`);
      await runReplay({ fixture: archive, out });
      expect(contents(out)).toEqual(baseline);
    }, 60_000);
  }

  it.skipIf(!tools[0]!.available)('replay run --fixture <bsdtar archive>: exit 0', async () => {
    const archive = join(dir, 'cli-bsdtar.tar');
    pack(tools[0]!, fixture, archive);
    const scratch = join(dir, 'cli-scratch');
    mkdirSync(scratch);
    const r = await replayCli(['replay', 'run', '--fixture', archive, '--out', join(dir, 'run-cli'), '--scratch', scratch]);
    expect([r.code, r.err]).toEqual([0, expect.not.stringContaining('tilstand:')]);
    expect(contents(join(dir, 'run-cli'))).toEqual(baseline);
    expect(readdirSync(scratch)).toEqual([]);
  }, 60_000);

  it("macOS's metadata entries (`._<name>`, AppleDouble) beside each file are not taken for the fixture's files", async () => {
    // bsdtar on a Mac writes a file's extended attributes (quarantine, provenance) as an entry of
    // its own, `._<name>` in the same folder, before the file: an AppleDouble blob. The fixture's
    // manifest does not list them, so they were refused as files slipped into the fixture.
    const own = join(dir, 'own-for-mac.tar');
    writeTar(fixture, own);
    const bytes = readFileSync(own);
    const appleDouble = Buffer.concat([Buffer.from([0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00]), Buffer.alloc(24, 0x20), Buffer.from('com.apple.provenance')]);
    const mac = (name: string, data: Buffer) => Buffer.concat([pax('x', record('LIBARCHIVE.xattr.com.apple.provenance', 'AQIA')), hdr(name, data.length, '0'), padded(data)]);
    const entries = bytes.subarray(0, bytes.length - 2 * BLOCK);
    const archive = join(dir, 'mac.tar');
    writeFileSync(archive, Buffer.concat([mac('._fixture.json', appleDouble), mac('config/._config.json', appleDouble), entries, end]));
    const out = join(dir, 'run-mac');
    await runReplay({ fixture: archive, out });
    expect(contents(out)).toEqual(baseline);
    // A `._` file that is no AppleDouble blob is a file like any other, and not in the manifest.
    const other = join(dir, 'mac-other.tar');
    writeFileSync(other, Buffer.concat([mac('._notes.json', Buffer.from('{}')), entries, end]));
    await expect(runReplay({ fixture: other, out: join(dir, 'run-mac-other') })).rejects.toThrow(/\._notes\.json is not in its manifest/);
  }, 60_000);

  it('the writer still writes plain ustar: no extended header', () => {
    const archive = join(dir, 'own.tar');
    writeTar(fixture, archive);
    const bytes = readFileSync(archive);
    for (let at = 0; at + BLOCK <= bytes.length; ) {
      const h = bytes.subarray(at, at + BLOCK);
      if (h.every((b) => b === 0)) break;
      expect(String.fromCharCode(h[156]!)).toBe('0');
      at += BLOCK + Math.ceil(parseInt(h.toString('ascii', 124, 135), 8) / BLOCK) * BLOCK;
    }
  });
});
