const MAX_DEPTH = 8;

/**
 * `value` with every byte array (Buffer, typed array, ArrayBuffer) replaced by its length:
 * Signal session records and Baileys' auth state hold their keys as buffers. Copy on write:
 * objects with no byte array inside come back as they are (a Date stays a Date), the others
 * as plain copies. Errors are kept (the logger's serializer reads them); cycles and values
 * deeper than MAX_DEPTH are cut.
 */
export function redactBinary(value: unknown): unknown {
  return redactWithin(value, 0, new Set());
}

/** The same for a log line's fields (pino's `formatters.log`). */
export function redactFields(fields: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(fields);
  const redacted = entries.map(([key, item]) => [key, redactWithin(item, 1, new Set([fields]))] as const);
  return redacted.some(([, item], i) => item !== entries[i]?.[1]) ? Object.fromEntries(redacted) : fields;
}

function redactWithin(value: unknown, depth: number, ancestors: Set<object>): unknown {
  if (value instanceof Uint8Array || ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    return `[${value.byteLength} bytes]`;
  }
  if (value === null || typeof value !== 'object' || value instanceof Error) return value;
  if (ancestors.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[…]';
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const items = value.map((item: unknown) => redactWithin(item, depth + 1, ancestors));
      return items.some((item, i) => item !== value[i]) ? items : value;
    }
    const entries = Object.entries(value);
    const redacted = entries.map(([key, item]) => [key, redactWithin(item, depth + 1, ancestors)] as const);
    return redacted.some(([, item], i) => item !== entries[i]?.[1]) ? Object.fromEntries(redacted) : value;
  } finally {
    ancestors.delete(value);
  }
}
