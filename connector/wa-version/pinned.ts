import type { WaVersion } from '../../core/wa-version.js';

/**
 * The version Baileys 7.0.0-rc14 announces when given none (its `DEFAULT_CONNECTION_CONFIG`):
 * the last fallback. Written out rather than read from Baileys because a connector resolves its
 * version before it loads Baileys (an empty connector never does); a test checks that the two
 * agree, so upgrading Baileys updates it.
 */
export const PINNED_WA_VERSION: WaVersion = [2, 3000, 1043857760];
