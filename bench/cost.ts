/**
 * `npm run bench:cost` — what the gateway costs on AWS, from requests and capacity units
 * counted at the embedded emulators (every process's, the connector children's included:
 * bench/cost/dynamo-meter.ts, bench/cost/http-meter.ts), priced at AWS list prices
 * (bench/cost/bill.ts). The sandbox in a child process, connector processes as ECS runs them
 * (default timings, 32 command shards, pacing off), the API, the emulators and one webhook
 * receiver in this process.
 *
 * (a) Idle: BENCH_COST_ACCOUNTS (100) linked accounts, resumed by a fresh connector; after
 *     BENCH_COST_OFFSET_S (150) the requests of BENCH_COST_IDLE_MINUTES (15) are counted. A
 *     multiple of 5 minutes starting mid-cycle holds each 5-minute sweep (the write-ahead replay
 *     of every session, the ownership listing) exactly once per 5 minutes. Lines naming an
 *     account's partition are per account, the rest per deployment: the month at 1,000 accounts
 *     is fixed × 730 h + per account-hour × 1,000 × 730 h.
 * (b) Traffic: BENCH_COST_TEXTS (300) texts from phones to the accounts at 2/s, then
 *     BENCH_COST_SENDS (150) API text sends at 1/s, over BENCH_COST_PAIRS (20) account-phone
 *     pairs that talked before; each window's idle share ((a)'s rate) is taken off. The month:
 *     1,000 accounts × (100 in + 50 out) a day × 30.4 days.
 * (c) Scale: BENCH_COST_SIMULATED (10,000) accounts in all (the linked ones plus account records
 *     without a session: what the listing reads), BENCH_COST_CONNECTORS (4) connectors; after
 *     settling and BENCH_COST_OFFSET_S, BENCH_COST_SCALE_MINUTES (5) counted. The month: the
 *     deployment's lines as measured + the per-account lines × 10,000 / the linked accounts.
 * It prints the request figures and the three bills against issue #35's goals; asserts nothing.
 */
// The meter goes in before anything loads dynalite: CommonJS modules that ES modules import
// are run when the importing graph is linked, before any of its code, so the rest is imported
// only once the meter is in place.
import './cost/dynamo-meter.js';

await import('./cost/run.js');
