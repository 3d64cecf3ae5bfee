import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional } from 'class-validator';
import { ArgsType, Field } from 'type-graphql';

@ArgsType()
export class DeleteCarrierConnectionArgs {
  @Field(() => Boolean, {
    nullable: true,
    description:
      'true deletes the connection even though recordings made through it are still kept at the carrier: they stay there, and only the carrier’s console can delete them (the gateway can no longer download or delete them, nor can retention). Without it, such a connection answers 409 naming them',
  })
  @IsOptional()
  @IsBoolean({ message: 'keepRecordings must be true or false' })
  // A query string says "true" or "false"; GraphQL sends the boolean itself.
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  keepRecordings?: boolean | null;
}
