import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, usesDefaultAwsEndpoints } from '../../core/config.js';

describe('loadConfig', () => {
  it('gives the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(3000);
    expect(config.DATA_DIR).toBe('./data');
    expect(config.COMMAND_QUEUE_NAME).toBe('wa-gateway-commands.fifo');
    expect(config.MAX_UPLOAD_BYTES).toBe(50 * 1024 * 1024);
    expect(config.CREATE_RESOURCES).toBe(false);
    expect(usesDefaultAwsEndpoints(config)).toBe(true);
  });

  it('treats an empty variable as unset and reads endpoint overrides', () => {
    const config = loadConfig({ WA_WS_URL: '', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000' });
    expect(config.WA_WS_URL).toBeUndefined();
    expect(usesDefaultAwsEndpoints(config)).toBe(false);
  });

  it('fails fast with a message naming the bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ WA_ROOT_PUBLIC_KEY: 'xyz' })).toThrow(/WA_ROOT_PUBLIC_KEY/);
  });
});
