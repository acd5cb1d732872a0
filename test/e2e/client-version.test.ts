import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConnector, type Connector } from '../../connector/connector.js';
import { PINNED_WA_VERSION } from '../../connector/wa-version/pinned.js';
import { waVersionText } from '../../core/wa-version.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { waitFor } from '../support/wait.js';
import { startGateway, type Gateway } from './support/gateway.js';
import { captureLogs } from './support/log-capture.js';

/**
 * When WhatsApp moves (docs/connector.md, "When WhatsApp moves"): the sandbox raises the version
 * it accepts and serves the new one as its `sw.js`, every connected account is kicked, and each
 * comes back by itself: its login is refused (405, `client_too_old` on the account), the
 * connector resolves the version again and logs in with it. No restart, no new QR.
 *
 * A story in order: the accounts link with the version the sandbox serves, WhatsApp moves, then a
 * connector with WA_VERSION pinned below the minimum keeps being refused until the minimum falls.
 */
describe('story: WhatsApp raises its minimum client version', { timeout: 240_000 }, () => {
  let gw: Gateway;
  let api: TestApi;
  const accounts = [1, 2, 3].map((n) => ({ id: `moving${n}`, phone: `1555071000${n}` }));
  const moved = waVersionText([PINNED_WA_VERSION[0], PINNED_WA_VERSION[1], PINNED_WA_VERSION[2] + 1_000]);
  const pinnedByHand = waVersionText([PINNED_WA_VERSION[0], PINNED_WA_VERSION[1], PINNED_WA_VERSION[2] + 500]);
  let pinnedConnector: Connector | undefined;

  /** `<phone>.<device>` of the account's linked device, as the sandbox names what it announced. */
  const deviceKeys = new Map<string, string>();
  const account = async (id: string) => (await api.call('GET', `/accounts/${id}`)).body.account as Record<string, unknown>;

  beforeAll(async () => {
    gw = await startGateway({ overrides: { METRICS_PORT: '0' } });
    api = await startTestApi(gw.stack);
    for (const { id, phone } of accounts) {
      await gw.control.createPhone(phone);
      const from = gw.logs.lines.length;
      expect((await api.call('POST', '/accounts', { id })).status).toBe(201);
      await gw.linkAccount(id, phone, { logsFrom: from });
      const [device] = (await gw.control.devices(phone)).filter((d) => d.device !== 0);
      deviceKeys.set(id, `${phone}.${device?.device}`);
    }
  });
  afterAll(async () => {
    await pinnedConnector?.stop();
    await api?.close();
    await gw?.stop();
  });

  it('the accounts announce the version the sandbox serves as sw.js; /ping and /metrics report it', async () => {
    const versions = await gw.control.versions();
    expect(versions.current).toBe(waVersionText(PINNED_WA_VERSION));
    for (const { id } of accounts) expect(versions.announced[deviceKeys.get(id) ?? '']).toBe(versions.current);
    // One read of sw.js for the connector, not one per account.
    expect(versions.swJsServed).toBe(1);
    const ping = await api.call('GET', '/ping');
    expect(ping.body).toMatchObject({ ok: true, pong: true, waVersion: versions.current, waVersionSource: 'live' });
    const metrics = await (await fetch(gw.connector.metricsUrl ?? '')).text();
    expect(metrics).toContain(`wa_version_info{version="${versions.current}",source="live"} 1`);
  });

  it('WhatsApp moves: the kicked accounts are refused, then back connected with the new version by themselves', async () => {
    const qrLinesBefore = gw.logs.linesSince(0, (line) => line.event === 'qr').length;
    await gw.control.setVersions({ current: moved, minimum: moved });
    const kickedAt = Date.now();
    for (const { phone } of accounts) {
      const [device] = (await gw.control.devices(phone)).filter((d) => d.device !== 0);
      await gw.control.kick(phone, device?.device ?? -1, 'restart');
    }
    const lastDisconnects = new Map<string, { reason: string; at: number }>();
    for (const { id } of accounts) {
      await waitFor(`${id} connected again after the kick`, async () => {
        const current = await account(id);
        const last = current.lastDisconnect as { reason: string; at: number } | undefined;
        if (current.status !== 'connected' || !last || last.at < kickedAt) return false;
        lastDisconnects.set(id, last);
        return true;
      });
    }
    const versions = await gw.control.versions();
    for (const { id } of accounts) {
      const key = deviceKeys.get(id) ?? '';
      expect(versions.announced[key]).toBe(moved);
      expect(versions.refused[key] ?? 0).toBeLessThanOrEqual(3);
      // Refused, or (kicked after the connector had moved on) never refused at all.
      expect(lastDisconnects.get(id)?.reason).toBe(versions.refused[key] ? 'client_too_old' : 'restart_required');
    }
    // The first refusal is what moved the connector: at least one account was refused, and the
    // accounts refused together cost one more read of sw.js, not one each.
    const refusedAccounts = accounts.filter(({ id }) => versions.refused[deviceKeys.get(id) ?? '']);
    expect(refusedAccounts.length).toBeGreaterThanOrEqual(1);
    expect(versions.swJsServed).toBe(2);
    expect(gw.logs.linesSince(0, (line) => line.event === 'qr')).toHaveLength(qrLinesBefore);
    const healed = gw.logs.linesSince(0, (line) => line.msg === 'WhatsApp refused the version: logging in with a newer one');
    expect(new Set(healed.map((line) => line.accountId))).toEqual(new Set(refusedAccounts.map((a) => a.id)));
    // A new API process reads the version the connector stored (an old one keeps its minute-long copy).
    const freshApi = await startTestApi(gw.stack);
    try {
      expect((await freshApi.call('GET', '/ping')).body).toMatchObject({ waVersion: moved, waVersionSource: 'live' });
    } finally {
      await freshApi.close();
    }
  });

  it('WA_VERSION below the minimum: refused and retried with one warn line, back once the minimum allows it', async () => {
    await gw.stopConnector();
    const logs = captureLogs('info');
    await gw.control.setVersions({ minimum: waVersionText([PINNED_WA_VERSION[0], PINNED_WA_VERSION[1], PINNED_WA_VERSION[2] + 2_000]) });
    const refusedBefore = (await gw.control.versions()).refused;
    pinnedConnector = await startConnector({
      config: { ...gw.config, WA_VERSION: pinnedByHand },
      clients: gw.stack.clients,
      logger: logs.logger,
      printTerminalQr: () => undefined,
      commandWaitSeconds: 1,
    });
    const [first] = accounts;
    const key = deviceKeys.get(first?.id ?? '') ?? '';
    // Refused twice: the second retry follows the drop backoff, and it is an info line, not a second warning.
    await waitFor('two more refusals', async () => ((await gw.control.versions()).refused[key] ?? 0) >= (refusedBefore[key] ?? 0) + 2);
    const warnings = logs.linesSince(
      0,
      (line) => line.accountId === first?.id && line.level === 40 && /refuses the version/.test(String(line.msg)),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ refused: pinnedByHand });
    expect((await gw.control.versions()).announced[key]).toBe(pinnedByHand);

    await gw.control.setVersions({ minimum: null });
    for (const { id } of accounts) {
      await waitFor(`${id} connected with the pinned version`, async () => (await account(id)).status === 'connected');
      expect((await gw.control.versions()).announced[deviceKeys.get(id) ?? '']).toBe(pinnedByHand);
    }
  });
});
