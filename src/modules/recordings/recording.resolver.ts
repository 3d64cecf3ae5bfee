import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root } from 'type-graphql';
import { actorOf, loadersOf, type GraphQLContext } from '../../graphql/context.js';
import { Call } from '../telephony/call.entity.js';
import { CallRecording } from './recording.entity.js';

/** Adds Call.recording and its deletion without the telephony module knowing about recordings. The audio itself is REST only (GET /api/calls/{id}/recording). */
@Resolver(() => Call)
export class CallRecordingResolver {
  @FieldResolver(() => CallRecording, {
    nullable: true,
    description: 'The call’s recording, when its program records calls (null: none); the audio is downloaded with GET /api/calls/{id}/recording; batched',
  })
  recording(@Root() call: Call, @Ctx() context: GraphQLContext): Promise<CallRecording | null> {
    return loadersOf(context).recordings.byCall.load(call.id);
  }

  @Mutation(() => CallRecording, {
    description: 'Deletes the call’s recording at the carrier and marks it deleted, as DELETE /api/calls/{id}/recording; owner or admin',
  })
  deleteCallRecording(@Arg('callId', () => ID) callId: string, @Ctx() context: GraphQLContext): Promise<CallRecording> {
    return context.services.recordings.delete(actorOf(context), callId);
  }
}
