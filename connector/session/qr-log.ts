import qrcodeTerminal from 'qrcode-terminal';
import type { Logger } from '../../core/logger.js';

/** Renders a QR as block characters for a terminal. */
export function renderTerminalQr(qr: string): Promise<string> {
  return new Promise((resolve) => qrcodeTerminal.generate(qr, { small: true }, resolve));
}

/**
 * The QR is the one secret-ish value logged at info: the API contract puts it in the server log, as a
 * structured line (`accountId`, `qr`) for tools and as a drawing a person can scan. `logger`
 * is the session's, already bound to the account id.
 */
export async function logQr(logger: Logger, accountId: string, qr: string, printTerminal: (text: string) => void) {
  logger.info({ qr, event: 'qr' }, 'QR code ready: scan it with WhatsApp > Linked devices');
  printTerminal(`QR code for account ${accountId}:\n${await renderTerminalQr(qr)}\n`);
}
