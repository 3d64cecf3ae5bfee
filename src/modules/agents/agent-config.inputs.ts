import { GraphQLJSONObject } from 'graphql-scalars';
import { IsBoolean, IsEnum, IsInt, IsNumber, IsObject, IsOptional, IsString, IsUUID, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { Field, Float, ID, InputType, Int } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { PipelineMode, StsProvider, SttProvider, TtsProvider } from './agent.enums.js';
import { InterruptionsInput, TurnDetectionInput } from './voice-turns.inputs.js';
import { nestedInput } from './nested-input.js';

@InputType()
export class ModelConfigInput {
  @Field({ description: '<provider>/<model_name>, e.g. builtin/echo or openai/gpt-4o-mini' })
  @Length(1, 200)
  @IsString()
  model!: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'temperature, maxOutputTokens (maxTokens; at most MODEL_MAX_OUTPUT_TOKENS), topP, ...' })
  @IsOptional()
  @IsObject()
  modelSettings?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'Per provider, allow-listed: openai {user, reasoningEffort, textVerbosity}, anthropic {sendReasoning}, openaiCompatible {user, reasoningEffort, textVerbosity}',
  })
  @IsOptional()
  @IsObject()
  providerOptions?: Record<string, unknown> | null;
}

@InputType()
export class VoiceConfigInput {
  @Field(() => PipelineMode)
  @IsEnum(PipelineMode)
  pipelineMode!: PipelineMode;

  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 200)
  @IsString()
  voiceId?: string;

  @Field(() => StsProvider, { nullable: true })
  @OptionalNonNull()
  @IsEnum(StsProvider)
  stsProvider?: StsProvider;

  @Field(() => SttProvider, { nullable: true })
  @OptionalNonNull()
  @IsEnum(SttProvider)
  sttProvider?: SttProvider;

  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 100)
  @IsString()
  sttModel?: string;

  @Field(() => TtsProvider, { nullable: true })
  @OptionalNonNull()
  @IsEnum(TtsProvider)
  ttsProvider?: TtsProvider;

  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 100)
  @IsString()
  ttsModel?: string;

  @Field({ nullable: true })
  @OptionalNonNull()
  @Matches(/^(multi|[a-z]{2,3}(-[A-Za-z0-9]{2,8})*)$/, { message: 'language must be a BCP-47 tag such as en, en-US or fr, or multi' })
  @Length(2, 35)
  @IsString()
  language?: string;

  @Field(() => InterruptionsInput, {
    nullable: true,
    description: 'When the caller speaking over the agent cuts its reply; unset: mode words, the language’s back-channels ignored',
  })
  @OptionalNonNull()
  @nestedInput(InterruptionsInput)
  interruptions?: InterruptionsInput;

  @Field(() => TurnDetectionInput, { nullable: true, description: 'How the end of the caller’s turn is found; unset: silence, the provider’s default' })
  @OptionalNonNull()
  @nestedInput(TurnDetectionInput)
  turnDetection?: TurnDetectionInput;
}

@InputType()
export class MemoryConfigInput {
  @Field()
  @IsBoolean()
  enabled!: boolean;

  @Field(() => Int, { nullable: true, description: '0 to 100 earlier messages the model sees; 10 when unset' })
  @OptionalNonNull()
  @Max(100)
  @Min(0)
  @IsInt()
  lastMessages?: number;

  @Field({ nullable: true })
  @OptionalNonNull()
  @IsBoolean()
  semanticRecall?: boolean;
}

@InputType()
export class KnowledgeBaseConfigInput {
  @Field(() => ID, { description: 'A knowledge base of the same organization' })
  @IsUUID()
  @IsString()
  knowledgeBaseId!: string;

  @Field(() => Int, { nullable: true, description: 'Passages to retrieve, 1 to 20; default 3' })
  @OptionalNonNull()
  @Max(20)
  @Min(1)
  @IsInt()
  topK?: number;

  @Field(() => Float, { nullable: true, description: 'Minimum similarity, 0 to 1; default 0' })
  @OptionalNonNull()
  @Max(1)
  @Min(0)
  @IsNumber()
  similarityThreshold?: number;
}

@InputType()
export class ResolutionCriterionInput {
  @Field({ description: '1 to 100 characters' })
  @Length(1, 100)
  @IsString()
  label!: string;

  @Field({ description: 'At most 1000 characters' })
  @MaxLength(1000)
  @IsString()
  description!: string;
}
