import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { GatewayClient } from '../client/index.js';

/** What the key the person signed in with reaches (`GET /me`). */
export interface Caller {
  role: 'admin' | 'account' | 'open';
  accountId?: string;
}

export interface Session {
  api: GatewayClient;
  caller: Caller;
  /** Present when a key is in use: forgets it and asks again. */
  signOut?: () => void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}

/** Admin keys, and everyone when keys are off, manage every account, webhook and key. */
export const managesEverything = (caller: Caller) => caller.role !== 'account';
