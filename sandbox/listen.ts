import type { Server } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * Listens on 127.0.0.1:port and returns the bound port. With `anyIfTaken`, a port already in
 * use falls back to any free port (the CLI prefers the ports of its previous run).
 */
export async function listenLocal(server: Server, port: number, anyIfTaken = false): Promise<number> {
  try {
    return await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  } catch (err) {
    if (anyIfTaken && port !== 0 && (err as NodeJS.ErrnoException).code === 'EADDRINUSE') return listenLocal(server, 0);
    throw err;
  }
}
