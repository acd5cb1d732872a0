import type { AwsClients } from '../../core/aws.js';
import type { Config } from '../../core/config.js';
import { startBenchApi } from './bench-api.js';
import { inBatches } from './measure.js';

export const GROUPS_PER_ACCOUNT = 3;
const CONCURRENCY = 8;

interface GroupsInput {
  config: Config;
  clients: AwsClients;
  /** The phone number of account `index` (its id is `bench<index>`). */
  phoneOf: (index: number) => string;
  /** Contact phones (they already exchanged messages with every account). */
  contacts: string[];
  /** Accounts `from` .. `to - 1` get their groups (at least 3 of them). */
  from: number;
  to: number;
}

const jid = (phone: string) => `${phone}@s.whatsapp.net`;

interface Joined {
  groups: number;
  /** Creations and sends the API did not answer with a success (the first error is kept). */
  failed: number;
  firstError?: string;
  seconds: number;
}

/** Answers the groups created and the seconds it took. */
export async function joinGroups(input: GroupsInput): Promise<Joined> {
  const count = input.to - input.from;
  if (count < GROUPS_PER_ACCOUNT) return { groups: 0, failed: 0, seconds: 0 };
  const api = await startBenchApi(input.config, input.clients);
  const call = api.post;
  const started = performance.now();
  let groups = 0;
  let failed = 0;
  let firstError: string | undefined;
  const fail = (what: string, answer: { status: number; json: unknown }) => {
    failed += 1;
    firstError ??= `${what}: ${answer.status} ${JSON.stringify(answer.json)}`;
  };
  try {
    const creators = Array.from({ length: count }, (_, k) => k);
    await inBatches(creators, CONCURRENCY, async (k) => {
      const index = input.from + k;
      const others = [1, 2].map((step) => input.from + ((k + step) % count));
      const contacts = [input.contacts[k % input.contacts.length]!, input.contacts[(k + 1) % input.contacts.length]!];
      const created = await call(`/accounts/bench${index}/groups`, {
        subject: `bench group ${index}`,
        participants: [...others.map((i) => jid(input.phoneOf(i))), ...contacts.map(jid)],
      });
      if (!created.ok) return fail(`group of bench${index}`, created);
      groups += 1;
      const groupId = (created.json.group as { groupId: string }).groupId;
      const sent = await call(`/accounts/bench${index}/message/send`, { to: groupId, message: `group hello ${index}` });
      if (!sent.ok) fail(`send to the group of bench${index}`, sent);
    });
  } finally {
    await api.close();
  }
  return { groups, failed, ...(firstError ? { firstError } : {}), seconds: (performance.now() - started) / 1000 };
}
