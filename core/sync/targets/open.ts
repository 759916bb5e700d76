// A target from its text form, as config.json (`hq.target`) and the CLI (`--hq`) give it:
//   /mnt/hq  or  file:///mnt/hq                      a directory
//   s3://bucket/prefix?endpoint=http://host:9000&region=eu-north-1
// Credentials for S3 come from the options, else TILSTAND_HQ_ACCESS_KEY / TILSTAND_HQ_SECRET_KEY.

import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SyncError } from '../errors.ts';
import { checkPrefix, sitePrefix } from '../names.ts';
import { DirectoryTarget, directoryDescription } from './directory.ts';
import { S3Target, s3Description } from './s3.ts';
import { shownEndpoint, type SyncTarget } from './target.ts';

export interface OpenTargetOptions {
  /** Writes are allowed under `site_<site>.db/` only; without it the target is read-only. */
  site?: string;
  accessKey?: string;
  secretKey?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * What is wrong with a target's text, or undefined: no text, an s3:// URL without a bucket or with
 * a bad prefix or with keys in it (`s3://KEY:SECRET@bucket`, `?endpoint=http://KEY:SECRET@host`), or — where `relative` is false, as in
 * config.json, whose readers run in whatever directory a service manager chose — a relative
 * directory. Whether the keys are set is not checked here.
 */
export function targetProblem(text: unknown, o: { relative?: boolean } = {}): string | undefined {
  try {
    parseTarget(text, o.relative ?? true);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

type ParsedTarget = { kind: 's3'; bucket: string; root: string; endpoint?: string; region?: string } | { kind: 'dir'; dir: string };

/** Where an S3 target's keys are given, as the errors that ask for them say it. */
const S3_KEYS_GO = 'set TILSTAND_HQ_ACCESS_KEY and TILSTAND_HQ_SECRET_KEY in the environment (the hq, sync and restore commands also take --access-key and --secret-key)';

/** The parameters an s3:// target takes, as its errors name them. */
const S3_PARAMETERS = 'endpoint=<http:// or https:// URL> and region=<name>';

/**
 * An endpoint with its user info blanked (`http://…@host:9000`), as the bucket's is in a refusal:
 * everything up to the last `@` before the query, so also a secret with a `/` in it, which ends
 * the URL's authority early and which `shownEndpoint` does not see as user info. No query or
 * fragment.
 */
function blankedEndpoint(endpoint: string): string {
  return endpoint.replace(/[?#][^]*$/, '').replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)?[^]*@/, '$1…@');
}

/** An endpoint as messages and `shownTarget` show it: `shownEndpoint`, or blanked where an `@` is left. */
function refusedEndpointShown(endpoint: string): string {
  const shown = shownEndpoint(endpoint);
  return shown.includes('@') ? blankedEndpoint(shown) : shown;
}

/**
 * An s3:// URL's endpoint and region. Any other parameter is refused: one mistyped (`endpiont=`,
 * `Endpoint=`) was ignored, and the site sent to AWS. So is an empty one (an unset variable) and
 * an endpoint that is not an http(s) URL, which failed every request as a Transport error
 * ("Invalid URL") retried for ever, and, unless `display`, an endpoint with keys in it
 * (`endpoint=http://KEY:SECRET@host:9000`). Messages show the endpoint without its user info.
 */
function s3Parameters(url: URL, text: string, display: boolean): { endpoint?: string; region?: string } {
  const out: { endpoint?: string; region?: string } = {};
  for (const k of new Set(url.searchParams.keys())) {
    if (k !== 'endpoint' && k !== 'region') throw new SyncError('InvalidArgument', `s3:// target: unknown parameter '${k}' (it takes ${S3_PARAMETERS})`);
    const vs = url.searchParams.getAll(k);
    if (vs.length > 1) throw new SyncError('InvalidArgument', `s3:// target: parameter '${k}' given ${vs.length} times (once: ${S3_PARAMETERS})`);
    const v = vs[0]!;
    if (v.trim() === '') throw new SyncError('InvalidArgument', `s3:// target: parameter '${k}' is empty (it takes ${S3_PARAMETERS}; leave it out for AWS)`);
    if (k === 'endpoint') {
      let e: URL | undefined;
      try {
        e = new URL(v);
      } catch {
        e = undefined;
      }
      if (e === undefined || (e.protocol !== 'http:' && e.protocol !== 'https:') || e.hostname === '') {
        throw new SyncError('InvalidArgument', `s3:// target: endpoint must be an http:// or https:// URL (endpoint=http://host:9000), got '${refusedEndpointShown(v)}'`);
      }
      // Keys in the endpoint were never read either: the SDK signs with the keys it is given, the
      // server got the other keys or none, and the secret sat in config.json, the shell's history
      // and (before descriptions left it out) site.db. Refused as keys in the bucket's part are. An
      // `@` anywhere before the query counts: a secret with a `/` in it ends the authority early,
      // and the URL reads the rest as a port and a path (`http://KEY:12/xSECRET@host`).
      if (!display && (e.username !== '' || e.password !== '' || /@/.test(v.replace(/[?#][^]*$/, '')))) {
        throw new SyncError(
          'InvalidArgument',
          `'${unparsedShown(text)}' carries keys in its endpoint (${blankedEndpoint(v)}), which are not read from there: take them out of the endpoint and ${S3_KEYS_GO}`,
        );
      }
    }
    out[k] = v;
  }
  return out;
}

/**
 * A text that is no target, as a message shows it: user info blanked, no query (either may hold a
 * secret). User info up to the last `@` before the query: an S3 secret may hold a `/`, which ends
 * the URL's authority early (the text then does not parse, or reads as a host with a port).
 */
export function unparsedShown(text: string): string {
  return text.replace(/\/\/[^?#]*@/, '//…@').replace(/[?#][^]*$/, '');
}

/**
 * An s3:// URL's prefix, percent-decoded. One that does not decode (`50%off`: a `%` not followed by
 * two hex digits, or bytes that are no UTF-8) is refused saying how to write it; it failed with
 * decodeURIComponent's bare "URI malformed", in `config check` too.
 */
function decodedPrefix(url: URL, text: string): string {
  try {
    return decodeURIComponent(url.pathname.replace(/^\/+/, ''));
  } catch {
    throw new SyncError('InvalidArgument', `'${unparsedShown(text)}' has a prefix that is not percent-encoded UTF-8: a '%' must start %XX (a '%' in the prefix is written %25)`);
  }
}

/**
 * `display`: for showing a text only (`shownTarget`), an endpoint's keys are not refused (the
 * description leaves them out); every reader that uses the target refuses them.
 */
function parseTarget(text: unknown, relative: boolean, display = false): ParsedTarget {
  if (typeof text !== 'string' || text.trim() === '') throw new SyncError('InvalidArgument', 'no HQ target given');
  if (text.startsWith('s3://')) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new SyncError('InvalidArgument', `'${unparsedShown(text)}' is not an s3://bucket/prefix URL`);
    }
    const bucket = url.hostname;
    if (!bucket) throw new SyncError('InvalidArgument', `'${unparsedShown(text)}' names no bucket`);
    // Keys written into the URL were ignored: requests went out with the other keys or none (access
    // denied), and the secret stayed in config.json or the shell's history. Refused, never echoed.
    if (url.username !== '' || url.password !== '') throw new SyncError('InvalidArgument', `'${unparsedShown(text)}' carries keys in the URL, which are not read from there: take them out of the target and ${S3_KEYS_GO}`);
    // A port was dropped (the bucket is the host name alone); it is the server's, or the digits of a
    // secret cut at its `/` (`s3://KEY:12/x@bucket`, which the URL reads as host KEY, port 12).
    if (url.port !== '') throw new SyncError('InvalidArgument', `'${unparsedShown(text)}' is not an s3://bucket/prefix URL: a bucket has no port (the server goes in endpoint=http://host:port; keys: ${S3_KEYS_GO})`);
    let root = decodedPrefix(url, text);
    if (root !== '' && !root.endsWith('/')) root += '/';
    if (root !== '') checkPrefix(root);
    return { kind: 's3', bucket, root, ...s3Parameters(url, text, display) };
  }
  if (text.startsWith('file://')) return { kind: 'dir', dir: fileURLToPath(text) };
  if (!relative && !isAbsolute(text)) {
    throw new SyncError('InvalidArgument', `'${text}' is a relative directory; give an absolute one (or file:///…), or an s3://bucket/prefix URL`);
  }
  return { kind: 'dir', dir: resolve(text) };
}

/**
 * A target's text as logs, status and messages show it: an s3:// URL as its target's description
 * reads (bucket, prefix, and the endpoint without user info, query or fragment — a percent-encoded
 * one too), a directory as given. Text that does not parse as a target loses its query and has
 * user info blanked. Never opens anything, so no credentials are needed.
 */
export function shownTarget(text: string): string {
  let t: ParsedTarget | undefined;
  try {
    t = parseTarget(text, true, true);
  } catch {
    t = undefined;
  }
  if (t === undefined) return unparsedShown(text);
  return t.kind === 's3' ? `s3://${t.bucket}/${t.root}${t.endpoint ? ` (${refusedEndpointShown(t.endpoint)})` : ''}` : text;
}

/**
 * The place a target's text names, comparable between texts: an s3:// URL as written, a
 * directory's absolute path (a relative one resolved against this process's working directory).
 */
export function targetPlace(text: string): string {
  const t = parseTarget(text, true);
  return t.kind === 's3' ? text : t.dir;
}

/**
 * The description (`SyncTarget.description`, kept in the outbox's `sync_state` `target`) of the
 * target `openTarget(text)` opens, without opening it (no credentials needed): `dir:<absolute
 * path>` (a relative directory resolved against this process's working directory), or
 * `s3://bucket/prefix (endpoint)` with the endpoint as `shownEndpoint` shows it. `tilstand status`
 * of a stopped site compares config.json's target with the one the outbox kept this way. Undefined
 * for text that is no target, which `openTarget` refuses (`targetProblem` says why).
 */
export function targetDescription(text: string): string | undefined {
  let t: ParsedTarget;
  try {
    t = parseTarget(text, true);
  } catch {
    return undefined;
  }
  return t.kind === 's3' ? s3Description(t.bucket, t.root, t.endpoint) : directoryDescription(t.dir);
}

export function openTarget(text: string, o: OpenTargetOptions = {}): SyncTarget {
  const scope = o.site === undefined ? {} : { writePrefix: sitePrefix(o.site) };
  const t = parseTarget(text, true);
  if (t.kind === 's3') {
    const { bucket, root, endpoint, region } = t;
    const env = o.env ?? process.env;
    const accessKeyId = o.accessKey ?? env.TILSTAND_HQ_ACCESS_KEY;
    const secretAccessKey = o.secretKey ?? env.TILSTAND_HQ_SECRET_KEY;
    if (!accessKeyId || !secretAccessKey) {
      throw new SyncError('InvalidArgument', `S3 target needs credentials: ${S3_KEYS_GO}`);
    }
    return new S3Target({ bucket, root, accessKeyId, secretAccessKey, ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}), ...scope });
  }
  return new DirectoryTarget(t.dir, scope);
}
