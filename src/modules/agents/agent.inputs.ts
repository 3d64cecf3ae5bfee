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

// Nested objects: @IsObject (bottom) runs first, then ValidateNested checks the inner class.

@InputType({ description: 'A new agent; it starts as a draft at version 1' })
export class CreateAgentInput {
  @Field({ description: '1 to 128 characters' })
  @Length(1, 128)
  @IsString()
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 2000 characters' })
  @IsOptional()
  @MaxLength(2000)
  @IsString()
  description?: string | null;

  @Field({ description: 'The system prompt, 1 to 10000 characters' })
  @Length(1, 10000)
  @IsString()
  instructions!: string;

  @Field(() => String, { nullable: true, description: 'Business rules given to the model and never shown; at most 10000 characters' })
  @IsOptional()
  @MaxLength(10000)
  @IsString()
  policy?: string | null;

  @Field(() => ModelConfigInput)
  @ValidateNested()
  @Type(() => ModelConfigInput)
  @IsObject()
  modelConfig!: ModelConfigInput;

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

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Free-form' })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown> | null;

  @Field(() => KnowledgeBaseConfigInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => KnowledgeBaseConfigInput)
  @IsObject()
  knowledgeBaseConfig?: KnowledgeBaseConfigInput | null;

  @Field(() => [ResolutionCriterionInput], { nullable: true, description: 'At most 5' })
  @OptionalNonNull()
  @ValidateNested({ each: true })
  @Type(() => ResolutionCriterionInput)
  @ArrayMaxSize(5)
  @IsArray()
  resolutionCriteria?: ResolutionCriterionInput[];
}
