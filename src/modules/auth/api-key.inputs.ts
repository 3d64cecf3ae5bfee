import { Transform } from 'class-transformer';
import { IsBoolean, IsDate, IsOptional, IsString, Length, Matches, MinDate } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { toDate } from '../../common/dates.js';

const PREFIX = /^[A-Za-z0-9_-]+$/;
const now = () => new Date();

@InputType({ description: 'A new API key' })
export class CreateApiKeyInput {
  @Field({ description: '1 to 255 characters' })
  @Length(1, 255)
  @IsString()
  name!: string;

  @Field({ description: 'Start of the key value: 1 to 20 letters, digits, "_" or "-"' })
  @Matches(PREFIX, { message: 'prefix may contain only letters, digits, "_" and "-"' })
  @Length(1, 20)
  @IsString()
  prefix!: string;

  @Field(() => Date, { nullable: true, description: 'When the key stops working; never when absent' })
  @IsOptional()
  @Transform(toDate)
  @MinDate(now, { message: 'expiresAt must be in the future' })
  @IsDate({ message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: Date | null;
}

@InputType({ description: 'Changes to an API key; fields left out keep their values' })
export class UpdateApiKeyInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 255)
  @IsString()
  name?: string;

  @Field({ nullable: true })
  @OptionalNonNull()
  @IsBoolean()
  isActive?: boolean;

  @Field(() => Date, { nullable: true, description: 'Only an earlier expiry than the current one; null is accepted only on a key without one' })
  @IsOptional()
  @Transform(toDate)
  @IsDate({ message: 'expiresAt must be an ISO 8601 date-time' })
  expiresAt?: Date | null;
}
