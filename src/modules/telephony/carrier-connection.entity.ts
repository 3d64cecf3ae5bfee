import type { Opt } from '@mikro-orm/core';
import { Entity, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { CarrierKindEnum, type CarrierKind } from './telephony.enums.js';

/**
 * An organization's account at a carrier. The auth token is write-only: it is stored encrypted
 * (AES-256-GCM under CREDENTIALS_KEY) and only its last four characters are ever shown.
 */
@ObjectType({ description: 'An organization’s account at a carrier (the auth token is never shown, only its last 4 characters)' })
@Entity({ tableName: 'carrier_connections' })
@Unique({ properties: ['organization', 'carrier', 'accountSid'] })
export class CarrierConnection extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Field(() => CarrierKindEnum, { description: 'The carrier the account is at' })
  // A registered carrier module's kind: the service checks it against the gateway's modules.
  @Property({ columnType: 'text' })
  carrier!: CarrierKind;

  @Field({ description: 'The account identifier at the carrier (Twilio: AC followed by 32 hex digits; Telnyx: the account id, a UUID)' })
  @Property({ length: 64 })
  accountSid!: string;

  /** `v1:<iv>:<tag>:<ciphertext>`, base64; see credentials.ts. */
  @Property({ type: 'text', lazy: true })
  authTokenEncrypted!: string;

  @Field({ description: 'The last 4 characters of the auth token' })
  @Property({ length: 4 })
  authTokenLast4!: string;

  /** The SharedKey secret of a Twilio Webhooks Rule, sealed like the auth token; null when webhooks are signed with the auth token. */
  @Property({ type: 'text', lazy: true, nullable: true })
  webhookKeyEncrypted: (string & Opt) | null = null;

  @Field(() => String, {
    nullable: true,
    description:
      'The last 4 characters of the webhook signing key (a Twilio Webhooks Rule’s SharedKey secret); null when webhooks are signed with the auth token',
  })
  @Property({ length: 4, nullable: true })
  webhookKeyLast4: (string & Opt) | null = null;

  @Field(() => String, {
    nullable: true,
    description: 'Telnyx: the account’s public key its webhooks are signed with (Ed25519, base64); null on Twilio, which signs with the auth token',
  })
  @Property({ length: 64, nullable: true })
  publicKey: (string & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'Telnyx: the TeXML Application the calls are placed with; null on Twilio' })
  @Property({ length: 64, nullable: true })
  applicationId: (string & Opt) | null = null;

  @Field(() => Int, { description: 'New calls per second this account may start, across all replicas (Twilio: 1 unless raised)' })
  @Property({ type: 'integer', default: 1 })
  callsPerSecond: number & Opt = 1;
}
