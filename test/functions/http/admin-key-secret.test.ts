import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKeyFromSecret } from '../../../functions/http/admin-key-secret.js';
import { startFakeSecretsExtension, type FakeSecretsExtension } from '../../support/fake-secrets-extension.js';

const TOKEN = 'session-token';
let extension: FakeSecretsExtension;
const env = () => ({ PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(extension.port), AWS_SESSION_TOKEN: TOKEN });

beforeAll(async () => {
  extension = await startFakeSecretsExtension({ 'arn:keys': 'one,two', 'arn:blank': ' , ' }, TOKEN);
});
afterAll(async () => {
  await extension?.close();
});

describe('API_KEY from Secrets Manager through the Lambda extension', () => {
  it('answers the secret string, asked for with the session token', async () => {
    expect(await adminKeyFromSecret('arn:keys', env())).toBe('one,two');
  });

  it('fails rather than start open: unknown secret, missing token, or a secret without a key', async () => {
    await expect(adminKeyFromSecret('arn:missing', env())).rejects.toThrow(/answered 404/);
    await expect(adminKeyFromSecret('arn:keys', { ...env(), AWS_SESSION_TOKEN: 'other' })).rejects.toThrow(/answered 400/);
    await expect(adminKeyFromSecret('arn:blank', env())).rejects.toThrow(/holds no key/);
  });
});
