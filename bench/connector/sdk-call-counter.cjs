// Preloaded into the connector child by bench:connector (`--require`): counts the AWS SDK
// requests the process sends, by command, and writes the running totals as JSON to
// SDK_CALL_COUNT_FILE twice a second, so the bench can read the requests of a window.
// A DocumentClient command (PutCommand) is one request, counted under its own name.
const { writeFileSync } = require('node:fs');
const { DynamoDBClient } = require('@aws-sdk/client-dynamodb');

// The SDK clients' common base class (Smithy's Client), whose send every request goes through.
const base = Object.getPrototypeOf(DynamoDBClient.prototype);
const counts = {};
const send = base.send;
base.send = function countedSend(command, ...rest) {
  const name = command.constructor.name;
  counts[name] = (counts[name] ?? 0) + 1;
  return send.call(this, command, ...rest);
};
const file = process.env.SDK_CALL_COUNT_FILE;
if (file) setInterval(() => writeFileSync(file, JSON.stringify(counts)), 500).unref();
