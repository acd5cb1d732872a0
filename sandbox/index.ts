import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { generateNoiseKeys, generateTlsMaterial, isUsableTlsMaterial, type TlsMaterial } from './certs.js';
import { Connection } from './connection.js';
import { createControlApi } from './control-api.js';
import { SandboxCore } from './core.js';
import type { Addressing } from './network/network.js';
import { createSandboxLogger, type Logger } from './log.js';
import { startMediaHost } from './media-host.js';
import { Persistence, type Snapshot } from './persistence.js';
import { listenLocal } from './listen.js';
import type { WaVersion } from '../core/wa-version.js';

export interface SandboxOptions {
  /** WebSocket chat port; 0 = any free port. */
  port?: number;
  controlPort?: number;
  mediaPort?: number;
  /** State survives restarts when set; in memory otherwise. */
  dataDir?: string;
  /**
   * Ports not given default to those of the previous run saved in dataDir, when still free
   * (else any free port).
   */
  reusePorts?: boolean;
  /**
   * `pn` (default): stanzas name senders by phone number with `sender_lid`; `lid`: by LID with
   * `sender_pn`, as WhatsApp increasingly delivers.
   */
  addressing?: Addressing;
  /** Logins announcing an older app version are refused with a 405 (the control API's `PUT /version` changes it). */
  minimumClientVersion?: WaVersion;
  /** Where to also write the descriptor as JSON; default `dataDir/sandbox.json` when there is a dataDir. */
  descriptorFile?: string;
  logger?: Logger;
}

/** What a client needs: the gateway reads these as WA_WS_URL, WA_ROOT_PUBLIC_KEY, WA_MEDIA_CA_FILE. */
export interface SandboxDescriptor {
  wsUrl: string;
  /** Hex, 64 chars (32 bytes). */
  rootPublicKey: string;
  mediaCaFile: string;
  /** The media host (`https://127.0.0.1:PORT`); absent in descriptors written before it was given. */
  mediaUrl?: string;
  controlUrl: string;
  /** The network's current client version as WhatsApp Web's `sw.js` carries it: the gateway's WA_VERSION_URL. */
  versionUrl: string;
}

export interface RunningSandbox {
  descriptor: SandboxDescriptor;
  core: SandboxCore;
  /** The media host's certificate and key: the CA clients trust for it (`descriptor`'s CA file) vouches for anything served with them. */
  tls: TlsMaterial;
  stop(): Promise<void>;
}

const MAX_WS_PAYLOAD = 32 * 1024 * 1024;

/** Starts the chat endpoint, media host and control API on 127.0.0.1. */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const logger = options.logger ?? createSandboxLogger();
  const restored = options.dataDir ? Persistence.load(options.dataDir) : undefined;
  const noiseKeys = restored?.noiseKeys ?? generateNoiseKeys();
  const tls = restored?.tls && isUsableTlsMaterial(restored.tls) ? restored.tls : generateTlsMaterial();

  const previousPorts = options.reusePorts ? restored?.ports : undefined;
  const anyPortIfTaken = !!previousPorts;
  let persistence: Persistence | undefined;
  let ports: Snapshot['ports'];
  const core = new SandboxCore(noiseKeys, logger, () => persistence?.schedule(), options.addressing, options.minimumClientVersion);
  for (const account of restored?.accounts ?? []) core.network.accounts.add(account);
  for (const group of restored?.groups ?? []) core.network.groups.add(group);
  if (options.dataDir) {
    persistence = new Persistence(options.dataDir, () => ({
      noiseKeys,
      tls,
      accounts: [...core.network.accounts.all()],
      groups: [...core.network.groups.all()],
      ports,
    }));
  }

  const fileDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'wa-sandbox-'));
  const mediaCaFile = join(fileDir, 'media-ca.pem');
  writeFileSync(mediaCaFile, tls.certPem);

  const media = await startMediaHost({
    tls,
    port: options.mediaPort ?? previousPorts?.media ?? 0,
    anyPortIfTaken,
    dir: options.dataDir ? join(options.dataDir, 'media') : undefined,
    logger,
  });
  core.network.mediaHost = media.host;
  core.network.media = media;

  const chatServer = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'websocket only' }));
  });
  const wss = new WebSocketServer({ server: chatServer, maxPayload: MAX_WS_PAYLOAD, perMessageDeflate: false });
  wss.on('connection', (ws) => new Connection(ws, core));
  // ws re-emits the HTTP server's errors; listen errors are handled by listenLocal.
  wss.on('error', (err) => logger.debug({ err }, 'chat server error'));
  const controlServer = createAdaptorServer({ fetch: createControlApi(core).fetch }) as Server;
  let chatPort: number;
  let controlPort: number;
  try {
    chatPort = await listenLocal(chatServer, options.port ?? previousPorts?.chat ?? 0, anyPortIfTaken);
    controlPort = await listenLocal(controlServer, options.controlPort ?? previousPorts?.control ?? 0, anyPortIfTaken);
  } catch (err) {
    chatServer.close();
    controlServer.close();
    await media.close();
    throw err;
  }

  ports = { chat: chatPort, control: controlPort, media: Number(media.host.split(':')[1]) };
  persistence?.schedule();

  const descriptor: SandboxDescriptor = {
    wsUrl: `ws://127.0.0.1:${chatPort}/ws/chat`,
    rootPublicKey: noiseKeys.root.public.toString('hex'),
    mediaCaFile,
    mediaUrl: `https://${media.host}`,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    versionUrl: `http://127.0.0.1:${controlPort}/sw.js`,
  };
  const descriptorFile = options.descriptorFile ?? (options.dataDir ? join(options.dataDir, 'sandbox.json') : undefined);
  if (descriptorFile) writeFileSync(descriptorFile, `${JSON.stringify(descriptor, null, 2)}\n`);

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      core.network.closeAll();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      chatServer.closeAllConnections();
      controlServer.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => chatServer.close(() => resolve())),
        new Promise<void>((resolve) => controlServer.close(() => resolve())),
        media.close(),
      ]);
      await persistence?.flush();
      if (!options.dataDir) rmSync(fileDir, { recursive: true, force: true });
    })());

  return { descriptor, core, tls, stop };
}
