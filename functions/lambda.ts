import { handle } from 'hono/aws-lambda';
import { createClients } from '../core/aws.js';
import { loadConfig } from '../core/config.js';
import { logger } from '../core/logger.js';
import { createApp } from './app.js';

// Built once per container, reused by every invocation.
const config = loadConfig();
logger.level = config.LOG_LEVEL;
export const handler = handle(createApp({ config, clients: createClients(config), logger }));
