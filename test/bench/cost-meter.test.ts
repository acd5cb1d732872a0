import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
type Units = Record<string, { writeTable: number; writeIndex: number; read: number; writes: number }>;
type Steps = Record<string, { requests: Record<string, number>; units: Units }>;

describe("bench:cost's DynamoDB meter", () => {
  it('books write units as DynamoDB bills them: per KB of the larger image, index copies included (a moved key twice), failed conditions too', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/support/cost-meter-child.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    const steps = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Steps;
    const msg = (name: string) => steps[name]?.units['MSG account'];
    expect(msg('put with index keys, 1.5 KB')).toEqual({ writeTable: 2, writeIndex: 2, read: 0, writes: 1 });
    // A moved index key: the old entry deleted and the new one written.
    expect(msg('update moving the index key')).toMatchObject({ writeTable: 4, writeIndex: 6, writes: 2 });
    expect(msg('update keeping the index key')).toMatchObject({ writeTable: 6, writeIndex: 8, writes: 3 });
    expect(msg('a failed condition')).toMatchObject({ writeTable: 8, writeIndex: 8, writes: 4 });
    const batch = steps['a batch of two small items'];
    expect(batch?.units['SHARDS fixed']).toEqual({ writeTable: 2, writeIndex: 0, read: 0, writes: 2 });
    expect(batch?.requests['BatchWriteItem fixed']).toBe(1);
    expect(batch?.requests['PutItem fixed']).toBeUndefined();
    const query = steps['a query of the index'];
    expect(query?.requests['Query account']).toBe(1);
    expect(query?.units['MSGS (read) account']?.read).toBe(0.5);
    // A read that finds nothing is billed as one 4 KB read all the same.
    expect(steps['an empty query']?.units['ACCOUNT (read) account']?.read).toBe(0.5);
  });
});
