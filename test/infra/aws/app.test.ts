import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { repositoryRoot } from './synth-gateway.js';

/**
 * The entry `cdk synth` runs (cdk.json: `npx tsx infra/aws/app.ts`), as the CLI runs it: a child
 * process told its output directory and context through the CLI's environment variables.
 */
const outdir = mkdtempSync(path.join(tmpdir(), 'wa-gateway-app-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

const templateSchema = z.object({
  Resources: z.record(z.string(), z.object({ Type: z.string(), Properties: z.record(z.string(), z.unknown()).optional() })),
  Outputs: z.record(z.string(), z.unknown()),
});

// A bundle and a synth in a child process: about 9 s on a quiet machine, over a minute on a busy one.
describe('infra/aws/app.ts', { timeout: 240_000 }, () => {
  it('bundles the API into the output directory and synthesizes the stack with the given context', async () => {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/aws/app.ts'], {
      cwd: repositoryRoot,
      env: {
        PATH: process.env.PATH,
        CDK_OUTDIR: outdir,
        CDK_CONTEXT_JSON: JSON.stringify({ stackName: 'GatewayFromApp', apiAccess: 'private', connectorDesiredCount: '2' }),
      },
      timeout: 230_000,
    });

    expect(existsSync(path.join(outdir, 'bundles', 'api', 'index.mjs'))).toBe(true);
    const template = templateSchema.parse(JSON.parse(readFileSync(path.join(outdir, 'GatewayFromApp.template.json'), 'utf8')));
    const resources = Object.values(template.Resources);
    const ofType = (type: string) => resources.filter((r) => r.Type === type);
    expect(ofType('AWS::ElasticLoadBalancingV2::LoadBalancer')).toHaveLength(1);
    expect(ofType('AWS::ApiGatewayV2::Api')).toHaveLength(0);
    expect(ofType('AWS::ECS::Service')[0]?.Properties?.DesiredCount).toBe(2);
    expect(ofType('AWS::Lambda::Function')[0]?.Properties?.Handler).toBe('index.handler');
    expect(Object.keys(template.Outputs)).toEqual(expect.arrayContaining(['ApiUrl', 'ConnectorLogGroup', 'TableName']));
  });

  it('stops with a message naming the key when the context is invalid', async () => {
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/aws/app.ts'], {
      cwd: repositoryRoot,
      env: {
        PATH: process.env.PATH,
        CDK_OUTDIR: path.join(outdir, 'invalid'),
        CDK_CONTEXT_JSON: JSON.stringify({ connectorArchitecture: 'sparc' }),
      },
      timeout: 230_000,
    });
    const failure = await run.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ stderr: expect.stringContaining('connectorArchitecture') });
  });
});
