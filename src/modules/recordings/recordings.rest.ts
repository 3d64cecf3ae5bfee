import { pipeline } from 'node:stream/promises';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { ArgsType, Field } from 'type-graphql';
import { abortSignalOf } from '../../platform/request-timeout.js';
import { routesUsing } from '../../rest/routes.js';
import { AppError } from '../../common/errors.js';
import type { ByteRange, RecordingFormat, RecordingService } from './recording.service.js';

/** The services this route table calls. */
export type RouteServices = { recordings: RecordingService };
const defineRoute = routesUsing<RouteServices>();

@ArgsType()
export class RecordingDownloadArgs {
  @Field(() => String, { nullable: true, description: 'wav (audio/wav) or mp3 (audio/mpeg); wins over the Accept header; default wav' })
  @IsOptional()
  @IsIn(['wav', 'mp3'], { message: 'format must be wav or mp3' })
  @IsString()
  format?: RecordingFormat;
}

/** The format asked for: `format` first, then the first audio type Accept names that we serve, else WAV. */
export function recordingFormatOf(format: RecordingFormat | undefined, accept: string | undefined): RecordingFormat {
  if (format) return format;
  for (const part of (accept ?? '').split(',')) {
    const type = part.split(';')[0]!.trim().toLowerCase();
    if (type === 'audio/mpeg' || type === 'audio/mp3') return 'mp3';
    if (type === 'audio/wav' || type === 'audio/x-wav' || type === 'audio/wave') return 'wav';
  }
  return 'wav';
}

/** A call's recording: the audio streamed through the gateway, and its deletion. Its state is on the call (GraphQL Call.recording). */
export const recordingRoutes = [
  defineRoute({
    method: 'get',
    path: '/calls/{id}/recording',
    operationId: 'downloadCallRecording',
    summary: 'The call’s recording as audio, streamed from the carrier: audio/wav or audio/mpeg (format query, else Accept; default WAV)',
    description:
      'The audio is fetched from the carrier with the connection’s credentials and passed on as it arrives (never held whole, not held to RESPONSE_MAX_BYTES); the carrier’s own URL is never shown. ' +
      '`format=wav|mp3` decides the format; without it, an Accept header naming audio/mpeg gets MP3, anything else WAV. A dual-channel recording downloads with both channels. ' +
      'A simulated call’s recording is a short generated WAV (format=mp3 → 400). 404 when the call is another organization’s, or has no recording (none made, refused consent, failed, deleted: the detail says which); 503 when the carrier cannot be reached. ' +
      'A `Range: bytes=…` of one range answers 206 with that part and `Content-Range` (several ranges, or a malformed one, answer the whole file); a range past the end answers 416 with `Content-Range: bytes */<size>`. `Accept-Ranges: bytes` says a range can be asked. HEAD answers the same headers without reading the audio.',
    tag: 'Calls',
    query: RecordingDownloadArgs,
    errors: [404, 416, 503],
    streams: {
      mediaType: 'audio/wav',
      example: 'RIFF....WAVEfmt ',
      headers: {
        'Content-Disposition': { description: 'attachment; filename="call-<id>.wav" (or .mp3)', schema: { type: 'string' } },
        'Accept-Ranges': { description: 'bytes (none when the carrier did not give the size)', schema: { type: 'string' } },
      },
      partial: 'The part of the audio the Range asked for; Content-Range says which bytes of how many',
    },
    async handler({ actor, params, query, services, req, res }) {
      const format = recordingFormatOf(query.format, req.get('accept'));
      let size = 0;
      const wanted = (total: number): ByteRange | 'unsatisfiable' | null => {
        size = total;
        const ranges = req.range(total, { combine: true });
        if (ranges === -1) return 'unsatisfiable';
        // Malformed, not bytes, or several ranges: the whole file, as RFC 9110 lets a server answer.
        if (ranges === -2 || ranges === undefined || ranges.type !== 'bytes' || ranges.length !== 1) return null;
        return { start: ranges[0]!.start, end: ranges[0]!.end };
      };
      const download = await services.recordings
        .open(actor, params.id!, format, abortSignalOf(res), { head: req.method === 'HEAD', range: req.get('range') ? wanted : undefined })
        .catch((error: unknown) => {
          if (error instanceof AppError && error.code === 'RANGE_NOT_SATISFIABLE') res.setHeader('content-range', `bytes */${size}`);
          throw error;
        });
      res.status(download.range ? 206 : 200);
      res.setHeader('content-type', download.contentType);
      res.setHeader('accept-ranges', download.size === null ? 'none' : 'bytes');
      if (download.range) res.setHeader('content-range', `bytes ${download.range.start}-${download.range.end}/${download.size}`);
      if (download.contentLength !== null) res.setHeader('content-length', String(download.contentLength));
      res.setHeader('content-disposition', `attachment; filename="${download.filename}"`);
      if (!download.body) {
        res.end();
        return;
      }
      try {
        await pipeline(download.body, res);
      } catch (error) {
        // Headers are sent: no problem body can follow. The answer is cut (the client sees it short) and the error logged.
        res.destroy();
        if (abortSignalOf(res)?.aborted) return; // timed out or the client left: expected, nothing to report
        throw error;
      }
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/calls/{id}/recording',
    operationId: 'deleteCallRecording',
    summary: 'Delete the call’s recording at the carrier and here (204); owner or admin',
    description:
      'The audio is deleted at the carrier, then the recording is marked deleted (deletionReason user; carrier when the carrier no longer had it) and can no longer be downloaded; its record stays, on the call (GET /api/calls/{id}: recording.deletedAt). ' +
      'A second delete, or one of a recording without audio (refused, failed, absent, in progress), answers 409 saying why and changes nothing; 503 when the carrier cannot be reached (nothing changed).',
    tag: 'Calls',
    status: 204,
    errors: [403, 404, 409, 503],
    async handler({ actor, params, services }) {
      await services.recordings.delete(actor, params.id!);
    },
  }),
];
