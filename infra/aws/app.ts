import { App } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import path from 'node:path';
import { buildLambdaBundle } from '../build-lambda.js';
import { apiLambdaHandler } from './api.js';
import { GatewayStack } from './gateway-stack.js';
import { gatewayContextKeys, parseGatewaySettings } from './settings.js';

/**
 * `npm run synth` / `npx cdk synth|deploy`: bundles the API for Lambda with esbuild, then
 * synthesizes the stack. No Docker and no network: the connector image is only staged here and
 * built by `cdk deploy`.
 */
const repositoryRoot = path.resolve(import.meta.dirname, '../..');

// Env-agnostic on purpose (no account/region lookups): synthesis stays offline, `cdk deploy`
// targets the CLI profile's account and region.
const app = new App();
// Validated before the slower bundling, so a wrong -c value fails at once.
const context = Object.fromEntries(gatewayContextKeys.map((key) => [key, app.node.tryGetContext(key)]));
const settings = parseGatewaySettings(context);
const stackName = String(app.node.tryGetContext('stackName') ?? 'WaGateway');

const lambdaBundleDirectory = path.join(app.outdir, 'bundles', 'api');
await buildLambdaBundle(lambdaBundleDirectory);

new GatewayStack(app, stackName, {
  description: 'WhatsApp REST gateway: Hono API on Lambda, Baileys connector on Fargate, DynamoDB, SQS, S3',
  settings,
  apiCode: lambda.Code.fromAsset(lambdaBundleDirectory),
  apiHandler: apiLambdaHandler,
  connectorImageDirectory: repositoryRoot,
});

app.synth();
