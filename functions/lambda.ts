import { handle } from 'hono/aws-lambda';
import { createClients } from '../core/aws.js';
import { loadConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { adminKeyFromSecret } from './http/admin-key-secret.js';
import { createApp } from './app.js';

// Built once per container, reused by every invocation.
const loaded = loadConfig();
logger.level = loaded.LOG_LEVEL;
const config = loaded.API_KEY_SECRET_ARN ? { ...loaded, API_KEY: await adminKeyFromSecret(loaded.API_KEY_SECRET_ARN) } : loaded;
export const handler = handle(createApp({ config, clients: createClients(config), logger }));
