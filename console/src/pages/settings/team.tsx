import { useState, type FormEvent } from 'react';
import { AddUserDocument, RemoveUserDocument, TeamDocument, UpdateUserRoleDocument, type UserRole } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { formatDate, Loading, QueryError, SecretOnce, Table } from '../../components/common';
import { FormError, SelectField, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { SettingsNav } from './settings-nav';

const ROLES = [
  { value: 'member', label: 'member: reads and talks to agents' },
  { value: 'admin', label: 'admin: all but the organization and its users' },
  { value: 'owner', label: 'owner: everything' },
];

/** The organization's users and their roles; only an owner adds, changes or removes them. */
export function TeamPage() {
  const { can, me } = useSession();
  const team = useQuery(TeamDocument, {});
  const updateRole = useMutation(UpdateUserRoleDocument);
  const remove = useMutation(RemoveUserDocument);
  const mayManage = can('users.manage');
  return (
    <Page title="Settings">
      <SettingsNav />
      {mayManage ? <AddUser onAdded={team.refetch} /> : null}
      <Section title="Team members">
        {team.error ? <QueryError error={team.error} what="Users" /> : null}
        <FormError error={updateRole.error ?? remove.error} />
        {team.data ? (
          <Table label="Team members">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Since</th>
                {mayManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {team.data.users.data.map((user) => (
                <tr key={user.id}>
                  <td>{user.email}</td>
                  <td>{user.name}</td>
                  <td>
                    {mayManage ? (
                      <select
                        aria-label={`Role of ${user.email}`}
                        value={user.role}
                        onChange={(event) => void updateRole.run({ id: user.id, role: event.target.value as UserRole }).then(() => team.refetch())}
                      >
                        {ROLES.map((role) => (
                          <option key={role.value} value={role.value}>
                            {role.value}
                          </option>
                        ))}
                      </select>
                    ) : (
                      user.role
                    )}
                  </td>
                  <td>{formatDate(user.createdAt)}</td>
                  {mayManage ? (
                    <td>
                      {user.id !== me.id ? (
                        <button type="button" className="small danger" onClick={() => void remove.run({ id: user.id }).then((done) => done && team.refetch())}>
                          Remove <span className="visually-hidden">{user.email}</span>
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </Table>
        ) : team.loading ? (
          <Loading what="the team" />
        ) : null}
      </Section>
    </Page>
  );
}

function AddUser({ onAdded }: { onAdded: () => void }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<UserRole>('member');
  const [secret, setSecret] = useState<string | null>(null);
  const add = useMutation(AddUserDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const done = await add.run({ input: { email, name: name || undefined, role } });
    if (done) {
      setSecret(done.addUser.apiKey.secret);
      setEmail('');
      setName('');
      onAdded();
    }
  };
  return (
    <Section title="Add a user">
      {secret ? <SecretOnce label="The new user’s first API key:" secret={secret} onDone={() => setSecret(null)} /> : null}
      <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="Add a user">
        <TextField label="Email" field="email" type="email" value={email} onChange={setEmail} error={add.error} required />
        <TextField label="Name" field="name" value={name} onChange={setName} error={add.error} />
        <SelectField label="Role" field="role" value={role} onChange={(value) => setRole(value as UserRole)} options={ROLES} error={add.error} />
        <FormError error={add.error} shown={['email', 'name', 'role']} />
        <button type="submit" className="primary" disabled={add.pending}>
          Add user
        </button>
      </form>
    </Section>
  );
}
