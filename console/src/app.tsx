import { useCallback, useEffect, useMemo, useState } from 'react';
import { Link, Route, Router, Switch, useLocation } from 'wouter';
import { ApiError, Gateway } from './api/client';
import { SessionDocument } from './api/generated';
import { SessionContext, storedKey, type Me, type Session } from './api/session';
import { SignIn } from './pages/sign-in';
import { Routes } from './routes';

const NAV = [
  { href: '/agents', label: 'Agents' },
  { href: '/contacts', label: 'Contacts' },
  { href: '/audiences', label: 'Audiences' },
  { href: '/segments', label: 'Segments' },
  { href: '/do-not-call', label: 'Do not call' },
  { href: '/campaigns', label: 'Campaigns' },
  { href: '/calls', label: 'Calls' },
  { href: '/settings', label: 'Settings' },
];

function Shell({ session }: { session: Session }) {
  const [location] = useLocation();
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <div className="brand">
          <Link href="/">Console</Link>
          <span className="org" data-testid="organization">
            {session.me.organization.name}
          </span>
        </div>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => {
              const current = location === item.href || location.startsWith(`${item.href}/`);
              return (
                <li key={item.href}>
                  <Link href={item.href} aria-current={current ? 'page' : undefined}>
                    {item.label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </nav>
        <div className="who">
          <span>
            {session.me.email} <span className="role">({session.me.role})</span>
          </span>
          <button type="button" onClick={session.signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Routes />
      </main>
    </>
  );
}

export function App() {
  const [session, setSession] = useState<{ gateway: Gateway; me: Me } | null>(null);
  const [checking, setChecking] = useState(() => storedKey.read() !== null);
  const [notice, setNotice] = useState<string | null>(null);

  const signOut = useCallback((why?: string) => {
    storedKey.clear();
    setSession((current) => {
      current?.gateway.close();
      return null;
    });
    setNotice(why ?? null);
  }, []);

  const signIn = useCallback(
    async (key: string): Promise<ApiError | null> => {
      const gateway = new Gateway(key);
      try {
        const { me } = await gateway.request(SessionDocument);
        storedKey.write(key);
        gateway.onUnauthenticated = (message) => signOut(`Signed out: ${message}`);
        setNotice(null);
        setSession({ gateway, me });
        return null;
      } catch (error) {
        return error instanceof ApiError ? error : new ApiError(String(error), 'INTERNAL_SERVER_ERROR');
      }
    },
    [signOut],
  );

  // A key kept from earlier in this tab signs in again on reload.
  useEffect(() => {
    const kept = storedKey.read();
    if (!kept) return;
    void signIn(kept).then((error) => {
      if (error) storedKey.clear();
      setChecking(false);
    });
  }, [signIn]);

  const value = useMemo<Session | null>(
    () => (session ? { ...session, can: (permission) => session.me.permissions.includes(permission), signOut: () => signOut() } : null),
    [session, signOut],
  );

  return (
    <Router base="/console">
      {value ? (
        <SessionContext.Provider value={value}>
          <Shell session={value} />
        </SessionContext.Provider>
      ) : checking ? (
        <main id="main">
          <p role="status">Signing in…</p>
        </main>
      ) : (
        <Switch>
          <Route>
            <SignIn onSignIn={signIn} notice={notice} />
          </Route>
        </Switch>
      )}
    </Router>
  );
}
