// Slow, salted hashes for secrets kept in site.db: user PINs and passwords, module broker
// passwords. scrypt (node:crypto) with the parameters stored in the hash text, so they can be
// raised later without invalidating the hashes already stored.
//
// Format: `scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>`.
// Invariants: a salt is 16 random bytes, fresh per hash; comparison is constant-time; a hash text
// that does not parse verifies as false (never throws on stored data).

import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export interface ScryptParams {
  /** CPU/memory cost, a power of two. 2^15 ≈ 50–100 ms and 32 MiB per hash on a site PC. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

export const DEFAULT_SCRYPT: ScryptParams = { N: 1 << 15, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;

function scrypt(secret: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  // maxmem must exceed 128·N·r bytes; leave room for the p lanes.
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => scryptCb(secret.normalize('NFC'), salt, KEY_BYTES, options, (e, key) => (e ? reject(e) : resolve(key))));
}

/** Hashes a secret with a fresh random salt. */
export async function hashSecret(secret: string, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(secret, salt, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** True when `secret` hashes to `stored`. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((x) => Number.isSafeInteger(x) && x > 0) || N > 1 << 20) return false;
  const salt = Buffer.from(parts[4]!, 'base64');
  const expected = Buffer.from(parts[5]!, 'base64');
  if (expected.length !== KEY_BYTES) return false;
  const key = await scrypt(secret, salt, { N, r, p });
  return timingSafeEqual(key, expected);
}

/**
 * A deterministic slow hash for secrets that must be found by value (badge strings): the salt is
 * per site (kept in site.db), not per row, so equal badges hash equally and can be looked up.
 */
export async function lookupHash(secret: string, siteSalt: Buffer, params: ScryptParams = DEFAULT_SCRYPT): Promise<string> {
  return (await scrypt(secret, siteSalt, params)).toString('base64');
}
