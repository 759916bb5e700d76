import { useEffect, useState, type FormEvent } from 'react';
import type { Role } from '../../../core/site/api.ts';
import { Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';

const ROLES: Role[] = ['viewer', 'operator', 'shift_lead', 'admin'];

export function Users() {
  const t = useT();
  const users = useApp((s) => s.users);
  const load = useApp((s) => s.loadUsers);
  const add = useApp((s) => s.addUser);
  const disable = useApp((s) => s.disableUser);
  const enable = useApp((s) => s.enableUser);
  const reset = useApp((s) => s.resetSecret);
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('operator');
  const [secret, setSecret] = useState('');
  useEffect(() => void load(), [load]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void add(name, [role], secret);
    setName('');
    setSecret('');
  };
  return (
    <section>
      <Table label={t('nav.users')} head={[t('users.name'), t('users.roles'), '', '']}>
        {users.map((u) => (
          <tr key={u.name}>
            <td>
              {u.name} {u.disabled ? `(${t('users.disabled')})` : ''}
            </td>
            <td>{u.roles.join(', ')}</td>
            <td>
              {u.disabled ? (
                <button onClick={() => void enable(u.name)}>{t('users.enable')}</button>
              ) : (
                <button onClick={() => void disable(u.name)}>{t('users.disable')}</button>
              )}
            </td>
            <td>
              <button
                onClick={() => {
                  const s = window.prompt(t('users.newSecret'));
                  if (s) void reset(u.name, s);
                }}
              >
                {t('users.reset')}
              </button>
            </td>
          </tr>
        ))}
      </Table>
      <form className="add-user" onSubmit={submit}>
        <label>
          {t('users.name')}
          <input name="name" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          {t('users.roles')}
          <select name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('users.newSecret')}
          <input name="newSecret" type="password" autoComplete="new-password" value={secret} onChange={(e) => setSecret(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={!name || !secret}>
          {t('users.add')}
        </button>
      </form>
    </section>
  );
}
