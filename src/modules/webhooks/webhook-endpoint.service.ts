import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type PageArgs } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { open, seal } from '../../platform/credentials.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import { outboundUrlProblem } from './webhook-address.js';
import { WebhookEndpoint, WebhookEndpointWithSecret } from './webhook-endpoint.entity.js';
import { disableEndpoint } from './webhook-disable.js';
import type { CreateWebhookEndpointInput, UpdateWebhookEndpointInput } from './webhook.inputs.js';
import { newWebhookSecret, ROTATION_OVERLAP_MS, secretHint } from './webhook-secret.js';
import { readPage } from '../../db/read-model.js';

export const WEBHOOK_ENDPOINT_SORT_FIELDS = ['createdAt', 'updatedAt', 'url'] as const;

/** Endpoints an organization may hold: every event fans out to each of them. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

export interface WebhookOptions {
  /** CREDENTIALS_KEY, read when needed (unset: no endpoint can be created). */
  credentialsKey: () => Buffer | undefined;
  /** WEBHOOK_ALLOW_PRIVATE: http and private, loopback, link-local addresses allowed (development, tests). */
  allowPrivate: boolean;
  /** The instant rotations count their 24 h overlap from; tests inject one. */
  clock?: () => Date;
}

/**
 * An organization's webhook endpoints. The signing secret is write-once: generated here, sealed under
 * CREDENTIALS_KEY, answered only by create and rotate; reads show its last 4 characters.
 */
export class WebhookEndpointService {
  constructor(
    private readonly em: EntityManager,
    private readonly options: WebhookOptions,
  ) {}

  /** A page of endpoints; `search` matches the URL or the description. */
  async list(actor: Actor, args: PageArgs): Promise<Page<WebhookEndpoint>> {
    const field = sortField(args.sortBy, WEBHOOK_ENDPOINT_SORT_FIELDS);
    const pattern = args.search ? containsPattern(args.search) : undefined;
    const { rows: data, meta } = await readPage(
      this.em,
      WebhookEndpoint,
      { organization: actor.organizationId, ...(pattern ? { $or: [{ url: { $ilike: pattern } }, { description: { $ilike: pattern } }] } : {}) },
      sortedPage(args, field),
    );
    return { data, meta };
  }

  async get(actor: Actor, id: string): Promise<WebhookEndpoint> {
    const endpoint = isUuid(id) ? await this.em.findOne(WebhookEndpoint, { id, organization: actor.organizationId }) : null;
    if (!endpoint) throw AppError.notFound('Webhook endpoint');
    return endpoint;
  }

  /** Checks the URL (https, a public address), generates the secret and stores it sealed; the answer is the only place it is shown. */
  async create(actor: Actor, input: CreateWebhookEndpointInput): Promise<WebhookEndpointWithSecret> {
    authorize(actor, 'webhooks.manage');
    const key = this.requireKey();
    await this.checkUrl(input.url);
    const held = await this.em.count(WebhookEndpoint, { organization: actor.organizationId });
    if (held >= MAX_WEBHOOK_ENDPOINTS) {
      throw new AppError('CONFLICT', `An organization may hold at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`);
    }
    const secret = newWebhookSecret();
    const endpoint = this.em.create(WebhookEndpoint, {
      organization: this.em.getReference(Organization, actor.organizationId),
      url: input.url,
      eventTypes: [...new Set(input.eventTypes ?? [])],
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      secretEncrypted: seal(secret, key),
      secretHint: secretHint(secret),
    });
    await this.em.flush();
    return Object.assign(endpoint, { secret }) as WebhookEndpointWithSecret;
  }

  /** Changes the fields sent; a new URL is checked as on create. Disabling fails the pending deliveries; enabling clears disabledReason. */
  async update(actor: Actor, id: string, input: UpdateWebhookEndpointInput): Promise<WebhookEndpoint> {
    authorize(actor, 'webhooks.manage');
    const endpoint = await this.get(actor, id);
    if (input.url !== undefined) {
      await this.checkUrl(input.url);
      endpoint.url = input.url;
    }
    if (input.eventTypes !== undefined) endpoint.eventTypes = [...new Set(input.eventTypes)];
    if (input.description !== undefined) endpoint.description = input.description;
    const disabling = input.enabled === false && endpoint.enabled;
    if (input.enabled === true) {
      endpoint.enabled = true;
      endpoint.disabledReason = null;
      endpoint.failingSince = null;
    }
    endpoint.updatedAt = new Date();
    await this.em.flush();
    if (disabling) {
      await disableEndpoint(this.em.fork(), endpoint.id, null, new Date());
      await this.em.refresh(endpoint);
    }
    return endpoint;
  }

  /** Deletes the endpoint and its deliveries. */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'webhooks.manage');
    const endpoint = await this.get(actor, id);
    await this.em.remove(endpoint).flush();
  }

  /** A new secret, answered once; the old one keeps signing alongside it for 24 hours. */
  async rotateSecret(actor: Actor, id: string): Promise<WebhookEndpointWithSecret> {
    authorize(actor, 'webhooks.manage');
    const endpoint = isUuid(id) ? await this.em.findOne(WebhookEndpoint, { id, organization: actor.organizationId }, { populate: ['secretEncrypted'] }) : null;
    if (!endpoint) throw AppError.notFound('Webhook endpoint');
    const key = this.requireKey();
    // The secret kept for the overlap must open with the key the new one is sealed with: a wrong key
    // (CredentialsError, 503) changes nothing rather than seal a secret no other one shares a key with.
    open(endpoint.secretEncrypted, key);
    const secret = newWebhookSecret();
    const now = this.options.clock?.() ?? new Date();
    endpoint.previousSecretEncrypted = endpoint.secretEncrypted;
    endpoint.previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    endpoint.secretEncrypted = seal(secret, key);
    endpoint.secretHint = secretHint(secret);
    endpoint.updatedAt = new Date();
    await this.em.flush();
    return Object.assign(endpoint, { secret }) as WebhookEndpointWithSecret;
  }

  /** The organization's endpoints by id, in one statement; ids of other organizations are left out. */
  async endpointsFor(actor: Actor, ids: readonly string[]): Promise<Map<string, WebhookEndpoint>> {
    const wanted = ids.filter(isUuid);
    if (wanted.length === 0) return new Map();
    const found = await this.em.find(WebhookEndpoint, { organization: actor.organizationId, id: { $in: wanted } });
    return new Map(found.map((endpoint) => [endpoint.id, endpoint]));
  }

  private requireKey(): Buffer {
    const key = this.options.credentialsKey();
    if (!key) {
      throw new AppError(
        'CONFLICT',
        'Webhook endpoints need CREDENTIALS_KEY: the operator sets it (32 bytes, e.g. `openssl rand -base64 32`) to seal signing secrets',
      );
    }
    return key;
  }

  /** https with a host that resolves only to public addresses; http and private addresses only with WEBHOOK_ALLOW_PRIVATE. */
  private async checkUrl(raw: string): Promise<void> {
    const problem = await outboundUrlProblem(raw, this.options.allowPrivate);
    if (!problem) return;
    const error = new AppError('BAD_USER_INPUT', problem.message, [{ field: 'url', message: problem.message }]);
    // One message whatever the reason (no DNS oracle); the reason is logged with the request id.
    throw problem.detail ? Object.assign(error, { logDetail: { field: 'url', reason: problem.detail } }) : error;
  }
}
