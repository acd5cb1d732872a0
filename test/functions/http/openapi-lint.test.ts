import {
  BaseResolver,
  createConfig,
  lintDocument,
  makeDocumentFromString,
  type NormalizedProblem,
  ResolveError,
  type Source,
} from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { servedDocument } from '../../../infra/openapi/served-document.js';

/**
 * The served document under Redocly's `recommended` ruleset, as a client generator's user would
 * lint it: no error, and every operation named. Other warnings may stand (a missing licence, an
 * operation that has no 4xx answer when keys are off).
 */

/** Reads nothing from outside the document: an external `$ref` is a resolve error, never a fetch or a file read. */
class DocumentOnlyResolver extends BaseResolver {
  override async loadExternalRef(absoluteRef: string): Promise<Source> {
    throw new ResolveError(new Error(`the document refers outside itself: ${absoluteRef}`));
  }
}

async function problemsOf(env: Record<string, string>): Promise<NormalizedProblem[]> {
  const resolver = new DocumentOnlyResolver();
  const config = await createConfig({ extends: ['recommended'] }, { externalRefResolver: resolver });
  const document = makeDocumentFromString(await servedDocument(env), '/openapi.json');
  return lintDocument({ document, config, externalRefResolver: resolver });
}

/** A problem as one line: what a failure lists (the whole problem would carry the document's text). */
const described = ({ severity, ruleId, location, message }: NormalizedProblem) =>
  `${severity} ${ruleId} at ${location[0]?.pointer ?? '(no pointer)'}: ${message}`;

describe("the OpenAPI document under Redocly's recommended rules", () => {
  for (const [keys, env] of [
    ['without API_KEY', {}],
    ['with API_KEY', { API_KEY: 'an-admin-key-of-enough-length' }],
  ] as const) {
    it(`${keys}: no error, and every operation has an operationId`, async () => {
      const problems = (await problemsOf(env)).filter(({ severity, ruleId }) => severity === 'error' || ruleId === 'operation-operationId');
      expect(problems.map(described), 'Redocly found these problems').toEqual([]);
    });
  }
});
