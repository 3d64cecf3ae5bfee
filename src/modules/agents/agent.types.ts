import { ToolCall } from '../tools/tool-call.entity.js';
import type { ToolCallRecord } from '../tools/tool-call.store.js';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Extensions, Field, Int, ObjectType } from 'type-graphql';
import { LARGE_VALUE } from '../../platform/answer-budget.js';
import { InterruptionMode, PipelineMode, StsProvider, SttProvider, TtsProvider, TurnDetectionType, TurnEagerness } from './agent.enums.js';

@ObjectType({ description: 'The language model of an agent' })
export class ModelConfig {
  @Field({ description: '<provider>/<model_name>' })
  model!: string;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'temperature, maxTokens, topP, ...' })
  modelSettings?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  providerOptions?: Record<string, unknown> | null;
}

@ObjectType({ description: 'When the caller speaking over the agent cuts its reply' })
export class Interruptions {
  @Field(() => InterruptionMode)
  mode!: InterruptionMode;

  @Field(() => Int)
  minWords!: number;

  @Field(() => Int)
  minSpeechMs!: number;

  @Field(() => [String], { nullable: true, description: 'null: the default back-channels of the agent’s language (docs/voice.md)' })
  ignore!: string[] | null;
}

@ObjectType({ description: 'How the end of the caller’s turn is found' })
export class TurnDetection {
  @Field(() => TurnDetectionType)
  type!: TurnDetectionType;

  @Field(() => TurnEagerness, { nullable: true })
  eagerness!: TurnEagerness | null;

  @Field(() => Int, { nullable: true })
  silenceMs!: number | null;
}

@ObjectType()
export class VoiceConfig {
  @Field(() => PipelineMode)
  pipelineMode!: PipelineMode;

  @Field(() => String, { nullable: true })
  voiceId?: string | null;

  @Field(() => StsProvider, { nullable: true })
  stsProvider?: StsProvider | null;

  @Field(() => SttProvider, { nullable: true })
  sttProvider?: SttProvider | null;

  @Field(() => String, { nullable: true })
  sttModel?: string | null;

  @Field(() => TtsProvider, { nullable: true })
  ttsProvider?: TtsProvider | null;

  @Field(() => String, { nullable: true })
  ttsModel?: string | null;

  @Field(() => String, { nullable: true })
  language?: string | null;

  @Field(() => Interruptions, { nullable: true, description: 'null: mode words, minWords 1, minSpeechMs 0, the language’s back-channels ignored' })
  interruptions?: Interruptions | null;

  @Field(() => TurnDetection, { nullable: true, description: 'null: silence, the provider’s default pause' })
  turnDetection?: TurnDetection | null;
}

@ObjectType()
export class MemoryConfig {
  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => Int, { description: 'How many earlier messages the model sees, 0 to 100; 10 when the agent was created without it' })
  lastMessages!: number;

  @Field(() => Boolean, { nullable: true })
  semanticRecall?: boolean | null;
}

/** Stored shape of knowledgeBaseConfig, defaults applied. */
export interface KnowledgeBaseConfig {
  knowledgeBaseId: string;
  topK: number;
  similarityThreshold: number;
}

@ObjectType({ description: 'A rule used to evaluate how a conversation ended' })
export class ResolutionCriterion {
  @Field()
  label!: string;

  @Field()
  description!: string;
}

@ObjectType({ description: 'Whether an ended conversation met one resolution criterion' })
export class CriterionOutcome {
  @Field()
  label!: string;

  @Field(() => Boolean)
  met!: boolean;

  @Field()
  explanation!: string;
}

@ObjectType({ description: 'Tokens a model reply cost' })
export class Usage {
  @Field(() => Int) inputTokens!: number;
  @Field(() => Int) outputTokens!: number;
  @Field(() => Int) totalTokens!: number;
  @Field() model!: string;
}

@ObjectType({ description: 'The answer to a test message or a conversation message' })
export class MessageReply {
  @Field()
  @Extensions(LARGE_VALUE)
  response!: string;

  @Field(() => Usage)
  usage!: Usage;

  @Field(() => [ToolCall], {
    description:
      'The tools the agent called for this reply, in order (empty when none); a conversation keeps them (Conversation.toolCalls), a test message does not',
  })
  toolCalls!: ToolCallRecord[];
}
