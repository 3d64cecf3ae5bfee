import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';

/** Where a number on the do-not-call list came from. */
export enum DoNotCallSource {
  manual = 'manual',
  import = 'import',
  call = 'call',
}
registerEnumType(DoNotCallSource, {
  name: 'DoNotCallSource',
  description: 'Where a number on the do-not-call list came from',
  valuesConfig: {
    manual: { description: 'Added by a user, one number at a time' },
    import: { description: 'Added by a CSV import' },
    call: { description: 'The person asked on a call not to be called again' },
  },
});

/**
 * A number the organization never calls again, whichever contact, list or program it comes from:
 * every dial checks it by number at the moment the call is placed.
 */
@ObjectType({ description: 'A number on the organization’s do-not-call list' })
@Entity({ tableName: 'do_not_call_entries' })
@Unique({ properties: ['organization', 'phone'] })
export class DoNotCallEntry extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field({ description: 'The suppressed number, E.164' })
  @Property({ length: 16 })
  phone!: string;

  @Field(() => DoNotCallSource)
  @Enum({ items: () => DoNotCallSource })
  source!: DoNotCallSource;

  @Field(() => String, { nullable: true, description: 'Why the number is on the list, as the user wrote it' })
  @Property({ type: 'string', length: 255, nullable: true })
  note: (string & Opt) | null = null;

  /** Kept as ids, so a deleted call or contact leaves the entry readable (and the number suppressed). */
  @Field(() => ID, { nullable: true, description: 'The call the person opted out on (source call)' })
  @Property({ type: 'uuid', nullable: true })
  callId: (string & Opt) | null = null;

  @Field(() => ID, { nullable: true, description: 'The contact who opted out on the call (source call)' })
  @Property({ type: 'uuid', nullable: true })
  contactId: (string & Opt) | null = null;
}
