import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** The `requestContext` API Gateway (HTTP API, payload 2.0) gives a Lambda for `method rawPath`. */
export function lambdaRequestContext(method: string, rawPath: string): APIGatewayProxyEventV2['requestContext'] {
  return {
    accountId: '123456789012',
    apiId: 'api',
    domainName: 'api.example.com',
    domainPrefix: 'api',
    http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
    requestId: 'req',
    routeKey: '$default',
    stage: '$default',
    time: '01/Jan/2026:00:00:00 +0000',
    timeEpoch: 0,
  };
}
