import type { NextFunction, Request, Response } from 'express';
import type { Actor } from '../common/actor.js';
import type { AppError } from '../common/errors.js';
import { toAppError } from '../common/error-mapping.js';
import type { AuthService } from '../modules/auth/auth.service.js';

/** Who sent the request, decided once per request and shared by the rate limit and both doors. */
export interface Principal {
  actor: Actor | null;
  /** Credentials that were sent but did not authenticate. */
  authError: AppError | null;
}

export function principalOf(res: Response): Principal {
  return (res.locals.principal as Principal | undefined) ?? { actor: null, authError: null };
}

/** Authenticates the request's x-api-key or Bearer token (one lookup) and keeps the outcome on res.locals. */
export function authenticateRequest(services: { auth: Pick<AuthService, 'authenticate'> }) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (res.locals.principal) return next();
    let principal: Principal;
    try {
      const actor = await services.auth.authenticate({ apiKey: req.get('x-api-key'), authorization: req.get('authorization') });
      principal = { actor, authError: null };
    } catch (error) {
      const appError = toAppError(error);
      // A lost database is not a credentials problem: let the door answer 503.
      if (appError.code !== 'UNAUTHENTICATED') return next(error);
      principal = { actor: null, authError: appError };
    }
    res.locals.principal = principal;
    next();
  };
}
