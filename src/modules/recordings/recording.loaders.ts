import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { CallRecording } from './recording.entity.js';
import type { RecordingService } from './recording.service.js';

/** Per-request batch for Call.recording: one statement whatever the number of calls. */
export class RecordingLoaders {
  readonly byCall: DataLoader<string, CallRecording | null>;

  constructor(recordings: RecordingService, actor: Actor) {
    this.byCall = new DataLoader(async (callIds) => {
      const found = await recordings.recordingsFor(actor, callIds);
      return callIds.map((id) => found.get(id) ?? null);
    });
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    recordings: RecordingLoaders;
  }
}
