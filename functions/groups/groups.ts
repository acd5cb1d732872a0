import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import {
  GROUP_ACTIONS,
  GROUP_DESCRIPTION_MAX,
  GROUP_SUBJECT_MAX,
  groupDetailSchema,
  groupJidSchema,
  groupSummarySchema,
  participantResultSchema,
  participantsSchema,
  type GroupOperation,
} from '../../core/schemas/group.js';
import { runGroupOperation } from './group-wait.js';
import { newRouter } from '../http/router.js';
import type { AppEnv, Services } from '../http/services.js';
import { errorResponse, jsonContent as json, messageResponse } from '../http/responses.js';
import { accountIdParam, requiredString } from '../http/validation.js';

const subjectField = z
  .string({ error: 'subject must be a string' })
  .refine((value) => value.trim().length > 0, { error: 'subject must not be empty' })
  .refine((value) => [...value].length <= GROUP_SUBJECT_MAX, { error: `subject must be at most ${GROUP_SUBJECT_MAX} characters` });

// Missing fields are reported before malformed ones, as on the send routes.
const createBody = z
  .object({
    subject: requiredString('subject and participants are required'),
    participants: z.unknown().refine((value) => value !== undefined, { error: 'subject and participants are required' }),
  })
  .pipe(z.object({ subject: subjectField, participants: participantsSchema }));

const participantsBody = z
  .object({
    action: requiredString('action and participants are required'),
    participants: z.unknown().refine((value) => value !== undefined, { error: 'action and participants are required' }),
  })
  .pipe(
    z.object({
      action: z.enum(GROUP_ACTIONS, { error: `action must be one of ${GROUP_ACTIONS.join(', ')}` }),
      participants: participantsSchema,
    }),
  );

const updateBody = z
  .object({
    subject: subjectField.optional(),
    description: z
      .string({ error: 'description must be a string' })
      .refine((value) => [...value].length <= GROUP_DESCRIPTION_MAX, {
        error: `description must be at most ${GROUP_DESCRIPTION_MAX} characters`,
      })
      .optional()
      .openapi({ description: 'An empty string removes the description' }),
  })
  .refine((body) => body.subject !== undefined || body.description !== undefined, { error: 'subject or description is required' });

const accountParams = z.object({ accountId: accountIdParam });
const groupParams = z.object({
  accountId: accountIdParam,
  groupId: groupJidSchema('groupId').openapi({
    param: { name: 'groupId', in: 'path' },
    example: '120363012345678901@g.us',
    type: 'string',
  }),
});

const errors = {
  400: errorResponse('Missing or invalid field'),
  403: errorResponse('The account is not a member of the group, or not an admin of it'),
  404: errorResponse('Account not found / Group not found'),
  500: errorResponse('internal_error: not connected, or no answer from WhatsApp in time'),
};

const list = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/groups',
  summary: 'Groups the account is a member of, newest first',
  request: { params: accountParams },
  responses: {
    200: { description: 'Groups', content: json(z.object({ ok: z.literal(true), groups: z.array(groupSummarySchema) })) },
    ...errors,
  },
});

const create = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/groups',
  summary: 'Create a group with the account as its owner',
  description: 'Numbers WhatsApp cannot add are left out of the group; the answer lists who is in it.',
  request: { params: accountParams, body: { required: true, content: json(createBody) } },
  responses: { 201: { description: 'The group', content: json(z.object({ ok: z.literal(true), group: groupDetailSchema })) }, ...errors },
});

const metadata = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/groups/{groupId}',
  summary: 'A group: subject, description, owner, participants and who is admin',
  request: { params: groupParams },
  responses: { 200: { description: 'The group', content: json(z.object({ ok: z.literal(true), group: groupDetailSchema })) }, ...errors },
});

const participants = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/groups/{groupId}/participants',
  summary: 'Add, remove, promote or demote participants (admins only)',
  description:
    'Each JID gets its own result: status 200 done, 403 not allowed (privacy), 404 not on WhatsApp or not in the group, 409 already in it.',
  request: { params: groupParams, body: { required: true, content: json(participantsBody) } },
  responses: {
    200: { description: 'One result per JID', content: json(z.object({ ok: z.literal(true), results: z.array(participantResultSchema) })) },
    ...errors,
  },
});

const update = createRoute({
  method: 'patch',
  path: '/accounts/{accountId}/groups/{groupId}',
  summary: "Change a group's subject and/or description",
  request: { params: groupParams, body: { required: true, content: json(updateBody) } },
  responses: { 200: messageResponse('Updated'), ...errors },
});

const invite = createRoute({
  method: 'get',
  path: '/accounts/{accountId}/groups/{groupId}/invite',
  summary: "The group's invite code and link (admins only)",
  request: { params: groupParams },
  responses: {
    200: {
      description: 'The invite',
      content: json(
        z.object({
          ok: z.literal(true),
          code: z.string(),
          url: z.string().openapi({ example: 'https://chat.whatsapp.com/AbCdEf012345678901234' }),
        }),
      ),
    },
    ...errors,
  },
});

const leave = createRoute({
  method: 'post',
  path: '/accounts/{accountId}/groups/{groupId}/leave',
  summary: 'Leave the group',
  request: { params: groupParams },
  responses: { 200: messageResponse('Left'), ...errors },
});

/**
 * The groups API. Bodies and the group id are judged first (400), then the account is looked
 * up (404) and must be connected; each operation runs on the account's live socket through the
 * connector and answers with what WhatsApp said (group-wait.ts).
 */
export function groupOperationRoutes(services: Services): OpenAPIHono<AppEnv> {
  const run = <T>(accountId: string, operation: GroupOperation) => runGroupOperation<T>(services, accountId, operation);
  type Detail = { group: z.infer<typeof groupDetailSchema> };

  return newRouter()
    .openapi(list, async (c) => {
      const { groups } = await run<{ groups: z.infer<typeof groupSummarySchema>[] }>(c.req.valid('param').accountId, { op: 'list' });
      return c.json({ ok: true as const, groups }, 200);
    })
    .openapi(create, async (c) => {
      const { subject, participants } = c.req.valid('json');
      const { group } = await run<Detail>(c.req.valid('param').accountId, { op: 'create', subject, participants });
      return c.json({ ok: true as const, group }, 201);
    })
    .openapi(metadata, async (c) => {
      const { accountId, groupId } = c.req.valid('param');
      const { group } = await run<Detail>(accountId, { op: 'metadata', groupId });
      return c.json({ ok: true as const, group }, 200);
    })
    .openapi(participants, async (c) => {
      const { accountId, groupId } = c.req.valid('param');
      const body = c.req.valid('json');
      const { results } = await run<{ results: z.infer<typeof participantResultSchema>[] }>(accountId, {
        op: 'participants',
        groupId,
        ...body,
      });
      return c.json({ ok: true as const, results }, 200);
    })
    .openapi(update, async (c) => {
      const { accountId, groupId } = c.req.valid('param');
      await run(accountId, { op: 'update', groupId, ...c.req.valid('json') });
      return c.json({ ok: true as const, message: 'Group updated' }, 200);
    })
    .openapi(invite, async (c) => {
      const { accountId, groupId } = c.req.valid('param');
      const { code, url } = await run<{ code: string; url: string }>(accountId, { op: 'invite', groupId });
      return c.json({ ok: true as const, code, url }, 200);
    })
    .openapi(leave, async (c) => {
      const { accountId, groupId } = c.req.valid('param');
      await run(accountId, { op: 'leave', groupId });
      return c.json({ ok: true as const, message: 'Left the group' }, 200);
    });
}
