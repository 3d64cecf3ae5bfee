import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import { query } from '../../db/sql.js';
import type { VoiceAction } from './voice-actions.js';

/** How long a repeat waits for the first request's answer while that one is still being worked out. */
const FIRST_ANSWER_WAIT_MS = 5_000;

/**
 * The key of a signed webhook request, hashed: Twilio's `I-Twilio-Idempotency-Token` (the same on
 * each retry of one request), or, without it, the URL Twilio signed and the form fields it signed.
 * `route` keeps the keys of different routes apart.
 */
export function requestKey(req: Request, route: string, publicUrl: string, fields: Record<string, string>): string {
  const token = req.get('i-twilio-idempotency-token');
  const material = token
    ? `${route}\ntoken\n${token}`
    : `${route}\nrequest\n${publicUrl}${req.originalUrl}\n${Object.keys(fields).sort().map((name) => `${name}=${fields[name]}`).join('\n')}`;
  return createHash('sha256').update(material).digest('hex');
}

/**
 * The requests a call's webhooks answered, in `calls.webhook_replies` (key hash → the actions
 * answered, null while the first is being worked out), kept for the call's life in the database so
 * a repeat is recognized at any replica and after a restart. A repeat is answered with the first's
 * actions and changes nothing.
 */
export class WebhookReplays {
  constructor(private readonly em: EntityManager) {}

  /** True when this is the first request with `key` on the call (it is then recorded, in one statement); false for a repeat. */
  async claim(callId: string, key: string): Promise<boolean> {
    const rows = await query<{ id: string }>(
      this.em.fork(),
      `update calls set webhook_replies = webhook_replies || jsonb_build_object(?::text, null) where id = ? and not jsonb_exists(webhook_replies, ?) returning id`,
      [key, callId, key],
    );
    return rows.length === 1;
  }

  /** What the first request with `key` (or the entry `key` names) was answered. */
  async keep(callId: string, key: string, actions: VoiceAction[]): Promise<void> {
    await query(this.em.fork(), `update calls set webhook_replies = jsonb_set(webhook_replies, array[?]::text[], ?::jsonb) where id = ?`, [key, JSON.stringify(actions), callId]);
  }

  /** The first request failed: forget it, so a retry of it is worked out afresh. */
  async release(callId: string, key: string): Promise<void> {
    await query(this.em.fork(), `update calls set webhook_replies = webhook_replies - ?::text where id = ? and webhook_replies -> ?::text = 'null'::jsonb`, [key, callId, key]);
  }

  /** The first request's answer, waited for while it is being worked out; null when it never came (the repeat answers an empty TwiML). */
  async answered(callId: string, key: string): Promise<VoiceAction[] | null> {
    const until = Date.now() + FIRST_ANSWER_WAIT_MS;
    for (;;) {
      const [row] = await query<{ actions: VoiceAction[] | null }>(this.em.fork(), `select webhook_replies -> ?::text as actions from calls where id = ?`, [key, callId]);
      if (Array.isArray(row?.actions)) return row.actions;
      if (!row || Date.now() > until) return null;
      await sleep(100);
    }
  }
}
