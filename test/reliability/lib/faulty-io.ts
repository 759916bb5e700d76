// An injectable filesystem for the table store (core/lsm's FileIO): every write goes to the real
// disk through LocalFileIO unless `decide(op, path)` returns a fault for that call.
//
// Faults, as a disk would produce them:
//   - ENOSPC / EIO: the write fails part-way: a prefix of the bytes is on disk (in the file for
//     writeNew, in the hidden temporary file for createAtomic/replaceAtomic), then the error;
//   - torn: a prefix is written and the call fails with EIO (a short write the caller is told of);
//   - fsync: every byte is written, then fsync fails with EIO (the caller cannot know the bytes
//     are durable, so it must not rely on them);
//   - remove-EIO: unlink fails.
// Errors are LsmError('IOError') with a Node-style cause (code ENOSPC/EIO), like LocalFileIO's.

import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { ForwardingFileIO, LocalFileIO, LsmError } from '../../../core/lsm/index.ts';
import { tempNameFor } from '../../../core/lsm/file-io.ts';

export type Fault = 'ENOSPC' | 'EIO' | 'torn' | 'fsync' | 'remove-EIO';
export type FileOp = 'writeNew' | 'createAtomic' | 'replaceAtomic' | 'remove';

export interface InjectedFault {
  op: FileOp;
  path: string;
  fault: Fault;
}

function failure(op: string, path: string, code: 'ENOSPC' | 'EIO', what: string): LsmError {
  const cause = Object.assign(new Error(`${code}: ${what}, ${op} '${path}'`), { code });
  return new LsmError('IOError', `${op} ${path} failed: ${code} (injected ${what})`, { path, cause });
}

export class FaultyFileIO extends ForwardingFileIO {
  readonly injected: InjectedFault[] = [];
  /** Returns the fault for this call, or undefined to let it through. */
  decide: (op: FileOp, path: string) => Fault | undefined = () => undefined;
  /** Bytes of a partial write, as a fraction of the data (drawn by the test). */
  prefixFraction = 0.5;

  constructor() {
    super(new LocalFileIO());
  }

  private fault(op: FileOp, path: string): Fault | undefined {
    const f = this.decide(op, path);
    if (f) this.injected.push({ op, path, fault: f });
    return f;
  }

  /** Writes the part of `data` a failing disk would have written to `file` (created exclusively). */
  private partial(file: string, data: Uint8Array, fault: Fault): void {
    fs.mkdirSync(dirname(file), { recursive: true });
    const n = fault === 'fsync' ? data.length : Math.floor(data.length * this.prefixFraction);
    const fd = fs.openSync(file, 'wx', 0o644);
    try {
      if (n > 0) fs.writeSync(fd, data, 0, n);
    } finally {
      fs.closeSync(fd);
    }
  }

  private raise(op: string, path: string, fault: Fault): never {
    if (fault === 'ENOSPC') throw failure(op, path, 'ENOSPC', 'no space left on device');
    if (fault === 'fsync') throw failure(op, path, 'EIO', 'fsync failed');
    if (fault === 'torn') throw failure(op, path, 'EIO', 'torn write');
    throw failure(op, path, 'EIO', 'I/O error');
  }

  override writeNew(path: string, data: Uint8Array): void {
    const f = this.fault('writeNew', path);
    if (!f) return this.inner.writeNew(path, data);
    this.partial(path, data, f);
    this.raise('write', path, f);
  }

  override createAtomic(path: string, data: Uint8Array): boolean {
    const f = this.fault('createAtomic', path);
    if (!f) return this.inner.createAtomic(path, data);
    // The temporary file is left behind, as after a failing write; the target never appears.
    this.partial(tempNameFor(path), data, f);
    this.raise('create', path, f);
  }

  override replaceAtomic(path: string, data: Uint8Array): void {
    const f = this.fault('replaceAtomic', path);
    if (!f) return this.inner.replaceAtomic(path, data);
    this.partial(tempNameFor(path), data, f);
    this.raise('replace', path, f);
  }

  override remove(path: string): void {
    const f = this.fault('remove', path);
    if (f) throw failure('remove', path, 'EIO', 'unlink failed');
    this.inner.remove(path);
  }
}
