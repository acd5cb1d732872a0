import { describe, expect, it } from 'vitest';
import { OPERATION_TAGS } from '../../../functions/http/operations.js';
import { servedDocument } from '../../../infra/openapi/served-document.js';

type Operation = { operationId?: string; tags?: string[]; security?: unknown[]; responses?: Record<string, unknown> };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  security?: unknown[];
  tags?: { name: string }[];
  servers?: { url: string }[];
  components?: { securitySchemes?: Record<string, unknown> };
};

/** The document as a client generator reads it (no AWS request is made for it). */
const documentOf = async (env: Record<string, string>) => JSON.parse(await servedDocument(env)) as Document;

const operationsOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ key: `${method} ${path}`, op })),
  );

describe('the OpenAPI document a client can be generated from', () => {
  it('every operation has a unique operationId and one of the declared tags; servers and tags are listed', async () => {
    const document = await documentOf({});
    const operations = operationsOf(document);
    expect(operations.length).toBeGreaterThanOrEqual(51);
    const unnamed = operations.filter(({ op }) => !op.operationId).map(({ key }) => key);
    expect(unnamed).toEqual([]);
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const tagNames = OPERATION_TAGS.map((tag) => tag.name);
    expect(document.tags?.map((tag) => tag.name)).toEqual(tagNames);
    for (const { key, op } of operations) expect(op.tags?.length === 1 && tagNames.includes(op.tags[0] as never), key).toBe(true);
    // Every tag groups something.
    expect(new Set(operations.flatMap(({ op }) => op.tags ?? []))).toEqual(new Set(tagNames));
    expect(document.servers).toEqual([{ url: '/', description: 'this server' }]);
  });

  it('without API_KEY the API is open, and the document says so (no security scheme)', async () => {
    const document = await documentOf({});
    expect(document.security).toEqual([]);
    expect(document.components?.securitySchemes).toBeUndefined();
    expect(operationsOf(document).filter(({ op }) => op.responses?.['401'])).toEqual([]);
  });

  it('with API_KEY a key is required (bearer or X-Api-Key), with its 401 and 403, except on the public operations; /me, which any key reaches, has no 403', async () => {
    const document = await documentOf({ API_KEY: 'an-admin-key-of-enough-length' });
    expect(document.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    for (const { key, op } of operationsOf(document)) {
      if (key === 'get /ping') {
        expect(op.security).toEqual([]);
        expect(op.responses?.['401']).toBeUndefined();
      } else if (key === 'get /me') {
        expect(op.responses?.['401']).toBeDefined();
        expect(op.responses?.['403']).toBeUndefined();
      } else {
        expect(op.responses?.['401'], key).toBeDefined();
        expect(op.responses?.['403'], key).toBeDefined();
      }
    }
  });
});
