import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * s3rver 3.7 keeps the parts of a multipart upload under `<bucket>/._S3rver_uploads/<uploadId>/`
 * until it is completed, and has no AbortMultipartUpload (405) nor ListMultipartUploads
 * (NotImplemented): an upload given up half way (a rejected 50 MB file) left its parts on disk
 * for good. These two operations, added in front of its own routes, make the embedded store
 * behave like S3 there.
 */
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  status: number;
  type: string;
  body: unknown;
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;

export interface S3rverInternals {
  middleware: unknown[];
  store: { rootDirectory: string };
}

const UPLOADS_DIR = '._S3rver_uploads';
/** Upload ids s3rver generates: hex. Anything else never names a directory of ours. */
const UPLOAD_ID = /^[0-9a-f]+$/i;

export function addMultipartAbortAndList(s3: S3rverInternals): void {
  const uploadsOf = (bucket: string) => join(s3.store.rootDirectory, bucket, UPLOADS_DIR);

  const handler: KoaMiddleware = async (ctx, next) => {
    const [bucket, ...keyParts] = ctx.path.split('/').filter((part) => part !== '');
    if (!bucket) return next();
    const uploadId = typeof ctx.query.uploadId === 'string' ? ctx.query.uploadId : undefined;

    if (ctx.method === 'DELETE' && keyParts.length > 0 && uploadId !== undefined) {
      if (!UPLOAD_ID.test(uploadId)) return next();
      await rm(join(uploadsOf(bucket), uploadId), { recursive: true, force: true });
      ctx.status = 204;
      return;
    }
    if (ctx.method === 'GET' && keyParts.length === 0 && 'uploads' in ctx.query) {
      ctx.type = 'application/xml';
      ctx.body = await listUploadsXml(bucket, uploadsOf(bucket));
      return;
    }
    return next();
  };
  s3.middleware.unshift(handler);
}

async function listUploadsXml(bucket: string, dir: string): Promise<string> {
  const ids = await readdir(dir).catch(() => [] as string[]);
  const uploads: string[] = [];
  for (const id of ids) {
    const key = await readFile(join(dir, id, 'key'), 'utf8').catch(() => undefined);
    if (key === undefined) continue;
    const initiated = (await stat(join(dir, id))).mtime.toISOString();
    uploads.push(`<Upload><Key>${escapeXml(key)}</Key><UploadId>${id}</UploadId><Initiated>${initiated}</Initiated></Upload>`);
  }
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Bucket>${escapeXml(bucket)}</Bucket><MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated>` +
    uploads.join('') +
    '</ListMultipartUploadsResult>'
  );
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
