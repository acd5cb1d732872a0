import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { loadConfig } from '../../../core/config.js';
import { repositoryRoot } from './synth-gateway.js';
import { CONNECTOR_NODE_FLAGS } from '../../../connector/node-flags.js';

/** Checks of the Dockerfile and compose file that need no Docker. */

const dockerfile = readFileSync(path.join(repositoryRoot, 'Dockerfile'), 'utf8');
const dockerignore = readFileSync(path.join(repositoryRoot, '.dockerignore'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n\s*/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));

interface Stage {
  name: string;
  lines: string[];
}
const stages: Stage[] = [];
for (const line of instructions) {
  const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?$/i.exec(line);
  if (from) stages.push({ name: from[1] ?? `stage${stages.length}`, lines: [] });
  else stages.at(-1)?.lines.push(line);
}
const runtime = stages.at(-1);

describe('Dockerfile', () => {
  it('is multi-stage: build, production dependencies, runtime', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'deps', 'runtime']);
  });

  it('the runtime stage runs as the unprivileged node user and starts the connector', () => {
    const users = runtime?.lines.filter((l) => l.startsWith('USER ')) ?? [];
    expect(users.at(-1)).toBe('USER node');
    const command = ['node', '--enable-source-maps', ...CONNECTOR_NODE_FLAGS, 'dist/connector/main.mjs'];
    expect(runtime?.lines.at(-1)).toBe(`CMD [${command.map((part) => JSON.stringify(part)).join(', ')}]`);
  });

  it("npm start runs with the connector's Node flags too (it hosts the connector)", () => {
    const scripts = (JSON.parse(readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts.start).toBe(`node ${CONNECTOR_NODE_FLAGS.join(' ')} --import tsx infra/local/start.ts`);
  });

  it('declares /tmp a volume, so the Fargate mount there stays writable for the node user', () => {
    expect(runtime?.lines).toContain('VOLUME ["/tmp"]');
    const lines = runtime?.lines ?? [];
    expect(lines.indexOf('VOLUME ["/tmp"]')).toBeLessThan(lines.indexOf('USER node'));
  });

  it('installs production dependencies only, from the lockfile, for the runtime', () => {
    const deps = stages.find((s) => s.name === 'deps');
    expect(deps?.lines.some((l) => /npm ci\b.*--omit=dev/.test(l))).toBe(true);
    const copiedModules = runtime?.lines.filter((l) => l.includes('node_modules')) ?? [];
    expect(copiedModules).toEqual(['COPY --from=deps /app/node_modules ./node_modules']);
    expect(runtime?.lines.some((l) => /^RUN .*npm (ci|install)/.test(l))).toBe(false);
  });

  it('every file the build copies from the context is in the .dockerignore allow-list', () => {
    const allowed = dockerignore
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    expect(dockerignore.split('\n').find((l) => l && !l.startsWith('#'))).toBe('*');
    const copied = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from=')).flatMap((l) => l.split(/\s+/).slice(1, -1));
    expect(copied.length).toBeGreaterThan(3);
    for (const source of copied) {
      expect(allowed).toContain(source);
      expect(existsSync(path.join(repositoryRoot, source))).toBe(true);
    }
  });

  describe("the build stage's esbuild command", () => {
    const workdir = mkdtempSync(path.join(tmpdir(), 'wa-gateway-image-'));
    let metafile: { outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[]; entryPoint?: string }> };
    afterAll(() => rmSync(workdir, { recursive: true, force: true }));

    beforeAll(async () => {
      const esbuildLine = stages.find((s) => s.name === 'build')?.lines.find((l) => l.includes('esbuild'));
      const args = (esbuildLine ?? '').replace(/^RUN node node_modules\/esbuild\/bin\/esbuild /, '').split(/\s+/);
      expect(args).toContain('--packages=external');
      const outdir = path.join(workdir, 'dist');
      const metafilePath = path.join(workdir, 'meta.json');
      await promisify(execFile)(
        path.join(repositoryRoot, 'node_modules/.bin/esbuild'),
        [...args.map((a) => (a === '--outdir=dist' ? `--outdir=${outdir}` : a)), `--metafile=${metafilePath}`, '--log-level=error'],
        { cwd: repositoryRoot },
      );
      metafile = JSON.parse(readFileSync(metafilePath, 'utf8'));
      // Stands in for the image's /app/node_modules next to dist/.
      symlinkSync(path.join(repositoryRoot, 'node_modules'), path.join(workdir, 'node_modules'), 'dir');
    });

    it('the bundled connector loads every dependency on Node 22 and fails fast on bad configuration', async () => {
      const run = promisify(execFile)(process.execPath, [path.join(workdir, 'dist/connector/main.mjs')], {
        cwd: workdir,
        env: { PATH: process.env.PATH, COMMAND_QUEUE_NAME: 'not-fifo' },
        timeout: 60_000,
      });
      const failure = await run.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: 1, stdout: expect.stringContaining('COMMAND_QUEUE_NAME') });
    });

    it('produces the two entries the image runs; any other entry is a chunk loaded by a dynamic import', () => {
      const outputs = Object.entries(metafile.outputs);
      const entryOf = (suffix: string) => outputs.find(([file]) => file.endsWith(suffix))?.[1].entryPoint;
      expect(entryOf('dist/connector/main.mjs')).toBe('connector/main.ts');
      expect(entryOf('dist/functions/server.mjs')).toBe('functions/server.ts');
      const loadedOnDemand = new Set(outputs.flatMap(([, o]) => o.imports.filter((i) => i.kind === 'dynamic-import').map((i) => i.path)));
      const otherEntries = outputs.filter(([file, o]) => o.entryPoint && !/dist\/(connector\/main|functions\/server)\.mjs$/.test(file));
      expect(otherEntries.length).toBeGreaterThan(0);
      for (const [file] of otherEntries) expect(loadedOnDemand).toContain(file);
    });

    it('imports only production dependencies and Node built-ins at run time', () => {
      const manifest = z
        .object({ dependencies: z.record(z.string(), z.string()) })
        .parse(JSON.parse(readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8')));
      const packageOf = (specifier: string) =>
        specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? specifier);
      const external = Object.values(metafile.outputs)
        .flatMap((o) => o.imports)
        .filter((i) => i.external)
        .map((i) => i.path)
        .filter((p) => !p.startsWith('node:') && !builtinModules.includes(p));
      expect(external.length).toBeGreaterThan(0);
      for (const specifier of external) expect(Object.keys(manifest.dependencies)).toContain(packageOf(specifier));
    });
  });
});

describe('infra/docker-compose.yml', () => {
  const compose = parse(readFileSync(path.join(repositoryRoot, 'infra', 'docker-compose.yml'), 'utf8'), {
    merge: true,
  });
  const serviceSchema = z.object({
    image: z.string().optional(),
    build: z.object({ context: z.string(), dockerfile: z.string() }).optional(),
    command: z.array(z.string()).optional(),
    environment: z.record(z.string(), z.string()).optional(),
    ports: z.array(z.string()).optional(),
    depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
    healthcheck: z.object({ test: z.array(z.string()) }).optional(),
    read_only: z.boolean().optional(),
  });
  const services = z.object({ services: z.record(z.string(), serviceSchema) }).parse(compose).services;
  const gatewayServices = ['api', 'connector'] as const;

  it('runs LocalStack (DynamoDB, SQS), MinIO, the API and the connector', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'connector', 'localstack', 'minio']);
    expect(services.localstack?.environment?.SERVICES?.split(',').sort()).toEqual(['dynamodb', 'sqs']);
    expect(services.minio?.command?.slice(0, 2)).toEqual(['server', '/data']);
  });

  it.each(gatewayServices)('%s: built from the root Dockerfile, waits for healthy emulators', (name) => {
    const service = services[name];
    expect(service?.build).toEqual({ context: '..', dockerfile: 'Dockerfile' });
    expect(existsSync(path.join(repositoryRoot, 'infra', service?.build?.context ?? '', 'Dockerfile'))).toBe(true);
    expect(service?.depends_on?.localstack?.condition).toBe('service_healthy');
    expect(service?.depends_on?.minio?.condition).toBe('service_healthy');
  });

  it.each(gatewayServices)('%s: every variable the gateway needs, pointing at the emulators, valid for core/config', (name) => {
    const environment = services[name]?.environment ?? {};
    expect(environment).toMatchObject({
      AWS_ENDPOINT_URL_DYNAMODB: 'http://localstack:4566',
      AWS_ENDPOINT_URL_SQS: 'http://localstack:4566',
      AWS_ENDPOINT_URL_S3: 'http://minio:9000',
      CREATE_RESOURCES: 'true',
    });
    for (const key of [
      'AWS_REGION',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'TABLE_NAME',
      'MEDIA_BUCKET',
      'COMMAND_QUEUE_NAME',
      'COMMAND_DLQ_NAME',
      'WEBHOOK_QUEUE_NAME',
      'WEBHOOK_DLQ_NAME',
    ]) {
      expect(environment[key], key).toMatch(/\S/);
    }
    // MinIO only accepts its root credentials.
    expect(environment.AWS_ACCESS_KEY_ID).toBe(services.minio?.environment?.MINIO_ROOT_USER);
    expect(environment.AWS_SECRET_ACCESS_KEY).toBe(services.minio?.environment?.MINIO_ROOT_PASSWORD);
    // Compose substitutes ${VAR:-default}; the defaults must satisfy the config schema.
    const substituted = Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
    expect(() => loadConfig(substituted)).not.toThrow();
  });

  it('api: Node server on 0.0.0.0:3000, published on 127.0.0.1 only, health-checked on /ping', () => {
    const api = services.api;
    expect(api?.command).toContain('dist/functions/server.mjs');
    expect(api?.environment).toMatchObject({ HOST: '0.0.0.0', PORT: '3000' });
    expect(api?.ports).toEqual(['127.0.0.1:3000:3000']);
    expect(api?.healthcheck?.test.join(' ')).toContain('/ping');
  });

  it('connector: no published port, read-only root as on Fargate, starts after the API made the resources', () => {
    const connector = services.connector;
    expect(connector?.ports).toBeUndefined();
    expect(connector?.command).toBeUndefined();
    expect(connector?.read_only).toBe(true);
    expect(connector?.depends_on?.api?.condition).toBe('service_healthy');
  });
});
