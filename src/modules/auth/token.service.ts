import jwt from 'jsonwebtoken';
import type { Config } from '../../config.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';

interface TokenClaims {
  sub: string;
  org: string;
  /** The API key the token was minted from; revoking the key revokes the token. */
  akid: string;
}

const ALGORITHM = 'HS256';

/** Bearer tokens: HS256 only, `exp`, `iss` and `aud` required and checked. */
export class TokenService {
  constructor(private readonly config: Pick<Config, 'jwtSecret' | 'jwtIssuer' | 'jwtAudience' | 'jwtTtlSeconds'>) {}

  /** A token for the caller; only an API key can be exchanged, so a token cannot extend itself. */
  exchange(actor: Actor): { accessToken: string; tokenType: 'Bearer'; expiresIn: number } {
    if (actor.via !== 'api-key') {
      throw new AppError('UNAUTHENTICATED', 'A token is exchanged for an API key: send x-api-key');
    }
    const claims: TokenClaims = { sub: actor.userId, org: actor.organizationId, akid: actor.apiKeyId };
    const accessToken = jwt.sign(claims, this.config.jwtSecret, {
      algorithm: ALGORITHM,
      expiresIn: this.config.jwtTtlSeconds,
      issuer: this.config.jwtIssuer,
      audience: this.config.jwtAudience,
    });
    return { accessToken, tokenType: 'Bearer', expiresIn: this.config.jwtTtlSeconds };
  }

  /** The claims of a valid token; UNAUTHENTICATED for anything else. */
  verify(token: string): TokenClaims {
    let payload: string | jwt.JwtPayload;
    try {
      payload = jwt.verify(token, this.config.jwtSecret, {
        algorithms: [ALGORITHM],
        issuer: this.config.jwtIssuer,
        audience: this.config.jwtAudience,
      });
    } catch (error) {
      const expired = error instanceof jwt.TokenExpiredError;
      throw new AppError('UNAUTHENTICATED', expired ? 'The bearer token has expired' : 'The bearer token is invalid');
    }
    if (
      typeof payload !== 'object' ||
      typeof payload.exp !== 'number' ||
      typeof payload.sub !== 'string' ||
      typeof payload.org !== 'string' ||
      typeof payload.akid !== 'string'
    ) {
      throw new AppError('UNAUTHENTICATED', 'The bearer token is invalid');
    }
    return { sub: payload.sub, org: payload.org, akid: payload.akid };
  }
}
