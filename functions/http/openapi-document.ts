import type { OpenAPIHono } from '@hono/zod-openapi';
import { ANY_KEY_PATHS } from './auth.js';
import { OPERATION_TAGS, OPERATIONS } from './operations.js';
import type { AppEnv } from './services.js';

type Operation = {
  operationId?: string;
  tags?: string[];
  security?: unknown[];
  responses?: Record<string, unknown>;
};

const KEY_REQUIRED: Record<string, string[]>[] = [{ bearer: [] }, { apiKey: [] }];
const FORBIDDEN_ANSWER = "An account key used outside its own account's routes (`Forbidden`)";
const errorAnswer = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/**
 * The OpenAPI document as the server behaves: every operation named and tagged (operations.ts);
 * a key required (bearer or X-Api-Key), with its 401 answer and, but on the paths any key
 * reaches, its 403, only when API_KEY is set, and open otherwise; the operations that stay public
 * (`security: []`) as they are. Built once per app from the routes' own definitions.
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>, keysOn: boolean): Record<string, unknown> {
  const document = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'WhatsApp gateway', version: '2.0.0' },
    servers: [{ url: '/', description: 'this server' }],
    tags: OPERATION_TAGS.map((tag) => ({ ...tag })),
    security: keysOn ? KEY_REQUIRED : [],
  });
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, value] of Object.entries(operations as Record<string, Operation>)) {
      const named = OPERATIONS[`${method.toUpperCase()} ${path}`];
      if (named) {
        value.operationId = named.operationId;
        value.tags = [named.tag];
      }
      const isPublic = Array.isArray(value.security) && value.security.length === 0;
      if (keysOn && !isPublic) {
        value.responses ??= {};
        value.responses['401'] ??= errorAnswer('No key, or a key that is not valid (`Unauthorized`, with `WWW-Authenticate: Bearer`)');
        if (!ANY_KEY_PATHS.has(path)) value.responses['403'] ??= errorAnswer(FORBIDDEN_ANSWER);
      }
    }
  }
  return document as unknown as Record<string, unknown>;
}
