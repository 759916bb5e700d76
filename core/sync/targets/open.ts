// A target from its text form, as config.json (`hq.target`) and the CLI (`--hq`) give it:
//   /mnt/hq  or  file:///mnt/hq                      a directory
//   s3://bucket/prefix?endpoint=http://host:9000&region=eu-north-1
// Credentials for S3 come from the options, else TILSTAND_HQ_ACCESS_KEY / TILSTAND_HQ_SECRET_KEY.

import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SyncError } from '../errors.ts';
import { checkPrefix, sitePrefix } from '../names.ts';
import { DirectoryTarget } from './directory.ts';
import { S3Target } from './s3.ts';
import type { SyncTarget } from './target.ts';

export interface OpenTargetOptions {
  /** Writes are allowed under `site_<site>.db/` only; without it the target is read-only. */
  site?: string;
  accessKey?: string;
  secretKey?: string;
  env?: NodeJS.ProcessEnv;
}

export function openTarget(text: string, o: OpenTargetOptions = {}): SyncTarget {
  const scope = o.site === undefined ? {} : { writePrefix: sitePrefix(o.site) };
  if (typeof text !== 'string' || text.trim() === '') throw new SyncError('InvalidArgument', 'no HQ target given');
  if (text.startsWith('s3://')) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new SyncError('InvalidArgument', `'${text}' is not an s3://bucket/prefix URL`);
    }
    const bucket = url.hostname;
    if (!bucket) throw new SyncError('InvalidArgument', `'${text}' names no bucket`);
    let root = decodeURIComponent(url.pathname.replace(/^\/+/, ''));
    if (root !== '' && !root.endsWith('/')) root += '/';
    if (root !== '') checkPrefix(root);
    const env = o.env ?? process.env;
    const accessKeyId = o.accessKey ?? env.TILSTAND_HQ_ACCESS_KEY;
    const secretAccessKey = o.secretKey ?? env.TILSTAND_HQ_SECRET_KEY;
    if (!accessKeyId || !secretAccessKey) {
      throw new SyncError('InvalidArgument', 'S3 target needs credentials: TILSTAND_HQ_ACCESS_KEY and TILSTAND_HQ_SECRET_KEY (or --access-key/--secret-key)');
    }
    const endpoint = url.searchParams.get('endpoint') ?? undefined;
    const region = url.searchParams.get('region') ?? undefined;
    return new S3Target({ bucket, root, accessKeyId, secretAccessKey, ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}), ...scope });
  }
  const dir = text.startsWith('file://') ? fileURLToPath(text) : resolve(text);
  return new DirectoryTarget(dir, scope);
}
