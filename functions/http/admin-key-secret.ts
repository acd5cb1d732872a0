import { request } from 'node:http';
import { adminKeysOf } from './auth.js';

/** The extension's documented default port, overridden by the variable the CDK layer sets. */
const EXTENSION_DEFAULT_PORT = 2773;

/**
 * `API_KEY` from Secrets Manager, read once per Lambda container through the AWS Parameters and
 * Secrets Lambda Extension (the layer docs/deploy-aws.md's `apiKeySecretArn` adds): a loopback
 * HTTP call, so the bundle carries no Secrets Manager client. Fails rather than start open when
 * the secret holds no key.
 */
export async function adminKeyFromSecret(secretId: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const port = Number(env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? EXTENSION_DEFAULT_PORT);
  const body = await new Promise<string>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: `/secretsmanager/get?secretId=${encodeURIComponent(secretId)}`,
        headers: { 'X-Aws-Parameters-Secrets-Token': env.AWS_SESSION_TOKEN ?? '' },
        timeout: 5_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks).toString('utf8'))
            : reject(new Error(`reading the API_KEY secret failed: the extension answered ${res.statusCode}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('reading the API_KEY secret timed out')));
    req.on('error', reject);
    req.end();
  });
  const secret = (JSON.parse(body) as { SecretString?: unknown }).SecretString;
  if (typeof secret !== 'string' || adminKeysOf(secret).length === 0) {
    throw new Error('the API_KEY secret holds no key (expected a SecretString of comma-separated keys)');
  }
  return secret;
}
