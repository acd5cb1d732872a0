// dynalite and s3rver ship no type declarations; these cover the parts infra/local uses.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }
  function dynalite(options?: DynaliteOptions): Server;
  export default dynalite;
}

declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory?: string;
    silent?: boolean;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
  }
  class S3rver {
    constructor(options?: S3rverOptions);
    /** Koa's middleware list (S3rver is a Koa app), composed when run() starts listening. */
    middleware: unknown[];
    store: { rootDirectory: string };
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
  export default S3rver;
}
