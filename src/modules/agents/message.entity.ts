import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Extensions, Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { LARGE_VALUE } from '../../platform/answer-budget.js';
import { Organization } from '../organizations/organization.entity.js';
import { MessageRole } from './agent.enums.js';
import { Usage } from './agent.types.js';
import { Conversation } from './conversation.entity.js';

/** One turn of a conversation; `sequence` (1, 2, ...) makes the order certain, and is unique per conversation. */
@ObjectType({ description: 'A message of a conversation' })
@Entity({ tableName: 'messages' })
@Unique({ properties: ['conversation', 'sequence'] })
export class Message extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  @Index()
  organization!: Organization;

  @ManyToOne(() => Conversation, { deleteRule: 'cascade' })
  conversation!: Conversation;

  @Field(() => Int, { description: 'Position in the conversation, from 1' })
  @Property({ type: 'integer' })
  sequence!: number;

  @Field(() => MessageRole)
  @Enum({ items: () => MessageRole })
  role!: MessageRole;

  @Field()
  @Extensions(LARGE_VALUE)
  @Property({ type: 'text' })
  content!: string;

  @Field(() => Usage, { nullable: true })
  @Property({ type: 'json', nullable: true })
  usage: (Usage & Opt) | null = null;

  @Field(() => String, { nullable: true })
  @Property({ length: 255, nullable: true })
  model: (string & Opt) | null = null;

  @Field(() => Boolean, {
    description: 'A back-channel of the caller ("mhm", "yeah") said while the agent spoke: it did not cut the agent and was not answered',
  })
  @Property({ type: 'boolean', default: false })
  backChannel: boolean & Opt = false;

  @Field(() => ID)
  get conversationId(): string & Opt {
    return this.conversation.id;
  }
}
