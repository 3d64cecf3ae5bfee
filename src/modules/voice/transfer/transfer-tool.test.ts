import type { Agent } from '../../agents/agent.entity.js';
import { callTools } from '../realtime/call-tools.js';
import { renderTwiml } from '../../telephony/carriers/twilio/twiml.js';
import { TRANSFER_NUMBER } from '../../agents/transfer-destination.types.js';
import { transferCallTool } from './transfer-tool.js';

// transfer_call as the model is offered it, the TwiML of a transfer, and which destinations are taken.

const agent = (transferDestinations: { name: string; number: string; description: string | null; mode: string }[]) =>
  ({ resolutionCriteria: [], transferDestinations }) as unknown as Agent;

describe('transfer_call', () => {
  it('is offered only to an agent with destinations, with an enum of their names and their descriptions', () => {
    expect(callTools(agent([])).map((tool) => tool.name)).toEqual(['end_call', 'reach_resolution', 'opt_out', 'send_digits']);
    const tool = transferCallTool(
      agent([
        { name: 'Billing', number: '+14155550100', description: 'invoices', mode: 'cold' },
        { name: 'Front desk', number: 'sip:front@pbx.example.com', description: null, mode: 'cold' },
      ]),
    )!;
    expect(tool.parameters).toEqual({
      type: 'object',
      properties: { destination: { type: 'string', enum: ['Billing', 'Front desk'], description: 'Whom to connect the caller to' } },
      required: ['destination'],
    });
    expect(tool.description).toContain('Billing: invoices; Front desk.');
    expect(callTools(agent([{ name: 'Billing', number: '+14155550100', description: null, mode: 'cold' }])).at(-1)?.name).toBe('transfer_call');
  });

  it('takes E.164 numbers and sip: URIs, nothing else', () => {
    for (const good of ['+14155550100', 'sip:desk@pbx.example.com', 'sips:desk@10.0.0.1:5061;transport=tls']) expect(TRANSFER_NUMBER.test(good)).toBe(true);
    for (const bad of ['4155550100', '+0123', 'sip:desk', 'tel:+14155550100', 'sip:de sk@x', 'sip:<a@b>', 'http://x@y'])
      expect(TRANSFER_NUMBER.test(bad)).toBe(false);
  });

  it('renders the line and a <Dial> whose action reports to the connection’s /dial route, a <Number> or a <Sip>', () => {
    const context = { publicUrl: 'https://gw.example', connectionId: 'c1', callId: 'call-1' };
    expect(
      renderTwiml(
        [
          { kind: 'say', text: 'Connecting you to Billing.', voice: null },
          { kind: 'dial', number: '+14155550100', reportTo: 'dial' },
        ],
        context,
      ),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say voice="Polly.Joanna">Connecting you to Billing.</Say>' +
        '<Dial action="https://gw.example/telephony/twilio/c1/dial?callId=call-1" method="POST"><Number>+14155550100</Number></Dial></Response>',
    );
    expect(renderTwiml([{ kind: 'dial', number: 'sip:front@pbx.example.com', reportTo: 'dial' }], context)).toContain('<Sip>sip:front@pbx.example.com</Sip>');
    // A flow's transfer node dials as before, without a report.
    expect(renderTwiml([{ kind: 'dial', number: '+14155550100' }], context)).toContain('<Dial>+14155550100</Dial>');
  });
});
