import { getSmithyContext, toEndpointV1 } from '@smithy/core/transport';

/**
 * The AWS SDK's serialize and deserialize steps without a copy of the client's configuration per
 * request.
 *
 * The SDK's own middlewares (`@smithy/core` schema serde) hand the protocol
 * `{ ...config, ...context }`: a fresh copy of the client's 50-odd settings on every request, and
 * the settings object is in V8's dictionary mode, which makes that copy cost 15-20 µs, twice per
 * request (docs/benchmarks/history.md, "The SDK's serde without copies"). The protocol only reads
 * settings from that object, so these middlewares give it an object that inherits the settings
 * from the configuration and holds the request's context as its own properties: the same lookups,
 * no copy. The requests and the answers are the same (test/core/sdk-serde.test.ts compares them
 * with the SDK's own on the wire).
 *
 * An operation the fast path does not recognise (no schema, no schema protocol: an SDK that
 * changed its serde) goes through the SDK's own middleware, taken from the client before it is
 * replaced.
 */
export function useSerdeWithoutCopies(client: SdkClient): void {
  const config = client.config as SerdeConfig;
  const { serializerMiddleware: sdkSerialize, deserializerMiddleware: sdkDeserialize } = middlewaresOf(client, [
    'serializerMiddleware',
    'deserializerMiddleware',
  ]);
  const protocol = config.protocol;
  if (
    !sdkSerialize ||
    !sdkDeserialize ||
    typeof protocol?.serializeRequest !== 'function' ||
    typeof protocol.deserializeResponse !== 'function'
  ) {
    return;
  }
  const serialize: Middleware = (next, context) => {
    const sdkHandler = sdkSerialize(next, context);
    return async (args) => {
      const operation = operationOf(context);
      if (!operation) return sdkHandler(args);
      const endpointV2 = context.endpointV2;
      const endpoint = endpointV2 ? async () => toEndpointV1(endpointV2 as Parameters<typeof toEndpointV1>[0]) : config.endpoint;
      const request = await protocol.serializeRequest(operation, args.input, Object.assign(Object.create(config), context, { endpoint }));
      return next({ ...args, request });
    };
  };
  const deserialize: Middleware = (next, context) => {
    const sdkHandler = sdkDeserialize(next, context);
    return async (args) => {
      const operation = operationOf(context);
      if (!operation) return sdkHandler(args);
      const { response } = await next(args);
      try {
        return { response, output: await protocol.deserializeResponse(operation, Object.assign(Object.create(config), context), response) };
      } catch (error) {
        throw withResponse(error, response);
      }
    };
  };
  client.middlewareStack.add(
    serialize as never,
    { name: 'serializerMiddleware', step: 'serialize', tags: ['SERIALIZER'], override: true } as never,
  );
  client.middlewareStack.add(
    deserialize as never,
    { name: 'deserializerMiddleware', step: 'deserialize', tags: ['DESERIALIZER'], override: true } as never,
  );
}

/**
 * What callers read of what the SDK's deserializer adds to an error: the raw answer
 * (`$response`), and for an answer that did not parse `$metadata` with its status (a service
 * error carries its own). The SDK also appends a hint to a parse error's message; not repeated.
 */
function withResponse(error: unknown, response: unknown): unknown {
  if (!(error instanceof Error)) return error;
  Object.defineProperty(error, '$response', { value: response, enumerable: false, writable: false, configurable: false });
  if (!('$metadata' in error)) {
    const statusCode = (response as { statusCode?: unknown } | undefined)?.statusCode;
    Object.assign(error, { $metadata: { httpStatusCode: typeof statusCode === 'number' ? statusCode : undefined } });
  }
  return error;
}

/** The operation's schema as the SDK's middleware builds it from the command's context. */
function operationOf(context: MiddlewareContext): OperationSchema | undefined {
  const schema = (getSmithyContext(context) as { operationSchema?: unknown }).operationSchema;
  if (!Array.isArray(schema)) return undefined;
  const [, namespace, name, traits, input, output] = schema as unknown[];
  return { name, namespace, traits, input, output };
}

/** The middleware functions a client's stack holds under these names. */
function middlewaresOf<Name extends string>(client: SdkClient, names: Name[]): Partial<Record<Name, Middleware>> {
  const found: Partial<Record<Name, Middleware>> = {};
  const take = (middleware: Middleware, options?: { name?: string }) => {
    if (options?.name && (names as string[]).includes(options.name)) found[options.name as Name] = middleware;
  };
  client.middlewareStack.applyToStack({ add: take, addRelativeTo: take } as never);
  return found;
}

type MiddlewareContext = Record<string, unknown>;
type Handler = (args: { input: unknown; request?: unknown }) => Promise<{ response: unknown; output?: unknown }>;
type Middleware = (next: Handler, context: MiddlewareContext) => Handler;

interface OperationSchema {
  name: unknown;
  namespace: unknown;
  traits: unknown;
  input: unknown;
  output: unknown;
}

interface SerdeConfig {
  endpoint?: unknown;
  protocol?: {
    serializeRequest(operation: OperationSchema, input: unknown, context: object): Promise<unknown>;
    deserializeResponse(operation: OperationSchema, context: object, response: unknown): Promise<unknown>;
  };
}

/** The part of an SDK v3 client this needs. */
interface SdkClient {
  config: object;
  middlewareStack: {
    add(middleware: never, options: never): unknown;
    applyToStack(stack: never): unknown;
  };
}
