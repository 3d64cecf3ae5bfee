import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsEnum, IsObject, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { Field, InputType, ObjectType } from 'type-graphql';
import { conditionHolds, parseEdgeCondition } from '../programs/edge-condition.js';
import { RecordingChannels } from './recording.enums.js';

/** What refuses consent when the program names nothing: pressing 2, or saying no. */
export const DEFAULT_REFUSE_ON = ['digit:2', 'said:no'];

/** What parseEdgeCondition reads as a digit: or said: condition. */
const REFUSAL = /^\s*(digit:[0-9*#]|said:.*\S.*)\s*$/;

@ObjectType('RecordingConsent', { description: 'A sentence spoken before the call is recorded; an answer in refuseOn leaves the call unrecorded' })
export class RecordingConsent {
  @Field({ description: 'What the callee hears first, e.g. “This call may be recorded. Press 2 or say no to refuse.”' })
  sentence!: string;

  @Field(() => [String], {
    description: 'Answers that refuse: digit:<key> (the first key pressed) or said:<words> (contained in what was said); default digit:2 and said:no',
  })
  refuseOn!: string[];
}

@ObjectType('ProgramRecording', { description: 'Whether and how the program’s answered calls are recorded' })
export class ProgramRecording {
  @Field({ description: 'false (or no setting) records nothing' })
  enabled!: boolean;

  @Field(() => RecordingChannels)
  channels!: RecordingChannels;

  @Field(() => RecordingConsent, { nullable: true, description: 'Without it, recording starts when the call is answered' })
  consent!: RecordingConsent | null;
}

@InputType({ description: 'A consent sentence spoken first; silence or any other answer counts as consent' })
export class RecordingConsentInput {
  @Field({ description: '1 to 500 characters' })
  @Length(1, 500)
  @IsString()
  sentence!: string;

  @Field(() => [String], { nullable: true, description: '1 to 5 of digit:<key> or said:<words>; default ["digit:2", "said:no"]' })
  @IsOptional()
  @Matches(REFUSAL, { each: true, message: 'each refuseOn entry must be digit:<one of 0-9 * #> or said:<words>' })
  @Length(1, 100, { each: true })
  @IsString({ each: true })
  @ArrayMaxSize(5)
  @ArrayMinSize(1)
  @IsArray()
  refuseOn?: string[] | null;
}

@InputType({ description: 'Record the program’s answered calls (off by default)' })
export class ProgramRecordingInput {
  @Field({ description: 'true records the program’s answered calls; false turns recording off' })
  @IsBoolean()
  enabled!: boolean;

  @Field(() => RecordingChannels, { nullable: true, description: 'mono (default) or dual' })
  @IsOptional()
  @IsEnum(RecordingChannels, { message: 'channels must be mono or dual' })
  channels?: RecordingChannels | null;

  @Field(() => RecordingConsentInput, { nullable: true })
  @IsOptional()
  @ValidateNested()
  @Type(() => RecordingConsentInput)
  @IsObject()
  consent?: RecordingConsentInput | null;
}

/** The setting as it is stored on the program (defaults filled in); null when recording is off. */
export function programRecordingOf(input: ProgramRecordingInput | ProgramRecording | null | undefined): ProgramRecording | null {
  if (!input) return null;
  const consent = input.consent ? { sentence: input.consent.sentence, refuseOn: [...(input.consent.refuseOn ?? DEFAULT_REFUSE_ON)] } : null;
  return { enabled: input.enabled, channels: input.channels ?? RecordingChannels.mono, consent };
}

/** Whether the callee's answer to the consent sentence refuses it; silence consents. */
export function refusesConsent(refuseOn: readonly string[], answer: { speech: string | null; digits: string | null }): boolean {
  // Words are matched whole ("said:no" is not refused by "I know"), unlike a flow edge's said: which matches a fragment.
  const speech = ` ${(answer.speech ?? '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()} `;
  return refuseOn.some((text) => {
    const condition = parseEdgeCondition(text);
    if (condition?.kind === 'digit') return conditionHolds(condition, answer);
    if (condition?.kind !== 'said') return false;
    const words = condition.words.replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
    return words.length > 0 && speech.includes(` ${words} `);
  });
}
