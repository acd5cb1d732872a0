import { initAuthCreds, type AuthenticationState, type SignalDataTypeMap } from '@whiskeysockets/baileys';

/**
 * Baileys auth state held in memory: survives reconnects (and sandbox restarts) for as long as
 * the test process keeps the object, and costs no disk I/O (benchmarks link hundreds).
 */
export interface MemoryAuthState extends AuthenticationState {
  /** Ids of the stored keys of one type (e.g. 'session'), for tests that tamper with them. */
  keyIds(type: keyof SignalDataTypeMap): string[];
}

export function memoryAuthState(): MemoryAuthState {
  const creds = initAuthCreds();
  const data = new Map<string, unknown>();
  return {
    creds,
    keyIds: (type) => [...data.keys()].filter((k) => k.startsWith(`${type}:`)).map((k) => k.slice(type.length + 1)),
    keys: {
      async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
        const out: { [id: string]: SignalDataTypeMap[T] } = {};
        for (const id of ids) {
          const value = data.get(`${type}:${id}`);
          if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
        }
        return out;
      },
      async set(update) {
        for (const [type, entries] of Object.entries(update)) {
          for (const [id, value] of Object.entries(entries ?? {})) {
            if (value === null || value === undefined) data.delete(`${type}:${id}`);
            else data.set(`${type}:${id}`, value);
          }
        }
      },
    },
  };
}
