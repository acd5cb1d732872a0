import { resolve } from 'node:path';
import type { Logger } from '../../core/logger.js';
import { wantsPrettyLogs } from '../../core/log-format.js';

/** What `npm start` tells a person (or a log collector) once everything listens. */
export interface StartupSummary {
  apiUrl: string;
  /** The web console: accounts, linking, chats, webhooks, keys. */
  dashboardUrl: string;
  docsUrl: string;
  dataDir: string;
  network: 'whatsapp' | 'sandbox';
  /** The sandbox's control API, when the stack runs the sandbox. */
  sandboxControlUrl?: string;
  auth: 'on' | 'off';
}

export function startupSummary(input: {
  apiUrl: string;
  dataDir: string;
  sandboxControlUrl: string | undefined;
  authOn: boolean;
}): StartupSummary {
  return {
    apiUrl: input.apiUrl,
    dashboardUrl: `${input.apiUrl}/dashboard/`,
    docsUrl: `${input.apiUrl}/docs`,
    dataDir: resolve(input.dataDir),
    network: input.sandboxControlUrl ? 'sandbox' : 'whatsapp',
    ...(input.sandboxControlUrl ? { sandboxControlUrl: input.sandboxControlUrl } : {}),
    auth: input.authOn ? 'on' : 'off',
  };
}

/** The block printed on a terminal: where things are, and the first commands to paste. */
export function summaryText(summary: StartupSummary): string {
  const { apiUrl, sandboxControlUrl } = summary;
  const key = summary.auth === 'on' ? ` -H "x-api-key: $API_KEY"` : '';
  const json = `-H 'content-type: application/json'`;
  const lines = [
    '',
    'wa-gateway is running',
    `  console   ${summary.dashboardUrl}   (open it in a browser)`,
    `  API       ${apiUrl}`,
    `  API docs  ${summary.docsUrl}`,
    `  data      ${summary.dataDir}`,
    sandboxControlUrl ? `  network   sandbox (offline WhatsApp), control API ${sandboxControlUrl}` : '  network   WhatsApp',
    `  auth      ${summary.auth === 'on' ? 'on (API_KEY)' : 'off: anyone who reaches the port can use it'}`,
    '',
    'Create an account:',
    `  curl -s -XPOST ${apiUrl}/accounts${key} ${json} -d '{"id":"alice"}'`,
  ];
  if (sandboxControlUrl) {
    lines.push(
      'Link it to sandbox phone 15550000001 (creates the phone, scans the QR):',
      `  ${summary.dataDir === resolve('./data') ? '' : `DATA_DIR=${summary.dataDir} `}npm run sandbox:link -- alice 15550000001`,
      'Send to another sandbox phone, and read what it received:',
      `  curl -s -XPOST ${sandboxControlUrl}/phones ${json} -d '{"phone":"15550000002"}'`,
      `  curl -s -XPOST ${apiUrl}/accounts/alice/message/send${key} ${json} -d '{"to":"15550000002@s.whatsapp.net","message":"hi"}'`,
      `  curl -s ${sandboxControlUrl}/phones/15550000002/messages`,
      'Let that phone write to alice, and read the chat through the API:',
      `  curl -s -XPOST ${sandboxControlUrl}/phones/15550000002/messages ${json} -d '{"to":"15550000001","text":"hello alice"}'`,
      `  curl -s ${apiUrl}/accounts/alice/chats/15550000002@s.whatsapp.net/messages${key}`,
    );
  } else {
    lines.push('Link it: scan the QR drawn below with WhatsApp > Settings > Linked devices > Link a device.');
  }
  lines.push('Ctrl-C stops everything.', '');
  return lines.join('\n');
}

/** A readable block on a terminal; one JSON line (`ready`) for machines. */
export function printStartupSummary(
  summary: StartupSummary,
  logger: Logger,
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): void {
  if (wantsPrettyLogs(out)) out.write(`${summaryText(summary)}\n`);
  else logger.info(summary, 'ready');
}
