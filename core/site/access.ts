// Who may call each method of the site API: one entry per method, checked by SiteService.call
// before the handler runs. The table's type names every SiteMethod, so a method added to the API
// does not compile until someone decides who may call it — there is no default.

import { DECIDER_ROLES } from '../inbox/index.ts';
import type { Role, SiteMethod } from './api.ts';

export type Access =
  /** Before sign-in: the first-run screen, sign-in itself, and "who am I". */
  | { readonly who: 'anyone' }
  /** Any signed-in user, a viewer included: reading, and signing out. */
  | { readonly who: 'signedIn' }
  /** Signed in with one of `roles`; `refusal` says why another is refused. */
  | { readonly who: 'roles'; readonly roles: readonly Role[]; readonly refusal: (name: string, roles: readonly Role[]) => string };

const anyone: Access = { who: 'anyone' };
const signedIn: Access = { who: 'signedIn' };
const deciders = (what: string): Access => ({ who: 'roles', roles: DECIDER_ROLES, refusal: (name, roles) => `${name} is ${roles.join(', ')}; only a shift lead or an admin ${what}` });
const admins: Access = { who: 'roles', roles: ['admin'], refusal: (name) => `${name} is not an admin` };

export const ACCESS: { readonly [M in SiteMethod]: Access } = {
  firstRun: anyone,
  initSite: anyone,
  signIn: anyone,
  me: anyone,
  signOut: signedIn,
  status: signedIn,
  listProposals: signedIn,
  getProposal: signedIn,
  decide: deciders('decides'),
  workQueue: signedIn,
  stock: signedIn,
  setReorderPolicy: deciders('sets reorder points'),
  configChanges: signedIn,
  tables: signedIn,
  tags: signedIn,
  history: signedIn,
  diff: signedIn,
  syncStatus: signedIn,
  deadLetters: signedIn,
  deadLetterGroups: signedIn,
  // A viewer only looks: a replay writes the state tables.
  replayDeadLetters: {
    who: 'roles',
    roles: ['operator', 'shift_lead', 'admin'],
    refusal: (name) => `${name} is a viewer; replaying dead letters takes an operator, a shift lead or an admin`,
  },
  dismissDeadLetters: deciders('dismisses dead letters'),
  users: admins,
  addUser: admins,
  disableUser: admins,
  enableUser: admins,
  resetSecret: admins,
  setRoles: admins,
};

/** Why a signed-in user with `roles` may not call `method`; null when they may. */
export function refusal(method: SiteMethod, name: string, roles: readonly Role[]): string | null {
  const a = ACCESS[method];
  if (a.who !== 'roles' || roles.some((r) => a.roles.includes(r))) return null;
  return a.refusal(name, roles);
}
