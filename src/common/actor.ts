export type Role = 'owner' | 'admin' | 'member';

/** The authenticated caller; every service method takes it first and scopes by its organization. */
export interface Actor {
  userId: string;
  organizationId: string;
  roles: Role[];
  via: 'api-key' | 'token';
  /** The key that was presented, or the key a token was minted from. */
  apiKeyId: string;
}
