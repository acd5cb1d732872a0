import { z } from 'zod';

/**
 * An account's settings (docs/sending.md, docs/api.md): how its sends are paced, the
 * proxy its socket goes through, what happens to calls and group traffic, which history it
 * imports. Three forms: the PATCH body (any subset, every field checked, unknown fields refused,
 * each message naming the field), the whole settings as stored and answered, and the stored
 * item read back (every absent field takes its default, so a field added later needs no
 * migration of the accounts written before it).
 */

/** The bounds of section 7's table, named once for the checks and the docs. */
const SETTINGS_BOUNDS = {
  rate: { min: 1, max: 100_000 },
  newChatsPerDay: { min: 0, max: 100_000 },
  gapMs: { min: 0, max: 600_000 },
  queueLimit: { min: 1, max: 100_000 },
  callRejectMessage: { max: 1_000 },
} as const;

const HISTORY_MODES = ['none', 'recent', 'full'] as const;

/** The defaults of section 7's table, besides `sendPolicy.enabled` (SEND_PACING_DEFAULT decides it). */
const DEFAULTS = {
  perMinute: 20,
  perHour: 300,
  perDay: 1_500,
  newChatsPerDay: 50,
  gapMs: { min: 2_000, max: 6_000 },
  typing: true,
  warmup: true,
  queueLimit: 1_000,
  rejectCalls: false,
  ignoreGroups: false,
  history: 'recent',
} as const;

/** A strict object whose failures name the field: `unknown setting: <path>.<key>`, `<path> must be an object`. */
function strictSettingsObject<T extends z.ZodRawShape>(path: string, shape: T) {
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown setting: ${path ? `${path}.` : ''}${issue.keys[0]}`
        : `${path || 'settings'} must be an object`,
  });
}

const integer = (path: string, { min, max }: { min: number; max: number }) => {
  const error = `${path} must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
};
const flag = (path: string) => z.boolean({ error: `${path} must be true or false` });

const PROXY_SCHEMES = ['http:', 'https:', 'socks5:'];
const PROXY_URL_ERROR = 'proxy.url must be an http://, https:// or socks5:// URL (optional user:pass@, a host, an optional port)';

/**
 * What the URL itself must be: one of the three schemes, a host, nothing after the port. Where
 * the host points is checked by the API like a webhook target (core/net/proxy-target.ts).
 */
function isProxyUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (
    PROXY_SCHEMES.includes(url.protocol) && url.hostname !== '' && (url.pathname === '' || url.pathname === '/') && !url.search && !url.hash
  );
}

const proxyPatch = strictSettingsObject('proxy', {
  url: z.string({ error: PROXY_URL_ERROR }).max(2_048, { error: PROXY_URL_ERROR }).refine(isProxyUrl, { error: PROXY_URL_ERROR }),
});

const gapPatch = strictSettingsObject('sendPolicy.gapMs', {
  min: integer('sendPolicy.gapMs.min', SETTINGS_BOUNDS.gapMs).optional(),
  max: integer('sendPolicy.gapMs.max', SETTINGS_BOUNDS.gapMs).optional(),
});

const sendPolicyPatch = strictSettingsObject('sendPolicy', {
  enabled: flag('sendPolicy.enabled').optional(),
  perMinute: integer('sendPolicy.perMinute', SETTINGS_BOUNDS.rate).optional(),
  perHour: integer('sendPolicy.perHour', SETTINGS_BOUNDS.rate).optional(),
  perDay: integer('sendPolicy.perDay', SETTINGS_BOUNDS.rate).optional(),
  newChatsPerDay: integer('sendPolicy.newChatsPerDay', SETTINGS_BOUNDS.newChatsPerDay).optional(),
  gapMs: gapPatch.optional(),
  typing: flag('sendPolicy.typing').optional(),
  warmup: flag('sendPolicy.warmup').optional(),
  queueLimit: integer('sendPolicy.queueLimit', SETTINGS_BOUNDS.queueLimit).optional(),
});

const CALL_REJECT_MESSAGE_ERROR = `callRejectMessage must be a text of 1 to ${SETTINGS_BOUNDS.callRejectMessage.max} characters, or null to remove it`;

/**
 * A PATCH body (and `settings` of POST /accounts): any subset; nested objects merge field by
 * field. `proxy: null` removes the proxy, `callRejectMessage: null` the message.
 */
export const settingsPatchSchema = strictSettingsObject('', {
  sendPolicy: sendPolicyPatch.optional(),
  proxy: proxyPatch.nullable().optional(),
  rejectCalls: flag('rejectCalls').optional(),
  callRejectMessage: z
    .string({ error: CALL_REJECT_MESSAGE_ERROR })
    .min(1, { error: CALL_REJECT_MESSAGE_ERROR })
    .max(SETTINGS_BOUNDS.callRejectMessage.max, { error: CALL_REJECT_MESSAGE_ERROR })
    .nullable()
    .optional(),
  ignoreGroups: flag('ignoreGroups').optional(),
  history: z.enum(HISTORY_MODES, { error: 'history must be none, recent or full' }).optional(),
});
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

/** The whole settings of an account, as stored (the proxy password included) and, masked, answered. */
export const accountSettingsSchema = z.object({
  sendPolicy: z.object({
    enabled: z.boolean(),
    perMinute: z.number().int(),
    perHour: z.number().int(),
    perDay: z.number().int(),
    newChatsPerDay: z.number().int(),
    gapMs: z.object({ min: z.number().int(), max: z.number().int() }),
    typing: z.boolean(),
    warmup: z.boolean(),
    queueLimit: z.number().int(),
  }),
  proxy: z.object({ url: z.string() }).nullable(),
  rejectCalls: z.boolean(),
  callRejectMessage: z.string().optional(),
  ignoreGroups: z.boolean(),
  history: z.enum(HISTORY_MODES),
});
export type AccountSettings = z.infer<typeof accountSettingsSchema>;

/** The settings of a new account: section 7's defaults, `sendPolicy.enabled` as the deployment says. */
export function defaultSettings(pacing: boolean): AccountSettings {
  const { rejectCalls, ignoreGroups, history, gapMs, ...policy } = DEFAULTS;
  return { sendPolicy: { enabled: pacing, ...policy, gapMs: { ...gapMs } }, proxy: null, rejectCalls, ignoreGroups, history };
}

/**
 * `patch` applied to `current`, field by field at every depth. Checks what no single field can:
 * the gap's `min` above its `max` (either may come from `current`). The answer is a new object.
 */
export function mergeSettings(current: AccountSettings, patch: SettingsPatch): AccountSettings | { problem: string } {
  const { sendPolicy, proxy, callRejectMessage, ...flat } = patch;
  const { gapMs, ...policy } = sendPolicy ?? {};
  const merged: AccountSettings = {
    ...current,
    ...definedOnly(flat),
    sendPolicy: { ...current.sendPolicy, ...definedOnly(policy), gapMs: { ...current.sendPolicy.gapMs, ...definedOnly(gapMs ?? {}) } },
    proxy: proxy === undefined ? current.proxy : proxy === null ? null : { url: keepMaskedPassword(proxy.url, current.proxy?.url) },
  };
  if (callRejectMessage === null) delete merged.callRejectMessage;
  else if (callRejectMessage !== undefined) merged.callRejectMessage = callRejectMessage;
  if (merged.sendPolicy.gapMs.min > merged.sendPolicy.gapMs.max) {
    return { problem: 'sendPolicy.gapMs.min must not be above sendPolicy.gapMs.max' };
  }
  return merged;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The password an answer shows instead of the proxy's. */
const MASKED_PASSWORD = '***';

/**
 * A URL cut around its password: `head` up to the `:` after the user, `tail` from the `@` on.
 * The authority ends at the first `/`, `?`, `#` or `\`, and the user information at its last
 * `@`, as WHATWG URL parsing reads it (a raw `@` in a password is the password's).
 */
function aroundPassword(url: string): { head: string; password: string; tail: string } | undefined {
  const scheme = url.indexOf('://');
  if (scheme < 0) return undefined;
  const from = scheme + 3;
  const rest = url.slice(from);
  const end = rest.search(/[/?#\\]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf('@');
  const colon = authority.indexOf(':');
  if (at < 0 || colon < 0 || colon > at) return undefined;
  return { head: url.slice(0, from + colon + 1), password: authority.slice(colon + 1, at), tail: url.slice(from + at) };
}

/** The proxy URL as answered: exactly as given, with only its password replaced by `***`. */
export function maskProxyUrl(url: string): string {
  const parts = aroundPassword(url);
  return parts?.password ? `${parts.head}${MASKED_PASSWORD}${parts.tail}` : url;
}

/**
 * A PATCH that sends back the URL it was answered (`user:***@host`) keeps the stored password,
 * when the rest of the URL is the same: a client (the console) can send the settings it read
 * without knowing the password.
 */
function keepMaskedPassword(url: string, stored: string | undefined): string {
  if (aroundPassword(url)?.password !== MASKED_PASSWORD || stored === undefined) return url;
  return maskProxyUrl(stored) === url ? stored : url;
}

/** The settings as answered: the proxy's password masked. */
export function settingsView(settings: AccountSettings): AccountSettings {
  return settings.proxy ? { ...settings, proxy: { url: maskProxyUrl(settings.proxy.url) } } : settings;
}

/**
 * The settings of a stored account item: every field absent from it takes its default (an
 * account created before settings existed has none; `sendPolicy.enabled` then follows
 * SEND_PACING_DEFAULT, like a new account's). A stored field that no longer parses falls back
 * to its default too, rather than making the account unreadable.
 */
export function storedSettingsOf(stored: unknown, pacing: boolean): AccountSettings {
  const defaults = defaultSettings(pacing);
  if (!stored || typeof stored !== 'object') return defaults;
  const merged = mergeSettings(defaults, lenientPatch(stored as Record<string, unknown>));
  return 'problem' in merged ? defaults : merged;
}

/** The stored item read as a patch, dropping whatever does not parse (field by field). */
function lenientPatch(stored: Record<string, unknown>): SettingsPatch {
  const patch: Record<string, unknown> = {};
  const shape = settingsPatchSchema.shape;
  for (const key of Object.keys(shape) as (keyof typeof shape)[]) {
    if (!(key in stored)) continue;
    if (key === 'sendPolicy') {
      const policy = stored.sendPolicy;
      if (!policy || typeof policy !== 'object') continue;
      const fields: Record<string, unknown> = {};
      for (const [name, field] of Object.entries(sendPolicyPatch.shape)) {
        const value = (policy as Record<string, unknown>)[name];
        const parsed = field.safeParse(value);
        if (parsed.success && parsed.data !== undefined) fields[name] = parsed.data;
      }
      patch.sendPolicy = fields;
      continue;
    }
    const parsed = shape[key].safeParse(stored[key]);
    if (parsed.success && parsed.data !== undefined) patch[key] = parsed.data;
  }
  return patch as SettingsPatch;
}
