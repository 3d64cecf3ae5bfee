import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Router } from 'express';
import type { Logger } from 'pino';
import { AppError } from '../common/errors.js';
import { jsonBody } from '../rest/body-parsers.js';
import { problemHandler, sendProblem } from '../rest/problem.js';
import type { Services } from '../services.js';
import { OPERATOR_COMMANDS, UsageError, type Values } from './operator-commands.js';
import { own } from '../common/own.js';
import { vouchFor } from '../platform/rate-limit.js';

/** Compared as digests, so neither the time taken nor a length tells anything about the token. */
function sameToken(given: string, token: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * The operator's door on the running server, outside /api: `POST /operator/commands/<command>` with
 * the command's options as a JSON object, `Authorization: Bearer <operator token>` (the token of
 * DATA_DIR/operator.json). The operator CLI uses it when the server holds the embedded database, so
 * credits, keys and organizations can be managed without stopping the server. It answers
 * `{lines: [...]}`, the JSON values the CLI prints, or a problem+json error (a bad option: 400 with
 * the command's own words). The authorization header is redacted from the request log like a key.
 */
export function operatorRouter(services: Services, token: string, logger: Logger): Router {
  const router = express.Router();
  router.use((req, res, next) => {
    res.setHeader('Cache-Control', 'no-store'); // an answer can carry a new API key
    const header = req.get('authorization') ?? '';
    const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    if (!given || !sameToken(given, token)) {
      sendProblem(res, new AppError('UNAUTHENTICATED', 'The operator door needs the token of DATA_DIR/operator.json'), String(res.locals.requestId));
      return;
    }
    vouchFor(res); // the operator: whatever the command answers, it is not counted as a refusal
    next();
  });
  router.use(jsonBody({ limit: 64 * 1024 }));
  router.post('/commands/:name', async (req, res, next) => {
    try {
      const command = own(OPERATOR_COMMANDS, String(req.params.name));
      if (!command) throw new AppError('NOT_FOUND', `No operator command "${String(req.params.name)}"`);
      const body: unknown = req.body ?? {};
      if (typeof body !== 'object' || Array.isArray(body) || body === null) throw new AppError('BAD_USER_INPUT', 'The body must be a JSON object of options');
      const values: Values = {};
      for (const [name, value] of Object.entries(body)) {
        if (!Object.hasOwn(command.options, name)) throw new AppError('BAD_USER_INPUT', `Unknown option --${name}`);
        if (typeof value !== 'string' && typeof value !== 'boolean') throw new AppError('BAD_USER_INPUT', `--${name} must be a string`);
        values[name] = value;
      }
      let run;
      try {
        run = command.prepare(values);
      } catch (error) {
        throw error instanceof UsageError ? new AppError('BAD_USER_INPUT', error.message) : error;
      }
      res.json({ lines: await run(services) });
    } catch (error) {
      next(error);
    }
  });
  router.use((req, res) => sendProblem(res, new AppError('NOT_FOUND', `No route ${req.method} ${req.originalUrl}`), String(res.locals.requestId)));
  router.use(problemHandler(logger));
  return router;
}
