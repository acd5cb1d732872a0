import { defineConfig } from 'vitest/config';

// The suites start real emulators, a sandbox network and Baileys sockets: they are slow to boot
// and CPU-heavy on a 2-core machine, with generous timeouts. Three workers: much of a suite's time
// is waiting (a lease to expire, a gap, a receiver), and with two the cores sat at a load average
// of about 2 while the whole run took 650 s, past the 10 minutes it must stay under.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // fauxqs persists with node:sqlite, which Node 22 flags as experimental on every start.
    execArgv: ['--disable-warning=ExperimentalWarning'],
    // Silences the console output of dependencies (libsignal's session dumps); TEST_CONSOLE=1 shows it.
    setupFiles: ['test/support/quiet-dependencies.ts'],
  },
});
