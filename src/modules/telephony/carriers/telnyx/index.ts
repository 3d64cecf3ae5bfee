import type { CarrierModule } from '../carrier-module.js';
import { telnyxMedia } from './telnyx-media.js';
import type { TelnyxCarrier } from './telnyx.carrier.js';
import { telnyxCredentials } from './telnyx-credentials.js';
import { telnyxWebhooks, texmlCallControl } from './telnyx-webhooks.js';

/**
 * Telnyx through TeXML: REST through the official `telnyx` SDK, webhooks signed with the account's
 * Ed25519 key, TeXML documents, Telnyx Media Streaming frames. Telnyx signs no media stream
 * upgrade (its Media Streaming AsyncAPI names no header), so a stream is let in on what the media
 * route checks of every stream: the call's single-use nonce in the URL the signed TeXML gave, the
 * call in progress on this connection, and a `start` naming that call and its call_control_id.
 */
export function telnyxModule(adapter: TelnyxCarrier): CarrierModule {
  return {
    kind: 'telnyx',
    label: 'Telnyx Programmable Voice, through TeXML',
    credentials: telnyxCredentials,
    adapter,
    webhooks: { ...telnyxWebhooks(adapter), verifyUpgrade: () => true },
    callControl: texmlCallControl,
    media: telnyxMedia,
  };
}
