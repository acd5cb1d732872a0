/**
 * Group fan-out, a step of `bench:connector` (BENCH_GROUP=0 skips it). Account `bench0` creates
 * a group through the API with BENCH_GROUP_MEMBERS - 1 others (default 50 members in all): the
 * other linked bench accounts first (their connected devices receive and store every message),
 * then plain sandbox phones for the rest (device 0 only: the connector still encrypts for it,
 * the sandbox acknowledges it as WhatsApp's phones do). It then sends BENCH_GROUP_SENDS texts
 * to the group and as many to a one-to-one chat, alternating, one at a time, through
 * `POST /accounts/:id/message/send`, and times each from the request to its 200. The first send
 * of each kind is left out of the percentiles and printed on its own (the group's carries the
 * sender key to every member device). The sandbox's count of the sender's group metadata queries
 * during the sends shows whether the connector's cachedGroupMetadata spared them.
 */
import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import { findMessage } from '../../core/store/messages.js';
import type { Table } from '../../core/store/table.js';
import { startBenchApi } from './bench-api.js';
import type { SandboxControl } from '../../test/e2e/support/sandbox-control.js';
import { waitFor } from '../../test/support/wait.js';
import { percentile } from './measure.js';

const MEMBERS = Number(process.env.BENCH_GROUP_MEMBERS ?? 50);
const SENDS = Number(process.env.BENCH_GROUP_SENDS ?? 20);
const PHONE_BASE = 15556000000;

export interface GroupFanoutContext {
  config: Config;
  clients: AwsClients;
  table: Table;
  control: SandboxControl;
  /** Accounts `bench0` .. `bench<linked - 1>` are linked and connected. */
  linked: number;
  /** The phone number of account `index` (its id is `bench<index>`). */
  phoneOf: (index: number) => string;
}

const jid = (phone: string) => `${phone}@s.whatsapp.net`;

export async function measureGroupFanout(ctx: GroupFanoutContext): Promise<string[]> {
  const api = await startBenchApi(ctx.config, ctx.clients);
  const call = async (path: string, body: unknown) => {
    const { ok, status, json } = await api.post(path, body);
    if (!ok) throw new Error(`${path}: ${status} ${JSON.stringify(json)}`);
    return json;
  };
  try {
    const linkedMembers = Array.from({ length: Math.min(ctx.linked, MEMBERS) - 1 }, (_, i) => i + 1);
    const phoneMembers = Array.from({ length: MEMBERS - 1 - linkedMembers.length }, (_, i) => String(PHONE_BASE + i));
    for (const phone of phoneMembers) await ctx.control.createPhone(phone);
    const oneToOne = String(PHONE_BASE + MEMBERS);
    await ctx.control.createPhone(oneToOne);
    const created = await call('/accounts/bench0/groups', {
      subject: 'bench fan-out',
      participants: [...linkedMembers.map((i) => jid(ctx.phoneOf(i))), ...phoneMembers.map(jid)],
    });
    const groupId = (created.group as { groupId: string }).groupId;

    const timings = { group: [] as number[], direct: [] as number[] };
    const queriesBefore = await ctx.control.groupMetadataQueries(ctx.phoneOf(0));
    const groupMessageIds: string[] = [];
    for (let i = 0; i <= SENDS; i++) {
      for (const kind of ['group', 'direct'] as const) {
        const t0 = performance.now();
        const sent = await call('/accounts/bench0/message/send', {
          to: kind === 'group' ? groupId : jid(oneToOne),
          message: `fan-out ${i}`,
        });
        timings[kind].push(performance.now() - t0);
        if (kind === 'group') groupMessageIds.push(String(sent.messageId));
      }
    }
    const metadataQueries = (await ctx.control.groupMetadataQueries(ctx.phoneOf(0))) - queriesBefore;
    // Every linked member's device got every group message (its connector stored it).
    await waitFor(
      `${groupMessageIds.length} group messages stored by ${linkedMembers.length} members`,
      async () => {
        for (const index of linkedMembers) {
          for (const id of groupMessageIds) if (!(await findMessage(ctx.table, `bench${index}`, id))) return false;
        }
        return true;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );

    const row = (kind: 'group' | 'direct', label: string) => {
      const [first, ...rest] = timings[kind];
      const sorted = rest.sort((a, b) => a - b);
      return {
        p50: percentile(sorted, 50),
        text: `${label}: p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms over ${sorted.length} sends (first send ${first?.toFixed(0)} ms)`,
      };
    };
    const group = row(
      'group',
      `send to a group of ${MEMBERS} (${linkedMembers.length + 1} linked accounts, ${phoneMembers.length} phones; API request to 200)`,
    );
    const direct = row('direct', 'send one-to-one (API request to 200)');
    return [
      group.text,
      direct.text,
      `group / one-to-one send p50: ${(group.p50 / direct.p50).toFixed(2)}x (no goal yet)`,
      `group metadata queries by the sender over its ${timings.group.length} group sends: ${metadataQueries} (cachedGroupMetadata)`,
    ];
  } finally {
    await api.close();
  }
}
