import { Field, Float, Int, ObjectType } from 'type-graphql';

/** One agent turn of a speech-to-speech call: how long the caller waited for the agent's first audio, and whose time it was. */
@ObjectType({
  description:
    'One agent turn of a speech-to-speech or streaming call, timed from the end of the caller’s speech to the agent’s first audio sent to the carrier',
})
export class CallTurnTiming {
  @Field(() => Date, {
    nullable: true,
    description:
      'When the provider said the caller stopped speaking (ISO 8601); null for a turn the gateway’s own request started (the reply after a tool call)',
  })
  endOfSpeechAt!: string | null;

  @Field(() => Float, {
    description: 'Milliseconds from the end of the caller’s speech (or our request) to the first agent audio sent to the carrier: providerMs + gatewayMs',
  })
  totalMs!: number;

  @Field(() => Float, {
    description: 'The provider’s share: milliseconds from the end of speech (or our request) to its first audio of the reply reaching the gateway',
  })
  providerMs!: number;

  @Field(() => Float, {
    description: 'The gateway’s own share: milliseconds from that audio reaching the gateway to its being written to the carrier’s socket',
  })
  gatewayMs!: number;

  @Field(() => Float, {
    nullable: true,
    description: 'Streaming calls: the recognizer’s share, from the end of speech to its end of the turn; null on a speech-to-speech call',
  })
  recognizerMs?: number | null;

  @Field(() => Float, {
    nullable: true,
    description: 'Streaming calls: the model’s share, from being asked to its first sentence or clause; null on a speech-to-speech call',
  })
  modelMs?: number | null;

  @Field(() => Float, {
    nullable: true,
    description: 'Streaming calls: the synthesizer’s share, from that first sentence to its first audio; null on a speech-to-speech call',
  })
  synthesizerMs?: number | null;

  @Field(() => Float, {
    nullable: true,
    description:
      'Streaming calls: time the first audio was held for the grace period after the end of speech (a natural pause; zero when the providers took longer); null on a speech-to-speech call',
  })
  waitMs?: number | null;

  @Field(() => Boolean, {
    nullable: true,
    description:
      'Streaming calls on Deepgram Flux: true when the reply was started at Flux’s EagerEndOfTurn, before the turn ended (modelMs and synthesizerMs then count only what was left of their work after the end of the turn); null otherwise',
  })
  eagerStart?: boolean | null;
}

/** The turns of a speech-to-speech call, written once when its media stream ends. */
@ObjectType({
  description:
    'The agent’s turn latency on a speech-to-speech or streaming call, and how soon its first message was heard, recorded when its media stream ends',
})
export class CallTurnLatency {
  @Field({ description: 'Who answered: the speech-to-speech provider (openai, google), or a streaming call’s recognizer+synthesizer (deepgram+elevenlabs)' })
  provider!: string;

  @Field(() => [CallTurnTiming], { description: 'The agent turns in order (at most the first 500)' })
  turns!: CallTurnTiming[];

  @Field(() => Float, { description: 'Median totalMs of the turns (the lower middle one of an even count)' })
  p50Ms!: number;

  @Field(() => Float, { description: 'Largest totalMs of the turns' })
  maxMs!: number;

  @Field(() => Int, {
    nullable: true,
    description: 'Streaming calls: how many times the caller spoke over the agent and its audio was cut; null on a speech-to-speech call',
  })
  bargeIns?: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      'Streaming calls on Deepgram Flux: replies started at Flux’s EagerEndOfTurn, before the end of the turn (kept or cancelled); null on other calls',
  })
  eagerReplies?: number | null;

  @Field(() => Int, {
    nullable: true,
    description:
      'Of eagerReplies, those cancelled unheard: the caller went on (TurnResumed), the final words differed, or the call ended first; null on other calls',
  })
  eagerCancelled?: number | null;

  @Field(() => Float, {
    nullable: true,
    description:
      'The first message: milliseconds from the call’s answer to the first audio of the agent’s first line sent to the carrier (media stream set-up included); null when the agent waited for the caller. Not among the turns, nor in p50Ms and maxMs',
  })
  firstAudioMs?: number | null;
}
