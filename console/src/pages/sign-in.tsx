import { useState, type FormEvent } from 'react';
import type { ApiError } from '../api/client';
import { FormError, TextField } from '../components/forms';
import { Page } from '../components/page';

export function SignIn({ onSignIn, notice }: { onSignIn: (key: string) => Promise<ApiError | null>; notice: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, setPending] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setPending(true);
    setError(await onSignIn(key.trim()));
    setPending(false);
  };
  return (
    <main id="main" className="sign-in">
      <Page title="Sign in">
        <p>Sign in with an API key of your organization. The console keeps it for this tab only, and forgets it when you sign out or close the tab.</p>
        {notice ? (
          <p className="notice" role="status">
            {notice}
          </p>
        ) : null}
        <form onSubmit={(event) => void submit(event)} noValidate>
          <TextField label="API key" field="apiKey" type="password" value={key} onChange={setKey} error={error} required autoComplete="off" />
          <FormError error={error} shown={['apiKey']} />
          <button type="submit" className="primary" disabled={pending || key.trim() === ''}>
            {pending ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
      </Page>
    </main>
  );
}
