// Minimal types for the s3rver dev dependency (tests only).
declare module 's3rver' {
  import type { EventEmitter } from 'node:events';
  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    configureBuckets?: { name: string; configs: unknown[] }[];
  }
  class S3rver extends EventEmitter {
    constructor(options?: S3rverOptions);
    run(): Promise<unknown>;
    close(): Promise<void>;
  }
  export default S3rver;
}
