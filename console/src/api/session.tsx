import { createContext, useContext } from 'react';
import type { Gateway } from './client';
import type { SessionQuery } from './generated';

/** The key is kept for this tab's session only: sessionStorage, cleared on sign-out (never localStorage, never a cookie). */
const KEY = 'gateway-console:api-key';

export const storedKey = {
  read: (): string | null => sessionStorage.getItem(KEY),
  write: (key: string): void => sessionStorage.setItem(KEY, key),
  clear: (): void => sessionStorage.removeItem(KEY),
};

export type Me = SessionQuery['me'];

export interface Session {
  gateway: Gateway;
  me: Me;
  /** Whether the caller's role has the permission (me.permissions, the matrix the API enforces). */
  can(permission: string): boolean;
  signOut(): void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}
