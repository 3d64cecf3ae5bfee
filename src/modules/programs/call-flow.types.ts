import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { FlowNodeType } from './program.enums.js';

/** A step of a call; auto-pause rules point at node ids. */
@ObjectType('FlowNode')
@InputType('FlowNodeInput')
export class FlowNode {
  @Field({ description: 'Unique within the flow; 1 to 64 characters' })
  id!: string;

  @Field(() => FlowNodeType)
  type!: FlowNodeType;

  @Field(() => ID, { nullable: true, description: 'The agent that speaks at this node' })
  agentId?: string | null;

  @Field(() => String, { nullable: true, description: 'What a say or voicemail node speaks; what an ask node asks' })
  label?: string | null;

  @Field(() => String, { nullable: true, description: 'Where a transfer node bridges the call (E.164)' })
  transferTo?: string | null;
}

@ObjectType('FlowEdge')
@InputType('FlowEdgeInput')
export class FlowEdge {
  @Field({ description: 'Node id' })
  from!: string;

  @Field({ description: 'Node id' })
  to!: string;

  @Field(() => String, {
    nullable: true,
    description: 'When the edge is taken: answered, voicemail, digit:<key>, said:<words>, resolved, unresolved, no_input; none: otherwise',
  })
  condition?: string | null;
}
