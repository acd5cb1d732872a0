import { DEFAULT_CONNECTION_CONFIG, type proto } from '@whiskeysockets/baileys';
import { compareWaVersions, waVersionText, type WaVersion } from '../core/wa-version.js';

/**
 * The client versions the network accepts, as WhatsApp decides them (docs/sandbox-protocol.md,
 * "Client versions"): a login (or a registration) whose ClientPayload announces an app version
 * below `minimum` is answered `<failure reason="405"/>` and closed, as WhatsApp answers a client
 * it considers too old. `current` is the version the network's web client runs: served as
 * WhatsApp Web's `sw.js` carries it (`client_revision`). Not persisted: a restart accepts every
 * version again.
 */
export class ClientVersions {
  /** Starts as the version the pinned Baileys announces by default. */
  current: WaVersion;
  minimum: WaVersion | undefined;
  /** The version each device (`<phone>.<device>`, or `registration`) announced last. */
  private readonly announced = new Map<string, string>();
  /** Logins refused for their version, per device. */
  private readonly refused = new Map<string, number>();
  private swJsServed = 0;

  constructor(minimum?: WaVersion) {
    const [primary = 2, secondary = 3000, revision = 0] = DEFAULT_CONNECTION_CONFIG.version;
    this.current = [primary, secondary, revision];
    this.minimum = minimum;
  }

  /** Records what the payload announces; false when it is below the minimum (the login is refused). */
  admit(payload: proto.ClientPayload): boolean {
    const app = payload.userAgent?.appVersion;
    const version: WaVersion = [Number(app?.primary ?? 0), Number(app?.secondary ?? 0), Number(app?.tertiary ?? 0)];
    const who = payload.devicePairingData ? 'registration' : `${String(payload.username ?? '')}.${Number(payload.device ?? 0)}`;
    this.announced.set(who, waVersionText(version));
    if (!this.minimum || compareWaVersions(version, this.minimum) >= 0) return true;
    this.refused.set(who, (this.refused.get(who) ?? 0) + 1);
    return false;
  }

  /** WhatsApp Web's service worker as far as a version reader looks at it: its revision inside the escaped JSON it embeds. */
  swJs(): string {
    this.swJsServed += 1;
    const data = JSON.stringify({ dynamic_data: { SiteData: { server_revision: this.current[2], client_revision: this.current[2] } } });
    return `self.__swData=JSON.parse(/*BTDS*/${JSON.stringify(data)});\nself.importScripts("/sandbox-sw-main.js");\n`;
  }

  describe() {
    return {
      current: waVersionText(this.current),
      minimum: this.minimum ? waVersionText(this.minimum) : null,
      swJsServed: this.swJsServed,
      announced: Object.fromEntries(this.announced),
      refused: Object.fromEntries(this.refused),
    };
  }
}
