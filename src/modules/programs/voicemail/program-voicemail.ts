import { IsEnum, IsOptional, IsString, Length } from 'class-validator';
import { Field, InputType, ObjectType, registerEnumType } from 'type-graphql';
import type { FieldError } from '../../../common/errors.js';
import { checkTemplate } from '../../agents/templates/template-language.js';

/** What a program's call does once the carrier says a machine answered and its greeting ended. */
export enum VoicemailAction {
  leave = 'leave',
  hang_up = 'hang_up',
}
registerEnumType(VoicemailAction, {
  name: 'VoicemailAction',
  description: 'What a call does when an answering machine’s greeting ends (the beep)',
  valuesConfig: {
    leave: { description: 'The agent stops; the message is spoken after the beep, then the call hangs up (outcome voicemail_left)' },
    hang_up: { description: 'The agent stops and the call hangs up, leaving nothing (outcome voicemail)' },
  },
});

/** The longest voicemail message, in characters (some 60 seconds spoken). */
export const VOICEMAIL_MESSAGE_MAX = 1000;

@ObjectType('ProgramVoicemail', { description: 'What the program’s calls do when an answering machine answers' })
export class ProgramVoicemail {
  @Field(() => VoicemailAction)
  action!: VoicemailAction;

  @Field(() => String, { nullable: true, description: 'The message left after the beep (a template: {{contact.name}}, variables); null with hang_up' })
  message!: string | null;
}

@InputType({ description: 'What the calls do when a machine answers; absent or null: the flow’s voicemail node, else a hang-up' })
export class ProgramVoicemailInput {
  @Field(() => VoicemailAction, { nullable: true, description: 'leave (default) or hang_up' })
  @IsOptional()
  @IsEnum(VoicemailAction, { message: 'voicemail.action must be leave or hang_up' })
  action?: VoicemailAction | null;

  @Field(() => String, {
    nullable: true,
    description: `1 to ${VOICEMAIL_MESSAGE_MAX} characters, required with leave; a template like an agent’s firstMessage ({{contact.name}}, {{organization.name}}, variables)`,
  })
  @IsOptional()
  @Length(1, VOICEMAIL_MESSAGE_MAX, { message: `voicemail.message must be 1 to ${VOICEMAIL_MESSAGE_MAX} characters` })
  @IsString({ message: 'voicemail.message must be a string' })
  message?: string | null;
}

/** The rules the input class cannot say: a message to leave, and a template that parses within the language's limits. */
export function voicemailErrors(input: ProgramVoicemailInput | ProgramVoicemail | null | undefined): FieldError[] {
  if (!input) return [];
  const action = input.action ?? VoicemailAction.leave;
  if (action === VoicemailAction.leave && !input.message?.trim())
    return [{ field: 'voicemail.message', message: 'voicemail.message is required to leave a message' }];
  return typeof input.message === 'string' ? checkTemplate('voicemail.message', input.message).errors : [];
}

/** The setting as stored (its default filled in); null when the program has none. */
export function programVoicemailOf(input: ProgramVoicemailInput | ProgramVoicemail | null | undefined): ProgramVoicemail | null {
  if (!input) return null;
  const action = input.action ?? VoicemailAction.leave;
  return { action, message: action === VoicemailAction.leave ? (input.message ?? null) : null };
}
