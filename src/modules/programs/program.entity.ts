import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Agent } from '../agents/agent.entity.js';
import { Audience } from '../contacts/audience.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { PhoneNumber } from '../telephony/phone-number.entity.js';
import { ProgramCarrier, ProgramCarrierEnum } from '../telephony/telephony.enums.js';
import { CallFlow } from './call-flow.entity.js';
import { ProgramKind, ProgramStatus } from './program.enums.js';
import { ProgramRecording } from '../recordings/recording-settings.js';
import { ProgramVoicemail } from './voicemail/program-voicemail.js';
import { AutoPauseRule, CallingWindow, LiveTrigger, RetryPolicy, SimulatedCaller } from './program.types.js';

/** A call campaign's configuration: who is called, through which flow, when, and how often. */
@ObjectType({ description: 'A calling program: a campaign over an audience, or a live program driven by dates' })
@Entity({ tableName: 'programs' })
export class Program extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field()
  @Property({ length: 255 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description: (string & Opt) | null = null;

  @Field(() => ProgramKind)
  @Enum({ items: () => ProgramKind })
  kind!: ProgramKind;

  @Field(() => ProgramStatus)
  @Enum({ items: () => ProgramStatus, default: ProgramStatus.draft })
  status: ProgramStatus & Opt = ProgramStatus.draft;

  @ManyToOne(() => CallFlow, { nullable: true, deleteRule: 'set null' })
  flow: (CallFlow & Opt) | null = null;

  /** A program without a flow speaks through this one agent. */
  @ManyToOne(() => Agent, { nullable: true, deleteRule: 'set null' })
  agent: (Agent & Opt) | null = null;

  @ManyToOne(() => Audience, { nullable: true, deleteRule: 'set null' })
  audience: (Audience & Opt) | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  scheduledStartAt: (Date & Opt) | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  scheduledStopAt: (Date & Opt) | null = null;

  @Field(() => CallingWindow, { nullable: true })
  @Property({ type: 'json', nullable: true })
  callingWindow: (CallingWindow & Opt) | null = null;

  @Field(() => Int)
  @Property({ type: 'integer', default: 1 })
  maxConcurrentCalls: number & Opt = 1;

  @Field(() => RetryPolicy)
  @Property({ type: 'json' })
  retryPolicy: RetryPolicy & Opt = { maxAttempts: 1, retryDelayMinutes: 0 };

  @Field(() => SimulatedCaller, { nullable: true, description: 'What the simulated carrier’s caller says at ask nodes (null: seeded default lines)' })
  @Property({ type: 'json', nullable: true })
  simulatedCaller: (SimulatedCaller & Opt) | null = null;

  @Field(() => [AutoPauseRule])
  @Property({ type: 'json' })
  autoPauseRules: AutoPauseRule[] & Opt = [];

  @Field(() => ProgramCarrierEnum, { description: 'Where the program’s calls are placed: the simulator (default) or the organization’s carrier' })
  @Property({ columnType: 'text', default: ProgramCarrier.simulator })
  carrier: ProgramCarrier & Opt = ProgramCarrier.simulator;

  /** The caller ID of the program's calls; required to activate a program on a real carrier. */
  @ManyToOne(() => PhoneNumber, { nullable: true, deleteRule: 'set null' })
  fromNumber: (PhoneNumber & Opt) | null = null;

  @Field(() => ID, {
    nullable: true,
    description: 'The phone number (of the organization) the program calls from; required to activate a program on a real carrier',
  })
  get fromNumberId(): (string & Opt) | null {
    return this.fromNumber?.id ?? null;
  }

  @Field(() => ProgramRecording, { nullable: true, description: 'Whether the program’s answered calls are recorded (null: they are not)' })
  @Property({ type: 'json', nullable: true })
  recording: (ProgramRecording & Opt) | null = null;

  @Field(() => ProgramVoicemail, {
    nullable: true,
    description: 'What the calls do when an answering machine answers (null: the flow’s voicemail node, else a hang-up)',
  })
  @Property({ type: 'json', nullable: true })
  voicemail: (ProgramVoicemail & Opt) | null = null;

  @Field(() => String, {
    nullable: true,
    description: 'What the agent answers an automated call screener with on the program’s outbound calls (a template; null: the default, see docs/voice.md)',
  })
  @Property({ type: 'text', nullable: true })
  screeningResponse: (string & Opt) | null = null;

  @Field(() => LiveTrigger, { nullable: true, description: 'Set for live programs' })
  @Property({ type: 'json', nullable: true })
  liveTrigger: (LiveTrigger & Opt) | null = null;
}
