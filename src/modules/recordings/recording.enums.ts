import { registerEnumType } from 'type-graphql';

/** Where a call's recording is: the carrier's words (in-progress, completed, absent, failed) plus the consent's refusal. */
export enum RecordingStatus {
  in_progress = 'in_progress',
  completed = 'completed',
  absent = 'absent',
  failed = 'failed',
  refused = 'refused',
}
registerEnumType(RecordingStatus, {
  name: 'RecordingStatus',
  description: 'Where a call’s recording is',
  valuesConfig: {
    in_progress: { description: 'The carrier is recording the call' },
    completed: { description: 'The audio is ready to download (GET /api/calls/{id}/recording) unless deletedAt is set' },
    absent: { description: 'The carrier heard nothing to keep (silence); there is no audio' },
    failed: { description: 'The carrier could not make the recording; errorText has its words' },
    refused: { description: 'The callee refused the consent sentence: the call was not recorded' },
  },
});

/** mono: both parties on one channel; dual: each party on its own channel. */
export enum RecordingChannels {
  mono = 'mono',
  dual = 'dual',
}
registerEnumType(RecordingChannels, {
  name: 'RecordingChannels',
  description: 'How the parties are laid out in the recording',
  valuesConfig: {
    mono: { description: 'Both parties mixed on one channel' },
    dual: { description: 'The callee on the first channel, the gateway’s side on the second' },
  },
});

/** Why a recording's audio is gone. */
export enum RecordingDeletionReason {
  user = 'user',
  retention = 'retention',
  carrier = 'carrier',
}
registerEnumType(RecordingDeletionReason, {
  name: 'RecordingDeletionReason',
  description: 'Why a recording’s audio was deleted',
  valuesConfig: {
    user: { description: 'A user deleted it (DELETE /api/calls/{id}/recording, deleteCallRecording)' },
    retention: { description: 'It was older than the organization’s recordingRetentionDays' },
    carrier: { description: 'The carrier no longer had it when it was to be deleted' },
  },
});
