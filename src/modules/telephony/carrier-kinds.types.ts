import { Field, ObjectType } from 'type-graphql';
import { CarrierKindEnum, type CarrierKind } from './telephony.enums.js';

@ObjectType({ description: 'A field of a carrier’s connection form, as its carrier module declares it' })
export class CarrierConnectionField {
  @Field({ description: 'The field of CreateCarrierConnectionInput it fills (accountSid, authToken, publicKey, applicationId, webhookKey)' })
  name!: string;

  @Field({ description: 'What this carrier calls it, e.g. “Account SID” or “API key”' })
  label!: string;

  @Field({ description: 'One line on where it is found or what it looks like' })
  hint!: string;

  @Field({ description: 'Write-only: sealed, never shown again (a connection shows only its last 4 characters)' })
  secret!: boolean;

  @Field({ description: 'Whether a new connection of this carrier needs it' })
  required!: boolean;
}

@ObjectType({ description: 'A carrier the gateway can connect to: one of its carrier modules, with the fields its connections take' })
export class Carrier {
  @Field(() => CarrierKindEnum, { description: 'Its kind: the `carrier` of its connections' })
  kind!: CarrierKind;

  @Field({ description: 'What it is, e.g. “Twilio Programmable Voice”' })
  label!: string;

  @Field(() => [CarrierConnectionField], { description: 'The fields a connection to it takes, in a form’s order; a field not listed is refused' })
  connectionFields!: CarrierConnectionField[];
}
