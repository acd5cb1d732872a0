import { z } from '@hono/zod-openapi';

/**
 * The pieces of the OpenAPI document the routes share: JSON content, a JSON response, and the
 * error body of docs/api.md (the `Error` component) with what each status means on a route.
 */
const errorBodySchema = z
  .object({
    ok: z.literal(false),
    error: z.string(),
    detail: z.string().optional(),
    retryAfter: z.number().int().optional().openapi({
      description: "A send refused while the account's sending is paused: seconds until it may be tried again (also `Retry-After`)",
    }),
  })
  .openapi('Error');

/** A JSON body or answer: `{'application/json': {schema}}`. */
export const jsonContent = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

/** A JSON answer with what it means. */
export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: jsonContent(schema) });

/** An error answer (`{ok: false, error}`): `description` says what the status means on that route. */
export const errorResponse = (description: string) => jsonResponse(errorBodySchema, description);

/** `{ok: true, message}`: an answer that says what was done and makes nothing new. */
export const messageResponse = (description: string) => jsonResponse(z.object({ ok: z.literal(true), message: z.string() }), description);
