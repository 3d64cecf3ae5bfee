import { ArrayMaxSize, IsArray, IsEnum, IsInt, IsString, Length, Matches, Max, Min } from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { InterruptionMode, TurnDetectionType, TurnEagerness } from './agent.enums.js';

/** The bounds of voiceConfig.interruptions and voiceConfig.turnDetection, the same on both doors. */
export const INTERRUPTION_LIMITS = { ignoreEntries: 50, ignoreLength: 40, minWords: 10, minSpeechMs: 5000 } as const;
export const SILENCE_MS = { min: 100, max: 5000 } as const;

@InputType({ description: 'When the caller speaking over the agent cuts its reply (streaming; sts on OpenAI and, for never, Google)' })
export class InterruptionsInput {
  @Field(() => InterruptionMode, { nullable: true, description: 'words (the default), any, or never' })
  @OptionalNonNull()
  @IsEnum(InterruptionMode)
  mode?: InterruptionMode;

  @Field(() => Int, {
    nullable: true,
    description: `Words not in the ignore list that cut the reply (mode words), 1 to ${INTERRUPTION_LIMITS.minWords}; default 1`,
  })
  @OptionalNonNull()
  @Max(INTERRUPTION_LIMITS.minWords)
  @Min(1)
  @IsInt()
  minWords?: number;

  @Field(() => Int, {
    nullable: true,
    description: `The caller's speech, from their turn's first recognized word, before it may cut the reply (mode words), 0 to ${INTERRUPTION_LIMITS.minSpeechMs} ms; default 0`,
  })
  @OptionalNonNull()
  @Max(INTERRUPTION_LIMITS.minSpeechMs)
  @Min(0)
  @IsInt()
  minSpeechMs?: number;

  @Field(() => [String], {
    nullable: true,
    description: `Back-channels that never cut the reply (words or short phrases, at most ${INTERRUPTION_LIMITS.ignoreEntries} of 1 to ${INTERRUPTION_LIMITS.ignoreLength} characters); unset: the default list of the agent's language`,
  })
  @OptionalNonNull()
  @Matches(/\p{L}/u, { each: true, message: 'each entry of ignore must contain a letter' })
  @Length(1, INTERRUPTION_LIMITS.ignoreLength, { each: true })
  @IsString({ each: true })
  @ArrayMaxSize(INTERRUPTION_LIMITS.ignoreEntries)
  @IsArray()
  ignore?: string[];
}

@InputType({ description: 'How the end of the caller’s turn is found (sts on OpenAI)' })
export class TurnDetectionInput {
  @Field(() => TurnDetectionType, { description: 'silence or semantic' })
  @IsEnum(TurnDetectionType)
  type!: TurnDetectionType;

  @Field(() => TurnEagerness, { nullable: true, description: 'type semantic only: low, medium, high or auto (the default)' })
  @OptionalNonNull()
  @IsEnum(TurnEagerness)
  eagerness?: TurnEagerness;

  @Field(() => Int, {
    nullable: true,
    description: `type silence only: the pause that ends the turn, ${SILENCE_MS.min} to ${SILENCE_MS.max} ms; the provider's default when unset`,
  })
  @OptionalNonNull()
  @Max(SILENCE_MS.max)
  @Min(SILENCE_MS.min)
  @IsInt()
  silenceMs?: number;
}
