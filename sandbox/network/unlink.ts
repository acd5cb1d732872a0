import type { Network } from './network.js';
import type { Account } from './model.js';

/** Removes a companion from its account: forget its keys and queue, tell the devices that care. */
export function unlinkDevice(network: Network, account: Account, device: number): boolean {
  if (!network.accounts.unlinkDevice(account, device)) return false;
  network.notifyDevicesChanged(account, device);
  return true;
}
