import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Request } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import { query } from '../../db/sql.js';
import { withPromptIds, type VoiceAction } from './voice-actions.js';

/** The entry of calls.webhook_replies that holds what the call's /answer was answered: Twilio asks it once per call. */
export const FIRST_ANSWER = 'answer';

/** How long a repeat waits for the first request's answer while that one is still being worked out. */
const FIRST_ANSWER_WAIT_MS = 5_000;

const hash = (material: string) => createHash('sha256').update(material).digest('hex');

/** The key of what Twilio signed: the URL and the form fields. */
function signedKey(req: Request, route: string, publicUrl: string, fields: Record<string, string>): string {
  return hash(
    `${route}\nrequest\n${publicUrl}${req.originalUrl}\n${Object.keys(fields)
      .sort()
      .map((name) => `${name}=${fields[name]}`)
      .join('\n')}`,
  );
}

/**
 * The key of a signed webhook request, hashed: the carrier's idempotency key (Twilio's `I-Twilio-Idempotency-Token`) (the same on
 * each retry of one request), or, without it, the URL Twilio signed and the form fields it signed.
 * `route` keeps the keys of different routes apart.
 */
export function requestKey(req: Request, route: string, publicUrl: string, fields: Record<string, string>, token: string | null): string {
  return token ? hash(`${route}\ntoken\n${token}`) : signedKey(req, route, publicUrl, fields);
}

/**
 * Every key a request is known by: what Twilio signed (the URL and the form fields), and its
 * `I-Twilio-Idempotency-Token` when it has one. The token is not signed, so a captured request
 * replayed with a new one is still known by what was signed; a request seen under either key is a
 * repeat. Twilio's own distinct requests are never signed alike: each prompt and each reply has URLs
 * of its own (voice-actions.ts, withPromptIds).
 */
export function requestKeys(req: Request, route: string, publicUrl: string, fields: Record<string, string>, token: string | null): string[] {
  return [signedKey(req, route, publicUrl, fields), ...(token ? [hash(`${route}\ntoken\n${token}`)] : [])];
}

/** Keys travel as one comma-separated text (hex digests and fixed names hold no comma). */
const joined = (keys: string | readonly string[]) => (typeof keys === 'string' ? keys : keys.join(','));

/**
 * The requests a call's webhooks answered, in `calls.webhook_replies` (key hash → the actions
 * answered, null while the first is being worked out), kept for the call's life in the database so
 * a repeat is recognized at any replica and after a restart. A repeat is answered with the first's
 * actions and changes nothing.
 */
export class WebhookReplays {
  constructor(private readonly em: EntityManager) {}

  /** True when none of `keys` was seen on the call (they are then recorded, in one statement); false for a repeat. */
  async claim(callId: string, keys: string | readonly string[]): Promise<boolean> {
    const rows = await query<{ id: string }>(
      this.em.fork(),
      `update calls set webhook_replies = webhook_replies || (select jsonb_object_agg(k, null) from unnest(string_to_array(?, ',')) k)
        where id = ? and not jsonb_exists_any(webhook_replies, string_to_array(?, ',')) returning id`,
      [joined(keys), callId, joined(keys)],
    );
    return rows.length === 1;
  }

  /** What the first request with `keys` (or the entry `keys` names) was answered. */
  async keep(callId: string, keys: string | readonly string[], actions: VoiceAction[]): Promise<void> {
    await query(
      this.em.fork(),
      `update calls set webhook_replies = webhook_replies || (select jsonb_object_agg(k, ?::jsonb) from unnest(string_to_array(?, ',')) k) where id = ?`,
      [JSON.stringify(actions), joined(keys), callId],
    );
  }

  /** The first request failed: forget it, so a retry of it is worked out afresh. */
  async release(callId: string, keys: string | readonly string[]): Promise<void> {
    const first = joined(keys).split(',')[0]!;
    await query(
      this.em.fork(),
      `update calls set webhook_replies = webhook_replies - string_to_array(?, ',') where id = ? and webhook_replies -> ?::text = 'null'::jsonb`,
      [joined(keys), callId, first],
    );
  }

  /** The first request's answer, waited for while it is being worked out; null when it never came (the repeat answers an empty TwiML). */
  async answered(callId: string, keys: string | readonly string[]): Promise<VoiceAction[] | null> {
    const until = Date.now() + FIRST_ANSWER_WAIT_MS;
    for (;;) {
      const [row] = await query<{ actions: VoiceAction[] | null }>(
        this.em.fork(),
        `select (select value from jsonb_each(c.webhook_replies) e where e.key = any(string_to_array(?, ',')) and jsonb_typeof(e.value) = 'array' limit 1) as actions
           from calls c where c.id = ?`,
        [joined(keys), callId],
      );
      if (Array.isArray(row?.actions)) return row.actions;
      if (!row || Date.now() > until) return null;
      await sleep(100);
    }
  }

  /**
   * Works out a request's answer once: the first request with any of `keys` runs `work` and its
   * answer is kept (a failure forgets it, so a retry runs again); a repeat is answered what the first
   * was, waiting for it while it is worked out, and runs nothing.
   */
  async once(callId: string, keys: string | readonly string[], work: () => Promise<VoiceAction[]>): Promise<{ actions: VoiceAction[]; repeated: boolean }> {
    if (!(await this.claim(callId, keys))) return { actions: (await this.answered(callId, keys)) ?? [], repeated: true };
    let actions: VoiceAction[];
    try {
      actions = withPromptIds(await work());
    } catch (error) {
      await this.release(callId, keys);
      throw error;
    }
    await this.keep(callId, keys, actions);
    return { actions, repeated: false };
  }
}
