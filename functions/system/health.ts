import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { readWaVersion, type StoredWaVersion } from '../../core/store/wa-version.js';
import type { Table } from '../../core/store/table.js';
import { WA_VERSION_SOURCES, waVersionText } from '../../core/wa-version.js';
import { jsonResponse } from '../http/responses.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';

const ping = createRoute({
  method: 'get',
  path: '/ping',
  summary: 'The server is up',
  description:
    'Also the WhatsApp Web version the connectors announce (`waVersion`) and where it came from (`waVersionSource`), as they last stored it; absent until a connector has run.',
  security: [],
  responses: {
    200: jsonResponse(
      z.object({
        ok: z.literal(true),
        pong: z.literal(true),
        time: z.string(),
        waVersion: z.string().optional().openapi({ example: '2.3000.1234567' }),
        waVersionSource: z.enum(WA_VERSION_SOURCES).optional(),
      }),
      'Pong',
    ),
  },
});

/** `/ping` is called often (load balancers, uptime checks): the stored version is read at most once a minute per process. */
const VERSION_READ_EVERY_MS = 60_000;

function storedVersionOf(table: Table): () => Promise<StoredWaVersion | undefined> {
  let last: { at: number; read: Promise<StoredWaVersion | undefined> } | undefined;
  return () => {
    const at = Date.now();
    if (!last || at - last.at >= VERSION_READ_EVERY_MS) {
      const read = readWaVersion(table).catch(() => {
        // A failed read answers pong without the version, and the next call reads again.
        last = undefined;
        return undefined;
      });
      last = { at, read };
    }
    return last.read;
  };
}

export function healthRoutes(services: Pick<Services, 'table'>): OpenAPIHono<AppEnv> {
  const storedVersion = storedVersionOf(services.table);
  return newRouter().openapi(ping, async (c) => {
    const stored = await storedVersion();
    return c.json(
      {
        ok: true as const,
        pong: true as const,
        time: new Date().toISOString(),
        ...(stored ? { waVersion: waVersionText(stored.version), waVersionSource: stored.source } : {}),
      },
      200,
    );
  });
}
