import type { InboundPipelineDeps } from './inbound/pipeline.js';
import type { InboundHandlers } from './session/event-dispatcher.js';

/**
 * The inbound pipeline (connector/inbound/pipeline.ts), made on its first call: it imports
 * Baileys (status and poll-vote handling), which an empty connector does not load
 * (docs/benchmarks/history.md, Empty connector). Calls made while it loads wait for it in call order.
 */
export function lazyInboundPipeline(deps: InboundPipelineDeps): InboundHandlers {
  let pipeline: Promise<InboundHandlers> | undefined;
  const load = () => (pipeline ??= import('./inbound/pipeline.js').then(({ createInboundPipeline }) => createInboundPipeline(deps)));
  return {
    handleUpsert: async (...args) => (await load()).handleUpsert(...args),
    handleMessages: async (...args) => (await load()).handleMessages(...args),
    replayOutbox: async (...args) => (await load()).replayOutbox(...args),
    // A pipeline never made holds nothing for the account.
    accountLeft: async (...args) => {
      if (pipeline) await (await pipeline).accountLeft(...args);
    },
    handleStatus: async (...args) => (await load()).handleStatus(...args),
    handleGroupReceipts: async (...args) => (await load()).handleGroupReceipts(...args),
    resolveInterruptedSend: async (...args) => (await load()).resolveInterruptedSend(...args),
  };
}
