import { createHash } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { Organization } from '../organizations/organization.entity.js';
import { IdempotencyKey } from './idempotency-key.entity.js';

/** How long a completed answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A reservation older than this belongs to a request that died; its writes were rolled back with it. */
export const STALE_RESERVATION_MS = 2 * 60 * 1000;
/** Expired rows deleted per reservation, so the cleanup stays cheap. */
const CLEANUP_BATCH = 100;

export interface IdempotentRequest {
  method: string;
  /** The concrete path, ids included. */
  path: string;
  key: string;
  body: unknown;
}

export interface IdempotentAnswer {
  status: number;
  body: unknown;
  replayed: boolean;
}

/** JSON with object keys sorted, so the same body hashes the same whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function hasSecret(body: unknown): body is Record<string, unknown> {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && 'secret' in body;
}

/**
 * Replays the first answer of a REST create sent again with the same Idempotency-Key. The key is
 * reserved (a committed `in_progress` row) before the handler runs; the handler's writes and the
 * stored answer commit in one transaction, and a failure removes the reservation.
 */
export class IdempotencyService {
  constructor(private readonly em: EntityManager) {}

  async run(actor: Actor, request: IdempotentRequest, execute: () => Promise<{ status: number; body: unknown }>): Promise<IdempotentAnswer> {
    const hash = requestHash(request.body);
    // Two rounds: a reservation that vanished between our insert and our read (its request failed) is retried once.
    for (let round = 0; round < 2; round++) {
      const existing = await this.current(actor, request);
      if (existing) return this.answerFor(existing, hash);
      const id = await this.reserve(actor, request, hash);
      if (id) return this.complete(id, execute);
    }
    throw new AppError('CONFLICT', 'A request with this Idempotency-Key is in progress; retry later');
  }

  /** The live record of this scope and key; expired and abandoned ones are deleted and count as absent. */
  private async current(actor: Actor, request: IdempotentRequest): Promise<IdempotencyKey | null> {
    const record = await this.em.fork().findOne(IdempotencyKey, {
      organization: actor.organizationId,
      apiKeyId: actor.apiKeyId,
      userId: actor.userId,
      method: request.method,
      path: request.path,
      key: request.key,
    });
    if (!record) return null;
    const now = Date.now();
    if (record.expiresAt.getTime() <= now) {
      await this.em.nativeDelete(IdempotencyKey, { id: record.id, expiresAt: { $lte: new Date(now) } });
      return null;
    }
    const staleBefore = new Date(now - STALE_RESERVATION_MS);
    if (record.status === 'in_progress' && record.createdAt < staleBefore) {
      // Only while still in progress: a request that completes meanwhile keeps its answer.
      await this.em.nativeDelete(IdempotencyKey, { id: record.id, status: 'in_progress', createdAt: { $lt: staleBefore } });
      return null;
    }
    return record;
  }

  private answerFor(record: IdempotencyKey, hash: string): IdempotentAnswer {
    if (record.requestHash !== hash) throw new AppError('CONFLICT', 'Idempotency-Key was used with a different request body');
    if (record.status === 'in_progress') {
      throw new AppError('CONFLICT', 'A request with this Idempotency-Key is still in progress; retry later');
    }
    if (record.secretOmitted) {
      throw new AppError('CONFLICT', 'the original response contained a secret shown only once; create a new key');
    }
    return { status: record.responseStatus ?? 200, body: record.responseBody, replayed: true };
  }

  /** Inserts the `in_progress` row (committed on its own); undefined when another request holds the key. */
  private async reserve(actor: Actor, request: IdempotentRequest, hash: string): Promise<string | undefined> {
    const em = this.em.fork();
    await em.execute(
      `delete from idempotency_keys where id in
        (select id from idempotency_keys where organization_id = ? and expires_at <= now() limit ${CLEANUP_BATCH})`,
      [actor.organizationId],
      'run',
    );
    const record = Object.assign(new IdempotencyKey(), {
      organization: em.getReference(Organization, actor.organizationId),
      apiKeyId: actor.apiKeyId,
      userId: actor.userId,
      method: request.method,
      path: request.path,
      key: request.key,
      requestHash: hash,
      expiresAt: new Date(Date.now() + IDEMPOTENCY_TTL_MS),
    });
    try {
      await em.insert(record);
      return record.id;
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) return undefined;
      throw error;
    }
  }

  /** Runs the handler and stores its answer in one transaction; on any failure the reservation goes. */
  private async complete(id: string, execute: () => Promise<{ status: number; body: unknown }>): Promise<IdempotentAnswer> {
    try {
      return await this.em.transactional(async (tx) => {
        const { status, body } = await execute();
        const stored = body === undefined ? null : (JSON.parse(JSON.stringify(body)) as unknown);
        const secretOmitted = hasSecret(stored);
        // A secret is never stored: the answer is kept without it, and a replay answers 409.
        if (secretOmitted) delete stored.secret;
        const updated = await tx.nativeUpdate(
          IdempotencyKey,
          { id, status: 'in_progress' },
          { status: 'completed', responseStatus: status, responseBody: stored, secretOmitted },
        );
        // The reservation was reclaimed as abandoned: roll back rather than create twice.
        if (updated !== 1) throw new AppError('CONFLICT', 'The Idempotency-Key reservation expired while the request ran; retry');
        return { status, body, replayed: false };
      });
    } catch (error) {
      // Best effort: if this fails too, the reservation is reclaimed once it is stale.
      await this.em.nativeDelete(IdempotencyKey, { id, status: 'in_progress' }).catch(() => undefined);
      throw error;
    }
  }
}
