// The closed set of errors core/inbox gives the world. Each carries data, not just text:
// `InboxError.kind` says what went wrong, `reason` (for Refused) why a decision was not accepted.

export type InboxErrorKind = 'NotFound' | 'InvalidArgument' | 'Refused' | 'Conflict';

/** Why a decision was refused before anything was recorded as a decision. */
export type RefusalReason = 'unknown_user' | 'disabled' | 'locked' | 'wrong_pin' | 'no_pin' | 'role';

export class InboxError extends Error {
  readonly kind: InboxErrorKind;
  readonly reason: RefusalReason | undefined;
  /** For a Conflict: the decision someone else recorded while this one was being made (who). */
  readonly decidedMeanwhileBy: string | undefined;
  constructor(kind: InboxErrorKind, message: string, reason?: RefusalReason, decidedMeanwhileBy?: string) {
    super(message);
    this.name = `InboxError(${kind})`;
    this.kind = kind;
    this.reason = reason;
    this.decidedMeanwhileBy = decidedMeanwhileBy;
  }
}
