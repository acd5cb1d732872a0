import { pino } from 'pino';
import { installConsoleCapture } from '../../connector/console-capture.js';

// Runs before every test file. Baileys' dependencies print to the console (libsignal dumps whole
// session records, key material included, on every "Closing session"): the connector captures
// those calls into its logger, and the tests send them nowhere. TEST_CONSOLE=1 lets them through
// for debugging; our own console calls always go through.
if (process.env.TEST_CONSOLE !== '1') installConsoleCapture(pino({ level: 'silent' }));
