import { App, type IPolicyValidationPlugin, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnResource } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { apiLambdaHandler } from '../../../infra/aws/api.js';
import { GatewayStack } from '../../../infra/aws/gateway-stack.js';
import { parseGatewaySettings, type GatewaySettingsInput } from '../../../infra/aws/settings.js';
import type { IConstruct } from 'constructs';

export const repositoryRoot = path.resolve(import.meta.dirname, '../../..');

export interface SynthesizedGateway {
  stack: GatewayStack;
  template: Template;
}

/**
 * A scratch directory for one test file: cdk.out-style output plus a placeholder Lambda bundle
 * (template tests check the stack's shape, the bundle has its own tests). `remove()` in afterAll.
 */
export function createSynthDirectory(): { outdir: string; placeholderBundle: string; remove(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'wa-gateway-cdk-'));
  const placeholderBundle = path.join(root, 'bundle');
  mkdirSync(placeholderBundle);
  writeFileSync(path.join(placeholderBundle, 'index.mjs'), 'export const handler = async () => ({ statusCode: 200 });\n');
  return { outdir: path.join(root, 'cdk.out'), placeholderBundle, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** `validationPlugins` run over the app as it synthesizes, as `Validations.of(app).addPlugins` registers them. */
export function synthGateway(
  context: GatewaySettingsInput & Record<string, unknown>,
  directories: { outdir: string; bundle: string },
  options: { validationPlugins?: IPolicyValidationPlugin[] } = {},
): SynthesizedGateway {
  const app = new App({ outdir: directories.outdir });
  if (options.validationPlugins) Validations.of(app).addPlugins(...options.validationPlugins);
  const stack = new GatewayStack(app, 'WaGatewayTest', {
    settings: parseGatewaySettings(context),
    apiCode: lambda.Code.fromAsset(directories.bundle),
    apiHandler: apiLambdaHandler,
    connectorImageDirectory: repositoryRoot,
  });
  return { stack, template: Template.fromStack(stack) };
}

/** The logical id CloudFormation knows a construct's resource by (for Ref / GetAtt checks). */
export function logicalIdOf(construct: IConstruct): string {
  const resource = (construct.node.defaultChild ?? construct) as CfnResource;
  return Stack.of(construct).getLogicalId(resource);
}
