import twilio from 'twilio';

/**
 * Placeholder until the sts bridge lands (its engineer's version replaces this file at merge):
 * TwiML that connects the call's audio to the media WebSocket of the connection.
 */
export function renderStreamTwiml({ publicUrl, connectionId, callId }: { publicUrl: string; connectionId: string; callId: string }): string {
  const response = new twilio.twiml.VoiceResponse();
  const url = `${publicUrl.replace(/^http/, 'ws')}/telephony/twilio/${connectionId}/media`;
  response.connect().stream({ url }).parameter({ name: 'callId', value: callId });
  return response.toString();
}
