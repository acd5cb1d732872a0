import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';

/**
 * Where a running `npm start` says it listens, in DATA_DIR/local-stack.json: local tools
 * (`npm run sandbox:link`) find the API and the sandbox there, whatever ports were free.
 */
const stackFileSchema = z.object({
  apiUrl: z.string().url(),
  /** Present when the stack runs the sandbox network. */
  sandboxControlUrl: z.string().url().optional(),
});

export type StackFile = z.infer<typeof stackFileSchema>;

const stackFilePath = (dataDir: string) => resolve(dataDir, 'local-stack.json');

export async function writeStackFile(dataDir: string, stack: StackFile): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  await writeFile(stackFilePath(dataDir), `${JSON.stringify(stack, null, 2)}\n`);
}

/** The file of the stack last started with this DATA_DIR, or undefined when there is none. */
export async function readStackFile(dataDir: string): Promise<StackFile | undefined> {
  let text: string;
  try {
    text = await readFile(stackFilePath(dataDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return stackFileSchema.parse(JSON.parse(text));
}
