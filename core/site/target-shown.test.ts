// A target's text as the site shows it (status, logs, the `sync now` refusal): an s3:// URL's
// endpoint may carry user info or a query secret, also percent-encoded inside the endpoint
// parameter, and none of it may be printed. It was blanked only in a plain `//user@` authority.

import { describe, expect, it } from 'vitest';
import { redactTarget } from './status.ts';

describe('redactTarget', () => {
  it('shows an s3:// target as its description: bucket, prefix, endpoint without user info or query', () => {
    expect(redactTarget('s3://hq/sites/?endpoint=http://u:p@127.0.0.1:9000/?token=abc&region=eu-north-1')).toBe('s3://hq/sites/ (http://127.0.0.1:9000/)');
    // Percent-encoded inside the parameter: the old pattern saw no '//…@' and printed it whole.
    expect(redactTarget('s3://hq/?endpoint=http%3A%2F%2Fu%3Asecret%40minio.local%3A9000')).toBe('s3://hq/ (http://minio.local:9000)');
    expect(redactTarget('s3://hq/')).toBe('s3://hq/');
  });

  it('a directory as given; text that is no target loses user info and query', () => {
    expect(redactTarget('/mnt/hq')).toBe('/mnt/hq');
    expect(redactTarget('file:///mnt/hq')).toBe('file:///mnt/hq');
    expect(redactTarget('s3://hq/?endpiont=http://u:p@h:1')).not.toMatch(/u:p|secret/);
    expect(redactTarget('s3://k:secret@/x?sig=1')).not.toContain('secret');
  });
});

describe('targetProblem', () => {
  it("a target that does not parse is named without its user info or query", async () => {
    const { targetProblem } = await import('../sync/targets/open.ts');
    const p = targetProblem('s3://KEY:SECRET@/prefix?sig=abc');
    expect(p).toMatch(/names no bucket|is not an s3/);
    expect(p).not.toContain('SECRET');
    expect(p).not.toContain('sig=abc');
  });
});
