import { useEffect, useState } from 'react';
import type { ApiError } from '../../api/client';
import type { CallQuery } from '../../api/generated';
import { useSession } from '../../api/session';
import { FormError } from '../../components/forms';

type Recording = NonNullable<CallQuery['call']['recording']>;

/**
 * The call's recording. The audio is the documented download GET /api/calls/{id}/recording (GraphQL has
 * its state, not its bytes); an <audio> element cannot send the API key, so the console downloads it
 * with the key and plays it from a blob: URL, which it revokes when the page closes.
 */
export function RecordingPlayer({ callId, recording }: { callId: string; recording: Recording | null }) {
  const { gateway } = useSession();
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const playable = recording?.status === 'completed' && !recording.deletedAt;
  useEffect(() => {
    if (!playable) return;
    let made: string | null = null;
    let current = true;
    gateway.recordingUrl(callId).then(
      (blobUrl) => {
        if (current) setUrl((made = blobUrl));
        else URL.revokeObjectURL(blobUrl);
      },
      (caught: ApiError) => current && setError(caught),
    );
    return () => {
      current = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [gateway, callId, playable]);
  if (!recording) return <p>This call was not recorded (its program does not record calls).</p>;
  if (recording.deletedAt) return <p>The recording was deleted ({recording.deletionReason ?? 'no reason given'}).</p>;
  if (!playable)
    return (
      <p>
        Recording {recording.status.replace(/_/g, ' ')}
        {recording.errorText ? `: ${recording.errorText}` : ''}.
      </p>
    );
  return (
    <div className="recording">
      <FormError error={error} />
      {url ? (
        <>
          <audio controls preload="metadata" src={url} data-testid="recording" aria-label="Call recording">
            Your browser cannot play this recording.
          </audio>
          <p>
            {recording.durationSeconds ?? '?'} s, {recording.channels} ·{' '}
            <a href={url} download={`call-${callId}.wav`}>
              Download the WAV
            </a>
          </p>
        </>
      ) : error ? null : (
        <p role="status">Loading the recording…</p>
      )}
    </div>
  );
}
