// A target's description from its text, without opening it (`targetDescription`): `tilstand status`
// of a stopped site compares config.json's target with the description the outbox kept, so it must
// read as the opened target's does. core/site rebuilt it by hand before; a copy that drifts names
// the same target "where it last synced; config.json names …".

import { describe, expect, it } from 'vitest';
import { openTarget, targetDescription } from './open.ts';

/** The description of the target the engine opens for `text` (keys given, as a site has them). */
const opened = (text: string): string => openTarget(text, { accessKey: 'AKEY', secretKey: 'SKEY' }).description;

describe('targetDescription', () => {
  it('a directory: dir: and its absolute path, however it is written', () => {
    for (const text of ['/mnt/hq', '/mnt/hq/', 'file:///mnt/hq', '/mnt/x/../hq']) {
      expect(targetDescription(text)).toBe('dir:/mnt/hq');
      expect(targetDescription(text)).toBe(opened(text));
    }
  });

  it('an s3:// target with an endpoint: bucket, prefix and the endpoint as written', () => {
    const text = 's3://hq/sites?endpoint=https://minio.local:9000&region=eu-north-1';
    expect(targetDescription(text)).toBe('s3://hq/sites/ (https://minio.local:9000)');
    expect(targetDescription(text)).toBe(opened(text));
    expect(targetDescription('s3://hq')).toBe('s3://hq/');
  });

  it('a secret in the endpoint does not show; a target with keys in it is no target', () => {
    const text = 's3://hq/sites/?endpoint=http://127.0.0.1:9000/?token=SECRET';
    expect(targetDescription(text)).toBe('s3://hq/sites/ (http://127.0.0.1:9000/)');
    expect(targetDescription(text)).toBe(opened(text));
    // Keys in the URL or its endpoint are refused by openTarget (and by config.json's reader).
    expect(targetDescription('s3://AKEY:SECRET@hq/sites/')).toBeUndefined();
    expect(targetDescription('s3://hq/sites/?endpoint=http://AKEY:SECRET@127.0.0.1:9000')).toBeUndefined();
    expect(targetDescription('')).toBeUndefined();
  });
});
