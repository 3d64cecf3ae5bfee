import { CarrierError, type RecordingMedia, type RecordingStatusEvent } from '../../carrier.js';
import { own } from '../../../../common/own.js';
import { wholeSeconds } from '../call-words.js';

/** The recording reports asked for on InitiateCallRequest (RecordingStatusCallbackEvent, space-separated as published). */
export const TELNYX_RECORDING_EVENTS = 'in-progress completed absent';

const STATUSES: Record<string, RecordingStatusEvent['status']> = {
  'in-progress': 'in_progress',
  completed: 'completed',
  absent: 'absent',
  failed: 'failed',
};

/**
 * A TeXML recording status callback (developers.telnyx.com api-reference/callbacks/texml-recording-in-progress
 * and texml-recording-completed): form fields RecordingSid, RecordingStatus, CallSid, RecordingChannels
 * (1 or 2), RecordingDuration; RecordingUrl is never kept (it expires, and the resource gives a fresh one).
 */
export function telnyxRecordingEventOf(params: Record<string, string>): RecordingStatusEvent | null {
  const status = own(STATUSES, params.RecordingStatus ?? '');
  if (!params.RecordingSid || !status) return null;
  return {
    carrierRecordingId: params.RecordingSid,
    carrierCallId: params.CallSid || null,
    status,
    durationSeconds: wholeSeconds(params.RecordingDuration),
    channels: params.RecordingChannels === '2' ? 'dual' : params.RecordingChannels === '1' ? 'mono' : null,
    errorText: status === 'failed' || status === 'absent' ? `Telnyx reported the recording ${params.RecordingStatus}` : null,
  };
}

/** The format a TeXML recording's media_url holds, by its file name; null when it does not say. */
export function mediaFormatOf(url: URL): 'wav' | 'mp3' | null {
  const extension = /\.([a-z0-9]+)$/i.exec(url.pathname)?.[1]?.toLowerCase();
  return extension === 'wav' || extension === 'mp3' ? extension : null;
}

/**
 * The audio at a recording resource's `media_url`, handed on unread. The URL is one Telnyx gives for
 * a while (the <Record> page: "valid for 10 minutes"), so it is asked for each download and fetched
 * without the API key (it may be another host's). A recording is kept in one format (the resource
 * publishes one media_url): another format is refused, naming the one it has.
 */
export async function openTelnyxMedia(mediaUrl: string, format: 'wav' | 'mp3', timeoutMs: number, signal?: AbortSignal): Promise<RecordingMedia | null> {
  let url: URL;
  try {
    url = new URL(mediaUrl);
  } catch {
    throw new CarrierError('rejected', 'Telnyx gave the recording a media_url that is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CarrierError('rejected', 'Telnyx gave the recording a media_url that is not http(s)');
  const kept = mediaFormatOf(url);
  if (kept && kept !== format) throw new CarrierError('rejected', `Telnyx keeps this recording as ${kept.toUpperCase()} only: ask for format=${kept}`);
  let response: Response;
  try {
    const bounded = AbortSignal.timeout(timeoutMs);
    response = await fetch(url, { signal: signal ? AbortSignal.any([signal, bounded]) : bounded });
  } catch (error) {
    throw new CarrierError('unavailable', `Telnyx did not send the recording: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    const kind = response.status >= 500 || response.status === 429 ? 'unavailable' : 'rejected';
    throw new CarrierError(kind, `Telnyx answered ${response.status} for the recording's media`, response.status);
  }
  const length = Number(response.headers.get('content-length'));
  return {
    contentType: response.headers.get('content-type')?.split(';')[0] ?? (format === 'wav' ? 'audio/wav' : 'audio/mpeg'),
    contentLength: response.headers.has('content-length') && Number.isInteger(length) && length >= 0 ? length : null,
    body: response.body,
  };
}
