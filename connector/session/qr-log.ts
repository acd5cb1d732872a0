import qrcodeTerminal from 'qrcode-terminal';
import type { Logger } from '../../core/logger.js';
import { clearQr, putQr } from '../../core/store/qr.js';
import type { Table } from '../../core/store/table.js';

/** WhatsApp's QR references: the first of a connection lasts 60 s, each later one 20 s. */
export const FIRST_QR_LIFETIME_MS = 60_000;
const LATER_QR_LIFETIME_MS = 20_000;

/** How long Baileys shows a QR: its `qrTimeout` when one is set (tests), otherwise WhatsApp's lifetimes. */
export function qrLifetimeMs(first: boolean, qrTimeout: number | undefined): number {
  return qrTimeout ?? (first ? FIRST_QR_LIFETIME_MS : LATER_QR_LIFETIME_MS);
}

/** Renders a QR as block characters for a terminal. */
function renderTerminalQr(qr: string): Promise<string> {
  return new Promise((resolve) => qrcodeTerminal.generate(qr, { small: true }, resolve));
}

/**
 * The QR is the one secret-ish value logged at info: the API contract puts it in the server log, as a
 * structured line (`accountId`, `qr`) for tools and as a drawing a person can scan. `logger`
 * is the session's, already bound to the account id.
 */
async function logQr(logger: Logger, accountId: string, qr: string, printTerminal: (text: string) => void) {
  logger.info({ qr, event: 'qr' }, 'QR code ready: scan it with WhatsApp > Linked devices');
  printTerminal(`QR code for account ${accountId}:\n${await renderTerminalQr(qr)}\n`);
}

/**
 * Makes the QR readable through `GET /accounts/:accountId/qr`, then logs it. A failed write
 * costs the HTTP route this QR only: the log still has it. Answers when the QR expires (Unix ms).
 */
export async function publishQr(
  table: Table,
  logger: Logger,
  accountId: string,
  qr: string,
  lifetimeMs: number,
  printTerminal: (text: string) => void,
  now = Date.now(),
): Promise<number> {
  await putQr(table, accountId, qr, lifetimeMs, now).catch((error: unknown) => logger.error({ err: error }, 'storing the QR failed'));
  await logQr(logger, accountId, qr, printTerminal);
  return now + lifetimeMs;
}

/** The QR is no longer scannable (connected, logged out, stopped, given up). */
export async function withdrawQr(table: Table, logger: Logger, accountId: string): Promise<void> {
  await clearQr(table, accountId).catch((error: unknown) => logger.error({ err: error }, 'clearing the QR failed'));
}
