import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsObject, IsOptional, IsString, Length, MaxLength, ValidateNested } from 'class-validator';
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

/** The limits of CreateAgentInput; fields left out keep their values, null clears a nullable one. */
@InputType({ description: 'Changes to an agent; each update adds one to its version' })
export class UpdateAgentInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 128)
  @IsString()
  name?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(2000)
  @IsString()
  description?: string | null;

  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 10000)
  @IsString()
  instructions?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(10000)
  @IsString()
  policy?: string | null;

  @Field(() => ModelConfigInput, { nullable: true })
  @OptionalNonNull()
  @ValidateNested()
  @Type(() => ModelConfigInput)
  @IsObject()
  modelConfig?: ModelConfigInput;

  @Field(() => VoiceConfigInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => VoiceConfigInput)
  @IsObject()
  voiceConfig?: VoiceConfigInput | null;

  @Field(() => MemoryConfigInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => MemoryConfigInput)
  @IsObject()
  memoryConfig?: MemoryConfigInput | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown> | null;

  @Field(() => KnowledgeBaseConfigInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => KnowledgeBaseConfigInput)
  @IsObject()
  knowledgeBaseConfig?: KnowledgeBaseConfigInput | null;

  @Field(() => [ResolutionCriterionInput], { nullable: true })
  @OptionalNonNull()
  @ValidateNested({ each: true })
  @Type(() => ResolutionCriterionInput)
  @ArrayMaxSize(5)
  @IsArray()
  resolutionCriteria?: ResolutionCriterionInput[];
}
