// The closed set of errors core/agents gives the world.

export type AgentErrorKind = 'ReadOnly' | 'InvalidArgument' | 'NotFound';

export class AgentError extends Error {
  readonly kind: AgentErrorKind;
  constructor(kind: AgentErrorKind, message: string) {
    super(message);
    this.name = `AgentError(${kind})`;
    this.kind = kind;
  }
}
