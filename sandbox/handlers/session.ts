import type { BinaryNode } from '@whiskeysockets/baileys';
import { child, children, iqError, iqResult, type StanzaContext } from './context.js';
import { profilePicturePath } from '../media-host.js';

const PRIVACY_DEFAULTS: Record<string, string> = {
  readreceipts: 'all',
  last: 'all',
  online: 'all',
  profile: 'all',
  status: 'all',
  groupadd: 'all',
  calladd: 'all',
  messages: 'all',
};

/** Keep-alive, presence mode, props, privacy, blocklist, media host and app-state answers. */
export function handleSessionIq(ctx: StanzaContext, iq: BinaryNode): boolean {
  const xmlns = iq.attrs.xmlns;
  const first = children(iq)[0];
  switch (xmlns) {
    case 'w:p':
      ctx.send(iqResult(iq));
      return true;
    case 'passive':
      ctx.send(iqResult(iq));
      if (first?.tag === 'active') ctx.onActive();
      return true;
    case 'abt':
      ctx.send(iqResult(iq, [{ tag: 'props', attrs: { protocol: '1', hash: 'sandbox' }, content: [] }]));
      return true;
    case 'blocklist':
      ctx.send(iqResult(iq, iq.attrs.type === 'get' ? [{ tag: 'list', attrs: {} }] : undefined));
      return true;
    case 'privacy':
      if (iq.attrs.type === 'get' && first?.tag === 'privacy') {
        const categories = Object.entries(PRIVACY_DEFAULTS).map(([name, value]) => ({
          tag: 'category',
          attrs: { name, value },
        }));
        ctx.send(iqResult(iq, [{ tag: 'privacy', attrs: {}, content: categories }]));
      } else {
        ctx.send(iqResult(iq));
      }
      return true;
    case 'w:m':
      ctx.send(
        iqResult(iq, [
          {
            tag: 'media_conn',
            attrs: { auth: 'sandbox', ttl: '3600', auth_ttl: '3600', max_buckets: '12' },
            content: [{ tag: 'host', attrs: { hostname: ctx.network.mediaHost, maxContentLengthBytes: '104857600' } }],
          },
        ]),
      );
      return true;
    case 'w:sync:app:state': {
      // Echoing each requested collection with no patches ends Baileys' sync loop (chats.js:433-545).
      const collections = children(child(iq, 'sync')).map((c) => ({
        tag: 'collection',
        attrs: { name: c.attrs.name ?? '', version: c.attrs.version ?? '0' },
      }));
      ctx.send(iqResult(iq, [{ tag: 'sync', attrs: {}, content: collections }]));
      return true;
    }
    case 'w:profile:picture': {
      // Every account has a picture, served by the media host; an unknown JID has none (404, as WhatsApp answers).
      const target = ctx.network.accounts.resolve(iq.attrs.target);
      if (!target) {
        ctx.send(iqError(iq, 404, 'item-not-found'));
        return true;
      }
      const path = profilePicturePath(target.account.phone);
      const picture = {
        tag: 'picture',
        attrs: { id: '1', type: first?.attrs.type ?? 'preview', url: `https://${ctx.network.mediaHost}${path}`, direct_path: path },
      };
      ctx.send(iqResult(iq, [picture]));
      return true;
    }
    default:
      return false;
  }
}
