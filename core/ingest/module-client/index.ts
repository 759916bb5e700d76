// The module client's public surface: what a site module embeds to publish change events to
// Tilstand, answer resync requests, receive commands and hear of its dead letters. See ../CONTRACTS.md.
export { ModuleClient } from './client.ts';
export type { ModuleClientOptions, Command, CommandAck, CommandHandler, CommandResult, ResyncShortfall } from './client.ts';
export type { DeadLetterNotice, LetterNotice, LetterSummaryNotice } from '../letter-notices.ts';
export { Outbox, OutboxFullError, DEFAULT_OUTBOX_OPTIONS } from './outbox.ts';
export type { OutboxOptions, OutboxEvent } from './outbox.ts';
