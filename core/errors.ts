/**
 * Domain errors. Code in core/ and connector/ throws these; the HTTP layer maps them to a
 * status and the error body of docs/api.md in one place (functions/http/errors.ts).
 */
abstract class DomainError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A named resource does not exist (message is the client-facing text, e.g. `Account not found`). */
export class NotFoundError extends DomainError {
  override name = 'NotFoundError';
}

/** A create collided with an existing item (e.g. `Account already exists`). */
export class AlreadyExistsError extends DomainError {
  override name = 'AlreadyExistsError';
}

/**
 * 409: the request contradicts what is already there (an Idempotency-Key reused with a different
 * request, a `collectionName` another account holds).
 */
export class ConflictError extends DomainError {
  override name = 'ConflictError';
}

/** Input that breaks a rule; the message is shown to the client. */
export class ValidationError extends DomainError {
  override name = 'ValidationError';
}

/** An upload above the configured maximum. */
export class PayloadTooLargeError extends DomainError {
  override name = 'PayloadTooLargeError';
}

/** 429: a paced account's queue holds `sendPolicy.queueLimit` sends already (async sends only). */
export class SendQueueFullError extends DomainError {
  override name = 'SendQueueFullError';
}

/**
 * A send or media operation that could not be done; answered as 500 `internal_error`, with the
 * message as `detail`.
 */
export class OperationFailedError extends DomainError {
  override name = 'OperationFailedError';
}

/** The account is not connected, so nothing can be sent through it. */
export class AccountNotConnectedError extends OperationFailedError {
  override name = 'AccountNotConnectedError';
}

/** The connector did not take the send within SEND_TIMEOUT_MS; it was not sent and never will be. */
export class SendTimeoutError extends OperationFailedError {
  override name = 'SendTimeoutError';
}

/** The connector took the send but reported no outcome in time: it may have been delivered. */
export class SendOutcomeUnknownError extends OperationFailedError {
  override name = 'SendOutcomeUnknownError';
}

/**
 * A send that may not go before `until`: the account's sending is paused after WhatsApp refused
 * a send (core/send-pause.ts), or a plain send of a paced account whose turn comes after its
 * deadline (`send rate limit`, docs/sending.md#paced-sends). 500 `internal_error` like any failed
 * send, plus `retryAfter` and `Retry-After` from `until`.
 */
export class SendPausedError extends OperationFailedError {
  override name = 'SendPausedError';
  constructor(
    message: string,
    /** Unix ms: sending resumes then. */
    readonly until: number,
  ) {
    super(message);
  }
}

export function isConditionalCheckFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The queue named by a request does not exist (SDK v3 names it QueueDoesNotExist; the query protocol's code is NonExistentQueue). */
export function isQueueMissing(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { Code?: unknown }).Code;
  return error.name === 'QueueDoesNotExist' || code === 'AWS.SimpleQueueService.NonExistentQueue';
}
