import type { Opt } from '@mikro-orm/core';
import { Entity, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { FlowEdge, FlowNode } from './call-flow.types.js';

/** A graph of nodes and edges that a call walks. */
@ObjectType({ description: 'A call flow: the nodes a call walks and the edges between them' })
@Entity({ tableName: 'call_flows' })
export class CallFlow extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description: (string & Opt) | null = null;

  @Field(() => [FlowNode])
  @Property({ type: 'json' })
  nodes!: FlowNode[];

  @Field(() => [FlowEdge])
  @Property({ type: 'json' })
  edges!: FlowEdge[];
}
