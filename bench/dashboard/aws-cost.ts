/**
 * What the console's polling costs on AWS, at us-east-1 list prices (on-demand, no free tier),
 * with the default stack of docs/deploy-aws.md: the API as a Lambda function (arm64, 512 MB)
 * behind an HTTP API. Each request the page sends is one HTTP API request, one Lambda
 * invocation with its duration, and the DynamoDB reads of its route.
 */
export const PRICES = {
  /** HTTP API, per request (the first 300 million a month). */
  httpApiRequest: 1.0 / 1e6,
  /** Lambda, per invocation. */
  lambdaRequest: 0.2 / 1e6,
  /** Lambda on arm64, per GB-second. */
  lambdaGbSecond: 0.0000133334,
  /** DynamoDB on-demand, per read request unit (4 KB strongly consistent, 8 KB eventually). */
  dynamoReadUnit: 0.125 / 1e6,
  /** Data transfer out to the internet, per GB (beyond the free 100 GB a month). */
  transferOutGb: 0.09,
};

/** The function's memory (infra/aws) and the billed time of a read route, warm: an assumption. */
const LAMBDA_GB = 0.5;
const LAMBDA_MS_PER_READ = 20;
export const HOURS_PER_MONTH = 730;

/**
 * Read request units of a route that answered `bytes` of JSON: one per 4 KB of what it read,
 * counted as strongly consistent reads (an upper bound: a Query of the index or an eventually
 * consistent read costs half), the answer's size standing for the items'.
 */
export function readUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 4096));
}

/** USD of one request of a read route whose answers average `readUnitsPerRequest`. */
export function costPerRequest(readUnitsPerRequest: number): number {
  return (
    PRICES.httpApiRequest +
    PRICES.lambdaRequest +
    LAMBDA_GB * (LAMBDA_MS_PER_READ / 1000) * PRICES.lambdaGbSecond +
    readUnitsPerRequest * PRICES.dynamoReadUnit
  );
}

export const ASSUMPTION =
  `each request = 1 HTTP API request ($1.00/M) + 1 Lambda invocation ($0.20/M) + ${LAMBDA_MS_PER_READ} ms at ${LAMBDA_GB * 1024} MB arm64 ` +
  `($${(((LAMBDA_GB * LAMBDA_MS_PER_READ) / 1000) * PRICES.lambdaGbSecond * 1e6).toFixed(3)}/M, assumed) + its DynamoDB read units at $0.125/M ` +
  '(1 per 4 KB of answer, counted as strongly consistent); us-east-1 list prices, no free tier; a month = 730 hours';
