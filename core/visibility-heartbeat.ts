import type { Logger } from './logger.js';

/**
 * Keeps received SQS messages invisible while this process works on them: every `everyMs` the
 * visibility of every held message is set to `visibilitySeconds` again. The messages are
 * received with that short visibility too, so a message whose process died is visible again
 * within seconds, however long its work would have taken.
 *
 *   const heartbeat = startVisibilityHeartbeat({ extend: queues.changeCommandVisibilities, ... });
 *   heartbeat.hold(received.receiptHandle);
 *   await heartbeat.release(received.receiptHandle);   // before acking or setting a visibility
 */
export interface VisibilityHeartbeatOptions {
  /** Sets the visibility of these messages; answers the handles SQS refused (already gone). */
  extend(receiptHandles: string[], seconds: number): Promise<string[]>;
  visibilitySeconds: number;
  everyMs: number;
  logger: Logger;
}

export interface VisibilityHeartbeat {
  hold(receiptHandle: string): void;
  /**
   * Stops extending the message. Resolves once no extension carrying it is on its way, so that
   * a visibility the caller sets afterwards is not overwritten by a late extension.
   */
  release(receiptHandle: string): Promise<void>;
  /** How many messages are held. */
  readonly size: number;
  stop(): void;
}

export function startVisibilityHeartbeat(options: VisibilityHeartbeatOptions): VisibilityHeartbeat {
  const held = new Set<string>();
  let extending: Promise<void> | undefined;

  const beat = () => {
    if (held.size === 0 || extending) return;
    const handles = [...held];
    extending = options
      .extend(handles, options.visibilitySeconds)
      .then((refused) => {
        // A message disposed of meanwhile is refused harmlessly; one still held was lost (it became
        // visible and another receiver may have it now).
        const lost = refused.filter((handle) => held.delete(handle));
        if (lost.length > 0)
          options.logger.warn({ lost: lost.length }, 'visibility extension refused: message no longer held by this process');
      })
      .catch((error: unknown) => options.logger.error({ err: error }, 'extending message visibility failed'))
      .finally(() => {
        extending = undefined;
      });
  };
  const timer = setInterval(beat, options.everyMs);
  // The heartbeat alone must not keep a process alive.
  timer.unref();

  return {
    hold(receiptHandle) {
      held.add(receiptHandle);
    },
    async release(receiptHandle) {
      held.delete(receiptHandle);
      await extending;
    },
    get size() {
      return held.size;
    },
    stop() {
      clearInterval(timer);
      held.clear();
    },
  };
}
