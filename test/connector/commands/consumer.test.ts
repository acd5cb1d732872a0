import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { newCommandId } from '../../../core/ids.js';
import { MAX_RECEIVE_COUNT } from '../../../core/resources.js';
import type { Command } from '../../../core/schemas/command.js';
import { startCommandConsumer } from '../../../connector/commands/consumer.js';
import { done, notOurs, retryLater } from '../../../connector/commands/outcome.js';
import { handlersFrom } from '../../support/command-handlers.js';
import { type LogLine, parseLogLine } from '../../support/log-sink.js';
import { queueDepth } from '../../support/queue-depth.js';
import { simulatedDelay, waitFor } from '../../support/wait.js';
import { silentLogger, useTestStack } from '../../support/test-stack.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

describe('command consumer', { timeout: 120_000 }, () => {
  const t = useTestStack();

  /** No command left in the queue, visible or in flight. */
  const commandQueueEmpty = async () => (await queueDepth(t.stack.clients.sqs, await t.queues.commandQueueUrl())) === 0;

  it('runs the commands of one account in queue order', async () => {
    const seen: string[] = [];
    const consumer = startCommandConsumer({
      queues: t.queues,
      logger: silentLogger,
      waitSeconds: 1,
      handlers: handlersFrom(async (command) => {
        seen.push(command.type === 'send_text' ? command.payload.text : command.type);
        return done('ok');
      }),
    });
    try {
      for (const text of ['one', 'two', 'three']) {
        await t.queues.sendCommand({
          type: 'send_text',
          accountId: 'ordered',
          commandId: newCommandId(),
          payload: { messageId: newCommandId().replaceAll('-', ''), to: '15550000001@s.whatsapp.net', text },
        });
      }
      await waitFor('three commands', () => seen.length >= 3);
      expect(seen).toEqual(['one', 'two', 'three']);
    } finally {
      await consumer.stop();
    }
  });

  it('commands of one account never overlap, even with several batches in flight', async () => {
    const running = new Set<string>();
    const order: Record<string, string[]> = {};
    let overlaps = 0;
    const consumer = startCommandConsumer({
      queues: t.queues,
      logger: silentLogger,
      waitSeconds: 1,
      handlers: handlersFrom(async (command) => {
        if (running.has(command.accountId)) overlaps += 1;
        running.add(command.accountId);
        // A command that takes a while: time for a second one of its account to start meanwhile, were the consumer to allow it.
        await simulatedDelay(30);
        (order[command.accountId] ??= []).push(command.type === 'send_text' ? command.payload.text : command.type);
        running.delete(command.accountId);
        return done('ok');
      }),
    });
    try {
      const accounts = ['fa', 'fb', 'fc', 'fd'];
      for (let i = 0; i < 6; i++) {
        for (const accountId of accounts) {
          await t.queues.sendCommand({
            type: 'send_text',
            accountId,
            commandId: newCommandId(),
            payload: { messageId: newCommandId().replaceAll('-', ''), to: '15550000001@s.whatsapp.net', text: String(i) },
          });
        }
      }
      await waitFor('all commands', () => accounts.every((a) => order[a]?.length === 6));
      expect(overlaps).toBe(0);
      for (const accountId of accounts) expect(order[accountId]).toEqual(['0', '1', '2', '3', '4', '5']);
    } finally {
      await consumer.stop();
    }
  });

  it('a command for an account another connector runs is handed back, and re-queued before the dead-letter limit', async () => {
    const deliveries: string[] = [];
    const consumer = startCommandConsumer({
      queues: t.queues,
      logger: silentLogger,
      waitSeconds: 1,
      handlers: handlersFrom(async (command) => {
        deliveries.push(command.commandId);
        // The "owner" only picks it up once it has been re-queued.
        return command.commandId.includes('.') ? done('ran') : notOurs();
      }),
    });
    try {
      const commandId = newCommandId();
      await t.queues.sendCommand({ type: 'connect', accountId: 'elsewhere', commandId, payload: {} });
      await waitFor('the re-queued copy to run', () => deliveries.some((id) => id.includes('.')), { timeoutMs: 60_000 });
      expect(deliveries.filter((id) => id === commandId)).toHaveLength(MAX_RECEIVE_COUNT - 1);
      expect(deliveries.at(-1)).toBe(`${commandId}.${MAX_RECEIVE_COUNT - 1}`);
    } finally {
      await consumer.stop();
    }
  });

  it('a handler that throws leaves the command in the queue for a later try', async () => {
    let attempts = 0;
    const consumer = startCommandConsumer({
      queues: t.queues,
      logger: silentLogger,
      waitSeconds: 1,
      handlers: handlersFrom(async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('transient');
        return attempts === 2 ? retryLater(0, 'not yet') : done('ok');
      }),
    });
    try {
      await t.queues.sendCommand({ type: 'disconnect', accountId: 'flaky', commandId: newCommandId(), payload: {} });
      await waitFor('the third attempt', () => attempts >= 3, { timeoutMs: 60_000 });
      expect(attempts).toBe(3);
    } finally {
      await consumer.stop();
    }
  });

  const textOf = (command: Command) => (command.type === 'send_text' ? command.payload.text : command.type);
  const sendTexts = async (accountId: string, texts: string[]) => {
    for (const text of texts) {
      await t.queues.sendCommand({
        type: 'send_text',
        accountId,
        commandId: newCommandId(),
        payload: { messageId: newCommandId().replaceAll('-', ''), to: '15550000001@s.whatsapp.net', text },
      });
    }
  };

  it('a command still running when its consumer process stops is run by the next consumer', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/consumer-child.ts'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', ...t.stack.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines: LogLine[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(parseLogLine(line)));
    // 'close', not 'exit': the last lines of stdout may still be on their way at 'exit'.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const ranByNext: string[] = [];
    let next: ReturnType<typeof startCommandConsumer> | undefined;
    try {
      await waitFor('the child consumer to start', () => lines.some((l) => l.msg === 'consumer started'));
      const commandId = newCommandId();
      await t.queues.sendCommand({ type: 'disconnect', accountId: 'unfinished', commandId, payload: {} });
      await waitFor('the child to start the command', () => lines.some((l) => l.msg === 'command started' && l.commandId === commandId));

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(lines.map((l) => l.msg)).toContain('stopped');

      next = startCommandConsumer({
        queues: t.queues,
        logger: silentLogger,
        waitSeconds: 1,
        handlers: handlersFrom(async (command) => {
          ranByNext.push(command.commandId);
          return done('ok');
        }),
      });
      await waitFor('the next consumer to run the command', () => ranByNext.includes(commandId), { timeoutMs: 60_000 });
      expect(ranByNext).toEqual([commandId]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await next?.stop();
    }
  });

  it('a command running longer than its receive visibility is not handed to another consumer (heartbeat)', async () => {
    const runs: string[] = [];
    // Longer than the 10 s a held command is invisible for without its heartbeat.
    const handler = handlersFrom(async (command) => {
      runs.push(textOf(command));
      await simulatedDelay(14_000);
      return done('ok');
    });
    const consumers = [1, 2].map(() => startCommandConsumer({ queues: t.queues, logger: silentLogger, waitSeconds: 1, handlers: handler }));
    try {
      await sendTexts('slow', ['long send']);
      await waitFor('the command to start', () => runs.length >= 1);
      // Both consumers keep polling while it runs; it is done once the queue is empty again.
      await waitFor('the command to finish', commandQueueEmpty, { timeoutMs: 60_000, intervalMs: 500 });
      expect(runs).toEqual(['long send']);
    } finally {
      await Promise.all(consumers.map((consumer) => consumer.stop()));
    }
  });

  it('stop() ends its 20-s receive with a wake-up: no receive is left to hide the next command, and the wake-up runs as nothing', async () => {
    const ran: string[] = [];
    const handlers = handlersFrom(async (command) => {
      ran.push(command.commandId);
      return done('ok');
    });
    // The default wait: SQS's longest.
    let receives = 0;
    const counted: typeof t.queues = {
      ...t.queues,
      receiveCommands: (...args) => {
        receives += 1;
        return t.queues.receiveCommands(...args);
      },
    };
    const first = startCommandConsumer({ queues: counted, logger: silentLogger, handlers });
    await waitFor('the first receive to be out', () => receives >= 1);
    const stopStarted = performance.now();
    await first.stop();
    // Without the wake-up the stop waits for the receive out, up to its 20 s.
    expect(performance.now() - stopStarted).toBeLessThan(10_000);

    // An abandoned receive would take this command and hide it for the held visibility (10 s).
    const commandId = newCommandId();
    await t.queues.sendCommand({ type: 'disconnect', accountId: 'wokenup', commandId, payload: {} });
    const next = startCommandConsumer({ queues: t.queues, logger: silentLogger, waitSeconds: 1, handlers });
    try {
      await waitFor('the next consumer to run the command', () => ran.includes(commandId), { timeoutMs: 5_000 });
      await waitFor('the queue to be empty (the wake-up deleted unseen)', commandQueueEmpty, { timeoutMs: 10_000, intervalMs: 250 });
      expect(ran).toEqual([commandId]);
    } finally {
      await next.stop();
    }
  });
});
