/**
 * Every operation's name and group in the OpenAPI document: `operationId` is what client
 * generators name a method after, the tag is how `/docs` groups the operations. One table, so
 * that the names read as one vocabulary; a test fails for an operation missing from it.
 */
export const OPERATION_TAGS = [
  { name: 'health', description: 'Whether the server is up, and the WhatsApp Web version it announces' },
  { name: 'accounts', description: 'Accounts: create, link by QR or pairing code, connect, disconnect, delete; their settings' },
  { name: 'messages', description: 'Sending every kind of message, editing, forwarding, deleting; stored messages and their media' },
  { name: 'chats', description: 'Stored chats, read receipts and presence' },
  { name: 'groups', description: 'Groups the account is in: create, read, change, participants, invite links, leave' },
  { name: 'contacts', description: 'The contacts the account knows, whether a number is on WhatsApp, profile pictures' },
  { name: 'webhooks', description: 'Webhook registrations, their deliveries log and replay' },
  { name: 'keys', description: "What the caller's key reaches; per-account access keys (when API_KEY is set)" },
] as const;

type Tag = (typeof OPERATION_TAGS)[number]['name'];

/** `<METHOD> <path as in the document>` → its operationId and tag. */
export const OPERATIONS: Readonly<Record<string, { operationId: string; tag: Tag }>> = {
  'GET /ping': { operationId: 'ping', tag: 'health' },

  'POST /accounts': { operationId: 'createAccount', tag: 'accounts' },
  'GET /accounts': { operationId: 'listAccounts', tag: 'accounts' },
  'GET /accounts/{accountId}': { operationId: 'getAccount', tag: 'accounts' },
  'DELETE /accounts/{accountId}': { operationId: 'deleteAccount', tag: 'accounts' },
  'GET /accounts/{accountId}/status': { operationId: 'getAccountStatus', tag: 'accounts' },
  'POST /accounts/{accountId}/connect': { operationId: 'connectAccount', tag: 'accounts' },
  'POST /accounts/{accountId}/disconnect': { operationId: 'disconnectAccount', tag: 'accounts' },
  'GET /accounts/{accountId}/qr': { operationId: 'getQrCode', tag: 'accounts' },
  'POST /accounts/{accountId}/pairing-code': { operationId: 'requestPairingCode', tag: 'accounts' },
  'GET /accounts/{accountId}/settings': { operationId: 'getAccountSettings', tag: 'accounts' },
  'PATCH /accounts/{accountId}/settings': { operationId: 'updateAccountSettings', tag: 'accounts' },

  'POST /accounts/{accountId}/message/send': { operationId: 'sendText', tag: 'messages' },
  'POST /accounts/{accountId}/message/reply': { operationId: 'sendReply', tag: 'messages' },
  'POST /accounts/{accountId}/message/react': { operationId: 'sendReaction', tag: 'messages' },
  'POST /accounts/{accountId}/message/delete': { operationId: 'deleteMessage', tag: 'messages' },
  'POST /accounts/{accountId}/message/send/image': { operationId: 'sendImage', tag: 'messages' },
  'POST /accounts/{accountId}/message/send/video': { operationId: 'sendVideo', tag: 'messages' },
  'POST /accounts/{accountId}/message/send/audio': { operationId: 'sendAudio', tag: 'messages' },
  'POST /accounts/{accountId}/message/send/document': { operationId: 'sendDocument', tag: 'messages' },
  'POST /accounts/{accountId}/message/send/location': { operationId: 'sendLocation', tag: 'messages' },
  'POST /accounts/{accountId}/message/send/contact': { operationId: 'sendContacts', tag: 'messages' },
  'POST /accounts/{accountId}/message/send/poll': { operationId: 'sendPoll', tag: 'messages' },
  'POST /accounts/{accountId}/message/send/sticker': { operationId: 'sendSticker', tag: 'messages' },
  'POST /accounts/{accountId}/message/edit': { operationId: 'editMessage', tag: 'messages' },
  'POST /accounts/{accountId}/message/forward': { operationId: 'forwardMessage', tag: 'messages' },
  'GET /accounts/{accountId}/outbox': { operationId: 'listQueuedSends', tag: 'messages' },
  'DELETE /accounts/{accountId}/outbox/{messageId}': { operationId: 'cancelQueuedSend', tag: 'messages' },
  'GET /accounts/{accountId}/messages/{messageId}': { operationId: 'getMessage', tag: 'messages' },
  'GET /accounts/{accountId}/messages/{messageId}/media': { operationId: 'downloadMedia', tag: 'messages' },

  'GET /accounts/{accountId}/chats': { operationId: 'listChats', tag: 'chats' },
  'GET /accounts/{accountId}/chats/{chatId}/messages': { operationId: 'listChatMessages', tag: 'chats' },
  'POST /accounts/{accountId}/chats/{chatId}/read': { operationId: 'markChatRead', tag: 'chats' },
  'POST /accounts/{accountId}/chats/{chatId}/history': { operationId: 'requestChatHistory', tag: 'chats' },
  'POST /accounts/{accountId}/presence': { operationId: 'sendPresence', tag: 'chats' },

  'GET /accounts/{accountId}/groups': { operationId: 'listGroups', tag: 'groups' },
  'POST /accounts/{accountId}/groups': { operationId: 'createGroup', tag: 'groups' },
  'GET /accounts/{accountId}/groups/{groupId}': { operationId: 'getGroup', tag: 'groups' },
  'PATCH /accounts/{accountId}/groups/{groupId}': { operationId: 'updateGroup', tag: 'groups' },
  'POST /accounts/{accountId}/groups/{groupId}/participants': { operationId: 'updateGroupParticipants', tag: 'groups' },
  'GET /accounts/{accountId}/groups/{groupId}/invite': { operationId: 'getGroupInvite', tag: 'groups' },
  'POST /accounts/{accountId}/groups/{groupId}/leave': { operationId: 'leaveGroup', tag: 'groups' },

  'GET /accounts/{accountId}/contacts': { operationId: 'listContacts', tag: 'contacts' },
  'GET /accounts/{accountId}/contacts/{jid}': { operationId: 'getContact', tag: 'contacts' },
  'GET /accounts/{accountId}/contacts/{phone}/exists': { operationId: 'checkNumberExists', tag: 'contacts' },
  'GET /accounts/{accountId}/contacts/{jid}/picture': { operationId: 'getProfilePicture', tag: 'contacts' },

  'POST /webhooks': { operationId: 'createWebhook', tag: 'webhooks' },
  'GET /webhooks': { operationId: 'listWebhooks', tag: 'webhooks' },
  'DELETE /webhooks/{webhookId}': { operationId: 'deleteWebhook', tag: 'webhooks' },
  'POST /webhooks/{webhookId}/replay': { operationId: 'replayWebhook', tag: 'webhooks' },
  'GET /webhooks/{webhookId}/deliveries': { operationId: 'listWebhookDeliveries', tag: 'webhooks' },
  'POST /accounts/{accountId}/webhooks': { operationId: 'createAccountWebhook', tag: 'webhooks' },
  'GET /accounts/{accountId}/webhooks': { operationId: 'listAccountWebhooks', tag: 'webhooks' },
  'DELETE /accounts/{accountId}/webhooks/{webhookId}': { operationId: 'deleteAccountWebhook', tag: 'webhooks' },
  'POST /accounts/{accountId}/webhooks/{webhookId}/replay': { operationId: 'replayAccountWebhook', tag: 'webhooks' },

  'GET /me': { operationId: 'getMe', tag: 'keys' },
  'POST /accounts/{accountId}/keys': { operationId: 'createAccessKey', tag: 'keys' },
  'GET /accounts/{accountId}/keys': { operationId: 'listAccessKeys', tag: 'keys' },
  'DELETE /accounts/{accountId}/keys/{keyId}': { operationId: 'revokeAccessKey', tag: 'keys' },
};
