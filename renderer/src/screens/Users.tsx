import { useEffect, useReducer, useRef, useState, type FormEvent } from 'react';
import type { Role } from '../../../core/site/api.ts';
import { escapeCloses, focusAfterClose, focusIfDropped, Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';

const ROLES: Role[] = ['viewer', 'operator', 'shift_lead', 'admin'];

/**
 * Whether the site takes `secret` as a PIN (4 to 12 digits) or a password (8 characters or more),
 * by its length alone (the site says which PINs are too easy to guess). Anything else the site
 * refuses in English as a password too short, which reads wrong under a field named PIN.
 */
export function secretLengthOk(secret: string): boolean {
  return /^[0-9]{4,12}$/.test(secret) || secret.length >= 8;
}

/**
 * The confirmation after a reset says which the site set: it takes a secret of 4 to 12 digits as a
 * PIN and anything else as a password (core/site service.ts `secretOf`), so the screen knows.
 */
export function secretSetKey(secret: string): 'users.pinSet' | 'users.passwordSet' {
  return /^[0-9]{4,12}$/.test(secret) ? 'users.pinSet' : 'users.passwordSet';
}

/** Who was just added, as the confirmation names them (their role in words: `role.*`). */
export interface Added {
  name: string;
  role: Role;
}

/**
 * Sends a new user to the site (`add`: the store's `addUser`) and gives what the confirmation says
 * — who, with which role — or null when the site refused it (the error line says why, and the form
 * keeps what was typed). The form empties when the site took it; without a word it looked as if
 * nothing had happened, while a PIN reset says "New PIN set for …".
 */
export async function addConfirmed(add: (name: string, roles: Role[], secret: string, badge?: string) => Promise<boolean>, name: string, role: Role, secret: string, badge: string): Promise<Added | null> {
  return (await add(name, [role], secret, badge)) ? { name, role } : null;
}

/** The confirmation under the users' table: a user added, or a PIN or password set. */
export function UsersDone({ done }: { done: Done }) {
  const t = useT();
  return (
    <p role="status" className={done.key === 'users.added' ? 'add-done' : 'reset-done'}>
      {done.key === 'users.added' ? t('users.added', { name: done.added.name, role: t(`role.${done.added.role}`) }) : t(done.key, { name: done.name })}
    </p>
  );
}

/** What the confirmation line under the table says: a user added, or a PIN or password set. */
export type Done = { key: 'users.added'; added: Added } | { key: ReturnType<typeof secretSetKey>; name: string };

/** The add form's fields. */
export interface AddFields {
  name: string;
  role: Role;
  secret: string;
  badge: string;
}

/** The add form and the confirmation under the table, which change together (`usersForm`). */
export interface UsersForm {
  fields: AddFields;
  done: Done | null;
}

export const NEW_USERS_FORM: UsersForm = { fields: { name: '', role: 'operator', secret: '', badge: '' }, done: null };

/**
 * The add form and the confirmation line, as a change leaves them. Typed into (`edit`), the form
 * takes it and the confirmation goes, as a confirmation line does once the next thing is begun:
 * "Added Ola (Operator)." stayed while the next user was typed, and read as said of them. A user
 * added (`added`) empties the fields but the role (the next one added is often the same) and says
 * who; `done` says a reset's outcome, or nothing (a reset begun), the form as it is.
 *
 * A user added empties only the fields that still hold what was `sent`: the form is not locked
 * while the site answers, and the next user's name or badge typed meanwhile is not the one added.
 */
export function usersForm(s: UsersForm, e: { edit: Partial<AddFields> } | { added: Added; sent: Omit<AddFields, 'role'> } | { done: Done | null }): UsersForm {
  if ('edit' in e) return { fields: { ...s.fields, ...e.edit }, done: null };
  if ('added' in e) {
    const f = s.fields;
    const cleared = (k: keyof typeof e.sent) => (f[k] === e.sent[k] ? '' : f[k]);
    return { fields: { name: cleared('name'), role: f.role, secret: cleared('secret'), badge: cleared('badge') }, done: { key: 'users.added', added: e.added } };
  }
  return { ...s, done: e.done };
}

export function Users() {
  const t = useT();
  const users = useApp((s) => s.users);
  const me = useApp((s) => s.user?.name);
  const load = useApp((s) => s.loadUsers);
  const add = useApp((s) => s.addUser);
  const disable = useApp((s) => s.disableUser);
  const enable = useApp((s) => s.enableUser);
  const reset = useApp((s) => s.resetSecret);
  // A change on its way: the buttons that send another wait for its answer (a double tap on Add
  // would be refused as a user that exists).
  const busy = useApp((s) => s.usersBusy);
  // The add form's fields and what was just done, said under the table (one at a time: the newest).
  const [form, change] = useReducer(usersForm, NEW_USERS_FORM);
  const { name, role, secret, badge } = form.fields;
  const done = form.done;
  // A badge is optional: a user signs in with it as with the PIN or password (the sign-in screen's
  // badge scan). A scanner types its code into the focused field; the site refuses a badge of the
  // wrong length or one another user has (user.badgeLength, user.badgeTaken).
  // The PIN reset is a form in the user's row (a masked field), not window.prompt: the prompt
  // shows the PIN as it is typed, and Electron's windows have no prompt at all.
  const [resetting, setResetting] = useState<string | null>(null);
  const [newSecret, setNewSecret] = useState('');
  const [addTried, setAddTried] = useState(false);
  const [resetTried, setResetTried] = useState(false);
  // The reset form as last rendered: a reset answered closes it only if it is still that user's,
  // holding what was sent (another user's begun meanwhile stays open, as typed).
  const resetShown = useRef({ user: resetting, secret: newSecret });
  resetShown.current = { user: resetting, secret: newSecret };
  useEffect(() => void load(), [load]);
  // The fields empty and the reset form closes only when the site took the change: refused (a PIN
  // too simple, a name taken), what was typed stays to be corrected, beside the error.
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!secretLengthOk(secret)) return setAddTried(true);
    const added = await addConfirmed(add, name, role, secret, badge);
    if (added) {
      change({ added, sent: { name, secret, badge } });
      setAddTried(false);
      // The emptied form disables Add, which had the focus: it goes to the name, for the next user.
      focusIfDropped('form.add-user input[name="name"]', 'form.add-user button[type="submit"]');
    }
  };
  const submitReset = async (e: FormEvent, user: string) => {
    e.preventDefault();
    if (!secretLengthOk(newSecret)) return setResetTried(true);
    const sent = newSecret;
    if (!(await reset(user, sent))) return;
    change({ done: { key: secretSetKey(sent), name: user } });
    const open = resetShown.current;
    if (open.user !== user || open.secret !== sent) return;
    setNewSecret('');
    setResetting(null);
    focusAfterClose(`tr[data-user="${CSS.escape(user)}"] button.reset`);
  };
  const roleName = (r: Role) => t(`role.${r}`);
  const cancelReset = (user: string) => {
    setResetting(null);
    setNewSecret('');
    focusAfterClose(`tr[data-user="${CSS.escape(user)}"] button.reset`);
  };
  // Said when one is sent that neither a PIN nor a password can be (not while it is typed:
  // every PIN starts too short), until it is put right.
  const addShort = addTried && secret !== '' && !secretLengthOk(secret);
  const resetShort = resetTried && newSecret !== '' && !secretLengthOk(newSecret);
  return (
    <section>
      <Table label={t('nav.users')} head={[t('users.name'), t('users.roles'), t('users.hasBadge'), '', '']}>
        {users.map((u) => (
          <tr key={u.name} data-user={u.name}>
            <td>
              {u.name} {u.name === me ? `(${t('users.you')})` : ''} {u.disabled ? `(${t('users.disabled')})` : ''}
            </td>
            <td>{u.roles.map(roleName).join(', ')}</td>
            {/* Whether the user has a badge, never the badge: the site sends only that (UserView.hasBadge). */}
            <td className="has-badge">{t(u.hasBadge ? 'users.badgeYes' : 'users.badgeNo')}</td>
            {/* aria-disabled, not disabled, while a change is on its way: a disabled button drops
                the keyboard focus to the page (the store sends nothing meanwhile, usersBusy). The
                button clicked stays the row's (Disable turns into Enable) and keeps the focus. */}
            <td>
              {/* The site refuses to disable the signed-in admin (core/site/service.ts): no button for it. */}
              {u.name === me ? null : u.disabled ? (
                <button aria-disabled={busy || undefined} onClick={() => void enable(u.name)}>{t('users.enable')}</button>
              ) : (
                <button aria-disabled={busy || undefined} onClick={() => void disable(u.name)}>{t('users.disable')}</button>
              )}
            </td>
            <td>
              {resetting === u.name ? (
                <form className="reset-secret" onSubmit={(e) => void submitReset(e, u.name)} onKeyDown={escapeCloses(() => cancelReset(u.name))}>
                  <label>
                    {t('users.newSecret')}
                    <input name="resetSecret" type="password" autoComplete="new-password" autoFocus value={newSecret} aria-invalid={resetShort || undefined} onChange={(e) => setNewSecret(e.target.value)} />
                  </label>
                  {/* aria-disabled while a change is on its way (the store sends nothing then), not
                      disabled: a refused PIN left the focus on the page, not on Set. */}
                  <button type="submit" className="primary" disabled={!newSecret} aria-disabled={busy || undefined}>
                    {t('users.setSecret')}
                  </button>
                  <button type="button" onClick={() => cancelReset(u.name)}>
                    {t('users.cancel')}
                  </button>
                  {resetShort ? (
                    <p className="secret-rule alert" role="alert">
                      ⚠ {t('users.secretRule')}
                    </p>
                  ) : null}
                </form>
              ) : (
                <button className="reset" onClick={() => (setResetting(u.name), setNewSecret(''), change({ done: null }), setResetTried(false))}>
                  {t('users.reset')}
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
      {done && <UsersDone done={done} />}
      <form className="add-user" onSubmit={(e) => void submit(e)}>
        <label>
          {t('users.name')}
          <input name="name" value={name} onChange={(e) => change({ edit: { name: e.target.value } })} />
        </label>
        <label>
          {t('users.roles')}
          <select name="role" value={role} onChange={(e) => change({ edit: { role: e.target.value as Role } })}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {roleName(r)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('users.newSecret')}
          <input name="newSecret" type="password" autoComplete="new-password" value={secret} aria-invalid={addShort || undefined} onChange={(e) => change({ edit: { secret: e.target.value } })} />
        </label>
        <label>
          {t('users.badge')}
          <input name="badge" type="password" autoComplete="off" value={badge} onChange={(e) => change({ edit: { badge: e.target.value } })} />
        </label>
        {/* aria-disabled while a change is on its way, as the Set above: a refused user left the focus on the page. */}
        <button type="submit" className="primary" disabled={!name || !secret} aria-disabled={busy || undefined}>
          {t('users.add')}
        </button>
        {addShort ? (
          <p className="secret-rule alert" role="alert">
            ⚠ {t('users.secretRule')}
          </p>
        ) : null}
      </form>
    </section>
  );
}
