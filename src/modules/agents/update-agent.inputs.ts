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

/** The limits of CreateAgentInput; fields left out keep their values, null clears a nullable one. */
@InputType({ description: 'Changes to an agent; each update adds one to its version' })
export class UpdateAgentInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @AgentRules.name()
  name?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @AgentRules.description()
  description?: string | null;

  @Field({ nullable: true })
  @OptionalNonNull()
  @AgentRules.instructions()
  instructions?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @AgentRules.policy()
  policy?: string | null;

  @Field(() => ModelConfigInput, { nullable: true })
  @OptionalNonNull()
  @AgentRules.modelConfig()
  modelConfig?: ModelConfigInput;

  @Field(() => VoiceConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.voiceConfig()
  voiceConfig?: VoiceConfigInput | null;

  @Field(() => MemoryConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.memoryConfig()
  memoryConfig?: MemoryConfigInput | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @IsOptional()
  @AgentRules.metadata()
  metadata?: Record<string, unknown> | null;

  @Field(() => KnowledgeBaseConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.knowledgeBaseConfig()
  knowledgeBaseConfig?: KnowledgeBaseConfigInput | null;

  @Field(() => [ResolutionCriterionInput], { nullable: true })
  @OptionalNonNull()
  @AgentRules.resolutionCriteria()
  resolutionCriteria?: ResolutionCriterionInput[];

  @Field(() => AnalysisPlanInput, { nullable: true, description: 'What the agent’s model fills when one of its calls ends; null for nothing' })
  @IsOptional()
  @AgentRules.analysisPlan()
  analysisPlan?: AnalysisPlanInput | null;
}
