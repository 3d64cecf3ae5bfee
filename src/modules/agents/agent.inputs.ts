import { IsOptional } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import {
  KnowledgeBaseConfigInput,
  MemoryConfigInput,
  ModelConfigInput,
  ResolutionCriterionInput,
  VoiceConfigInput,
} from './agent-config.inputs.js';
import { AgentRules } from './agent.rules.js';
import { AnalysisPlanInput } from './analysis/analysis.types.js';

@InputType({ description: 'A new agent; it starts as a draft at version 1' })
export class CreateAgentInput {
  @Field({ description: '1 to 128 characters' })
  @AgentRules.name()
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 2000 characters' })
  @IsOptional()
  @AgentRules.description()
  description?: string | null;

  @Field({ description: 'The system prompt, 1 to 10000 characters' })
  @AgentRules.instructions()
  instructions!: string;

  @Field(() => String, { nullable: true, description: 'Business rules given to the model and never shown; at most 10000 characters' })
  @IsOptional()
  @AgentRules.policy()
  policy?: string | null;

  @Field(() => ModelConfigInput)
  @AgentRules.modelConfig()
  modelConfig!: ModelConfigInput;

  @Field(() => VoiceConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.voiceConfig()
  voiceConfig?: VoiceConfigInput | null;

  @Field(() => MemoryConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.memoryConfig()
  memoryConfig?: MemoryConfigInput | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Free-form' })
  @IsOptional()
  @AgentRules.metadata()
  metadata?: Record<string, unknown> | null;

  @Field(() => KnowledgeBaseConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.knowledgeBaseConfig()
  knowledgeBaseConfig?: KnowledgeBaseConfigInput | null;

  @Field(() => [ResolutionCriterionInput], { nullable: true, description: 'At most 5' })
  @OptionalNonNull()
  @AgentRules.resolutionCriteria()
  resolutionCriteria?: ResolutionCriterionInput[];

  @Field(() => AnalysisPlanInput, { nullable: true, description: 'What the agent’s model fills when one of its calls ends; null for nothing' })
  @IsOptional()
  @AgentRules.analysisPlan()
  analysisPlan?: AnalysisPlanInput | null;
}
