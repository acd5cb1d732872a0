import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { printStartupSummary, startupSummary, summaryText } from '../../../infra/local/summary.js';

function sink(isTTY: boolean): { out: Writable & { isTTY?: boolean }; text: () => string } {
  let text = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { out: Object.assign(out, { isTTY }), text: () => text };
}

describe('npm start summary', () => {
  const onSandbox = startupSummary({
    apiUrl: 'http://127.0.0.1:3000',
    dataDir: '/srv/data',
    sandboxControlUrl: 'http://127.0.0.1:7701',
    authOn: false,
  });

  it('names the console, the API, its docs, the data folder, the network and whether auth is on', () => {
    expect(onSandbox).toEqual({
      apiUrl: 'http://127.0.0.1:3000',
      dashboardUrl: 'http://127.0.0.1:3000/dashboard/',
      docsUrl: 'http://127.0.0.1:3000/docs',
      dataDir: '/srv/data',
      network: 'sandbox',
      sandboxControlUrl: 'http://127.0.0.1:7701',
      auth: 'off',
    });
    expect(startupSummary({ apiUrl: 'http://h:1', dataDir: '/d', sandboxControlUrl: undefined, authOn: true })).toEqual({
      apiUrl: 'http://h:1',
      dashboardUrl: 'http://h:1/dashboard/',
      docsUrl: 'http://h:1/docs',
      dataDir: '/d',
      network: 'whatsapp',
      auth: 'on',
    });
  });

  it('prints the first commands on a terminal: create, link with sandbox:link, send, read', () => {
    const text = summaryText(onSandbox);
    expect(text).toContain('API docs  http://127.0.0.1:3000/docs');
    expect(text).toContain('console   http://127.0.0.1:3000/dashboard/');
    expect(text).toContain('control API http://127.0.0.1:7701');
    // The helper finds the stack through DATA_DIR: named unless it is the default.
    expect(text).toContain('  DATA_DIR=/srv/data npm run sandbox:link -- alice 15550000001');
    expect(summaryText({ ...onSandbox, dataDir: resolve('./data') })).toContain('\n  npm run sandbox:link -- alice 15550000001');
    expect(text).toContain('curl -s http://127.0.0.1:7701/phones/15550000002/messages');
    expect(text).toContain('curl -s http://127.0.0.1:3000/accounts/alice/chats/15550000002@s.whatsapp.net/messages');
    expect(summaryText({ ...onSandbox, auth: 'on' })).toContain('-H "x-api-key: $API_KEY"');
    const onWhatsApp = summaryText(startupSummary({ apiUrl: 'http://h:1', dataDir: '/d', sandboxControlUrl: undefined, authOn: false }));
    expect(onWhatsApp).toContain('scan the QR');
    expect(onWhatsApp).not.toContain('sandbox:link');
  });

  it('is a text block on a terminal and one JSON line otherwise', () => {
    const terminal = sink(true);
    const terminalLog = sink(false);
    printStartupSummary(onSandbox, pino(terminalLog.out), terminal.out);
    expect(terminal.text()).toContain('wa-gateway is running');
    expect(terminalLog.text()).toBe('');

    const pipe = sink(false);
    const pipeLog = sink(false);
    printStartupSummary(onSandbox, pino(pipeLog.out), pipe.out);
    expect(pipe.text()).toBe('');
    expect(JSON.parse(pipeLog.text())).toMatchObject({ msg: 'ready', ...onSandbox });
  });
});
