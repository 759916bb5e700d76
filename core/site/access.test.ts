// The site API's role policy at a glance: which methods each role is refused, and which need no
// sign-in. A loosened entry in access.ts (or a new method let through) fails here.

import { describe, expect, it } from 'vitest';
import { ACCESS, refusal } from './access.ts';
import type { Role, SiteMethod } from './api.ts';

const METHODS = Object.keys(ACCESS) as SiteMethod[];
const refused = (role: Role) => METHODS.filter((m) => refusal(m, 'Kari', [role]) !== null).sort();

const ADMIN_ONLY = ['addUser', 'disableUser', 'enableUser', 'resetSecret', 'setRoles', 'users'];
const DECIDERS_ONLY = ['decide', 'dismissDeadLetters', 'setReorderPolicy'];

describe('site API access', () => {
  it('needs no sign-in only for the first-run screen, sign-in and "who am I"', () => {
    expect(METHODS.filter((m) => ACCESS[m].who === 'anyone').sort()).toEqual(['firstRun', 'initSite', 'me', 'signIn']);
  });

  it('refuses a viewer everything that writes', () => {
    expect(refused('viewer')).toEqual([...ADMIN_ONLY, ...DECIDERS_ONLY, 'replayDeadLetters'].sort());
  });

  it('lets an operator replay dead letters, not decide, dismiss, set reorder points or manage users', () => {
    expect(refused('operator')).toEqual([...ADMIN_ONLY, ...DECIDERS_ONLY].sort());
  });

  it('refuses a shift lead only the users screen', () => {
    expect(refused('shift_lead')).toEqual(ADMIN_ONLY.sort());
  });

  it('refuses an admin nothing', () => {
    expect(refused('admin')).toEqual([]);
  });

  it('says who the user is and who may', () => {
    expect(refusal('decide', 'Kari', ['operator'])).toBe('Kari is operator; only a shift lead or an admin decides');
    expect(refusal('dismissDeadLetters', 'Kari', ['viewer'])).toBe('Kari is viewer; only a shift lead or an admin dismisses dead letters');
    expect(refusal('setReorderPolicy', 'Kari', ['operator'])).toBe('Kari is operator; only a shift lead or an admin sets reorder points');
    expect(refusal('replayDeadLetters', 'Kari', ['viewer'])).toBe('Kari is a viewer; replaying dead letters takes an operator, a shift lead or an admin');
    expect(refusal('addUser', 'Kari', ['shift_lead'])).toBe('Kari is not an admin');
  });
});
