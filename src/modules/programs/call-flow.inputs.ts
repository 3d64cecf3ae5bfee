import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsEnum, IsObject, IsOptional, IsString, IsUUID, Length, MaxLength, ValidateNested } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { NamedRules, OptionalNonNull, Rules } from '../../common/validation.js';
import { FlowNodeType } from './program.enums.js';

// Shapes are checked here; rules across nodes (unique ids, one start, edges) in CallFlowService.

@InputType({ description: 'A node of a call flow' })
export class CallFlowNodeInput {
  @Field({ description: 'Unique within the flow; 1 to 64 characters' })
  @Length(1, 64)
  @IsString()
  id!: string;

  @Field(() => FlowNodeType)
  @IsEnum(FlowNodeType)
  type!: FlowNodeType;

  @Field(() => ID, { nullable: true, description: 'An agent of the organization' })
  @IsOptional()
  @IsUUID()
  @IsString()
  agentId?: string | null;

  @Field(() => String, { nullable: true, description: 'At most 255 characters' })
  @IsOptional()
  @MaxLength(255)
  @IsString()
  label?: string | null;

  @Field(() => String, { nullable: true, description: 'Where a transfer node bridges the call: E.164, e.g. +14155550100' })
  @IsOptional()
  @MaxLength(16)
  @IsString()
  transferTo?: string | null;
}

@InputType({ description: 'An edge between two nodes of a call flow' })
export class CallFlowEdgeInput {
  @Field({ description: 'Node id' })
  @Length(1, 64)
  @IsString()
  from!: string;

  @Field({ description: 'Node id' })
  @Length(1, 64)
  @IsString()
  to!: string;

  @Field(() => String, {
    nullable: true,
    description:
      'When the edge is taken: answered, voicemail, digit:<key>, said:<words>, resolved, unresolved or no_input; none: when no other edge of the node matches',
  })
  @IsOptional()
  @MaxLength(64)
  @IsString()
  condition?: string | null;
}

/** The rules of a flow's graph, in one place for CreateCallFlowInput and UpdateCallFlowInput. */
const CallFlowRules = {
  nodes: () =>
    Rules(
      ValidateNested({ each: true }),
      Type(() => CallFlowNodeInput),
      IsObject({ each: true }),
      ArrayMaxSize(200),
      ArrayMinSize(1),
      IsArray(),
    ),
  edges: () =>
    Rules(
      ValidateNested({ each: true }),
      Type(() => CallFlowEdgeInput),
      IsObject({ each: true }),
      ArrayMaxSize(1000),
      IsArray(),
    ),
};

@InputType({ description: 'A new call flow: 1 to 200 nodes, exactly one of type start' })
export class CreateCallFlowInput {
  @Field({ description: '1 to 255 characters' })
  @NamedRules.name()
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 2000 characters' })
  @IsOptional()
  @NamedRules.description()
  description?: string | null;

  @Field(() => [CallFlowNodeInput])
  @CallFlowRules.nodes()
  nodes!: CallFlowNodeInput[];

  @Field(() => [CallFlowEdgeInput], { nullable: true, description: 'At most 1000; default none' })
  @OptionalNonNull()
  @CallFlowRules.edges()
  edges?: CallFlowEdgeInput[];
}

@InputType({ description: 'Changes the fields that are sent; nodes and edges are checked together' })
export class UpdateCallFlowInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @NamedRules.name()
  name?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @NamedRules.description()
  description?: string | null;

  @Field(() => [CallFlowNodeInput], { nullable: true })
  @OptionalNonNull()
  @CallFlowRules.nodes()
  nodes?: CallFlowNodeInput[];

  @Field(() => [CallFlowEdgeInput], { nullable: true })
  @OptionalNonNull()
  @CallFlowRules.edges()
  edges?: CallFlowEdgeInput[];
}
