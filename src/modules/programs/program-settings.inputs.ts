import { LiveTriggerSource } from './program.enums.js';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { Field, InputType, Int } from 'type-graphql';

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
const HH_MM_MESSAGE = '$property must be a time HH:MM (00:00 to 23:59)';
/** An end time may also be 24:00, the end of the day (the end is exclusive, so 23:59 would leave a minute out). */
const END_TIME = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;
const END_TIME_MESSAGE = '$property must be a time HH:MM (00:01 to 24:00)';

// The rules that span fields (endTime after startTime, nodeId in the flow) are in ProgramService.

@InputType({ description: 'When calls may be placed, in each contact’s own time zone' })
export class ProgramCallingWindowInput {
  @Field({ description: 'HH:MM, 24-hour clock' })
  @Matches(HH_MM, { message: HH_MM_MESSAGE })
  @IsString()
  startTime!: string;

  @Field({ description: 'HH:MM, after startTime (exclusive); 24:00 is the end of the day' })
  @Matches(END_TIME, { message: END_TIME_MESSAGE })
  @IsString()
  endTime!: string;

  @Field(() => [Int], { description: 'ISO weekdays, 1 = Monday … 7 = Sunday; at least one, no repeats' })
  @ArrayUnique()
  @Max(7, { each: true })
  @Min(1, { each: true })
  @IsInt({ each: true })
  @ArrayMaxSize(7)
  @ArrayMinSize(1)
  @IsArray()
  daysOfWeek!: number[];
}

@InputType()
export class ProgramRetryPolicyInput {
  @Field(() => Int, { description: '1 to 10' })
  @Max(10)
  @Min(1)
  @IsInt()
  maxAttempts!: number;

  @Field(() => Int, { description: '0 to 10080 minutes (a week)' })
  @Max(10080)
  @Min(0)
  @IsInt()
  retryDelayMinutes!: number;
}

@InputType({ description: 'What the simulated carrier’s caller says at the ask nodes of a simulated call' })
export class ProgramSimulatedCallerInput {
  @Field(() => [String], { description: '1 to 20 utterances of 1 to 500 characters, said in order at each ask node of a simulated call' })
  @MaxLength(500, { each: true })
  @MinLength(1, { each: true })
  @IsString({ each: true })
  @ArrayMaxSize(20)
  @ArrayMinSize(1)
  @IsArray()
  utterances!: string[];
}

@InputType()
export class ProgramAutoPauseRuleInput {
  @Field({ description: 'A node of the program’s flow' })
  @Length(1, 64)
  @IsString()
  nodeId!: string;

  @Field(() => Int, { description: 'At least 1' })
  @Min(1)
  @IsInt()
  threshold!: number;

  @Field({ description: 'A resume starts the count again' })
  @IsBoolean()
  resetOnResume!: boolean;
}

@InputType({ description: 'Required for live programs, not allowed for campaigns' })
export class ProgramLiveTriggerInput {
  @Field({ description: 'Name of the date attribute, 1 to 64 characters' })
  @Length(1, 64)
  @IsString()
  attribute!: string;

  @Field(() => LiveTriggerSource, { description: '"contact" or "entity"' })
  @IsIn(['contact', 'entity'])
  @IsString()
  source!: 'contact' | 'entity';

  @Field(() => String, { nullable: true, description: 'Required for source "entity"' })
  @IsOptional()
  @Length(1, 64)
  @IsString()
  entityType?: string | null;

  @Field(() => Int, { description: '-365 to 365 days relative to the date' })
  @Max(365)
  @Min(-365)
  @IsInt()
  offsetDays!: number;

  @Field({ description: 'HH:MM in the contact’s time zone' })
  @Matches(HH_MM, { message: HH_MM_MESSAGE })
  @IsString()
  timeOfDay!: string;
}
