import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeSecretsExtension {
  port: number;
  /** The secret ids asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * The AWS Parameters and Secrets Lambda Extension's HTTP interface on a loopback port:
 * `GET /secretsmanager/get?secretId=` with the session token header, answering
 * `{Name, SecretString}`, 400 without the token, 404 for an unknown id.
 */
export async function startFakeSecretsExtension(secrets: Record<string, string>, sessionToken: string): Promise<FakeSecretsExtension> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const id = url.searchParams.get('secretId') ?? '';
    requests.push(id);
    if (req.headers['x-aws-parameters-secrets-token'] !== sessionToken) return void res.writeHead(400).end('missing token');
    const value = url.pathname === '/secretsmanager/get' ? secrets[id] : undefined;
    if (value === undefined) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ Name: id, SecretString: value }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
