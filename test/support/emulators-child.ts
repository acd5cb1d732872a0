/**
 * Runs the embedded emulators in a process of their own and prints their env as one JSON line,
 * for tests that measure the memory of the process under test (an in-process S3 emulator would
 * count the parts it receives as the API's memory). Stops on SIGTERM/SIGINT.
 */
import { startEmulators } from '../../infra/local/emulators.js';

const emulators = await startEmulators();
process.stdout.write(`${JSON.stringify(emulators.env)}\n`);
const stop = () => {
  emulators.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
