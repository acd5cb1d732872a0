/**
 * The Node flags the connector process runs with: the image's CMD (Dockerfile), `npm start`
 * (package.json), `CONNECTORS=n npm start`, and the connector children of the tests and the
 * benchmarks all pass these.
 *
 * `--experimental-async-context-frame`: Baileys keeps an AsyncLocalStorage per socket. On Node 22
 * each one is an async hook, so every promise in the process pays for every account: with
 * hundreds of accounts the connector spends its CPU there. The flag (the default from Node 24)
 * makes that O(1).
 */
export const ASYNC_CONTEXT_FRAME_FLAG = '--experimental-async-context-frame';

/**
 * `--expose-gc`: the idle collector (connector/idle-collector.ts) asks V8 for a full collection
 * while the connector is quiet, which gives back the garbage V8 would otherwise keep for minutes.
 */
const EXPOSE_GC_FLAG = '--expose-gc';

export const CONNECTOR_NODE_FLAGS: readonly string[] = [ASYNC_CONTEXT_FRAME_FLAG, EXPOSE_GC_FLAG];
