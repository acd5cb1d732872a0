import type { Reaction } from './map-message.js';

/**
 * A sender has at most one reaction on a message, as in WhatsApp: a new emoji replaces their
 * previous one and an empty emoji removes it. Applying the same reaction twice changes nothing.
 */
export function applyReaction(current: readonly Reaction[] | undefined, reaction: Reaction): Reaction[] {
  const others = (current ?? []).filter((existing) => existing.from !== reaction.from);
  return reaction.emoji ? [...others, reaction] : others;
}
