import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { CarrierKind } from './telephony.enums.js';

/**
 * An organization's account at a carrier. The auth token is write-only: it is stored encrypted
 * (AES-256-GCM under CREDENTIALS_KEY) and only its last four characters are ever shown.
 */
@ObjectType({ description: 'An organization’s account at a carrier (the auth token is never shown, only its last 4 characters)' })
@Entity({ tableName: 'carrier_connections' })
@Unique({ properties: ['organization', 'carrier', 'accountSid'] })
export class CarrierConnection extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Field(() => CarrierKind, { description: 'The carrier the account is at' })
  @Enum({ items: () => CarrierKind })
  carrier!: CarrierKind;

  @Field({ description: 'The account identifier at the carrier (Twilio: AC followed by 32 hex digits)' })
  @Property({ length: 64 })
  accountSid!: string;

  /** `v1:<iv>:<tag>:<ciphertext>`, base64; see credentials.ts. */
  @Property({ type: 'text', lazy: true })
  authTokenEncrypted!: string;

  @Field({ description: 'The last 4 characters of the auth token' })
  @Property({ length: 4 })
  authTokenLast4!: string;

  @Field(() => Int, { description: 'New calls per second this account may start, across all replicas (Twilio: 1 unless raised)' })
  @Property({ type: 'integer', default: 1 })
  callsPerSecond: number & Opt = 1;
}
