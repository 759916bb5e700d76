// For tests: a FileIO on which the table's data and changelog files cannot be written while the
// test says the disk is full (`full`), as ENOSPC gives it.

import { LsmError } from './errors.ts';
import { ForwardingFileIO } from './file-io.ts';

/** While `full`, every data or changelog file write fails as on a full disk. */
export class FullDiskIO extends ForwardingFileIO {
  full = false;
  override writeNew(path: string, data: Uint8Array): void {
    if (this.full && /\/(?:data|changelog)-[^/]*$/.test(path)) throw new LsmError('IOError', `write ${path} failed: ENOSPC: no space left on device`, { path });
    super.writeNew(path, data);
  }
}
