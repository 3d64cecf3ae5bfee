import { useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { CreateProgramDocument, ProgramChoicesDocument, type ProgramCarrier } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { CheckboxField, FormError, SelectField, TextArea, TextField } from '../../components/forms';
import { Page } from '../../components/page';

const SHOWN = [
  'name',
  'description',
  'audienceId',
  'agentId',
  'carrier',
  'fromNumberId',
  'maxConcurrentCalls',
  'callingWindow.startTime',
  'callingWindow.endTime',
  'callingWindow.daysOfWeek',
  'recording.enabled',
  'simulatedCaller.utterances',
];
/** ISO weekdays, as the API numbers them (1 = Monday). */
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** A campaign program: who is called (an audience), who speaks (an agent), through which carrier. */
export function ProgramNew() {
  const { can } = useSession();
  const [, navigate] = useLocation();
  const choices = useQuery(ProgramChoicesDocument, {});
  const create = useMutation(CreateProgramDocument);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [audienceId, setAudienceId] = useState('');
  const [agentId, setAgentId] = useState('');
  const [carrier, setCarrier] = useState<ProgramCarrier>('simulator');
  const [maxConcurrentCalls, setMaxConcurrentCalls] = useState('3');
  const [recording, setRecording] = useState(false);
  const [fromNumberId, setFromNumberId] = useState('');
  const [windowed, setWindowed] = useState(false);
  const [startTime, setStartTime] = useState('09:00');
  const [endTime, setEndTime] = useState('17:00');
  const [days, setDays] = useState<number[]>([1, 2, 3, 4, 5]);
  const [utterances, setUtterances] = useState('');
  if (!can('programs.manage')) {
    return (
      <Page title="New program">
        <p>Only an owner or an admin may create programs.</p>
      </Page>
    );
  }
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const lines = utterances
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    const done = await create.run({
      input: {
        kind: 'campaign',
        name,
        description: description || undefined,
        audienceId,
        agentId: agentId || undefined,
        carrier,
        fromNumberId: carrier === 'twilio' && fromNumberId ? fromNumberId : undefined,
        callingWindow: windowed ? { startTime, endTime, daysOfWeek: days } : undefined,
        maxConcurrentCalls: Number(maxConcurrentCalls),
        recording: { enabled: recording },
        simulatedCaller: carrier === 'simulator' && lines.length > 0 ? { utterances: lines } : undefined,
      },
    });
    if (done) navigate(`/campaigns/${done.createProgram.id}`);
  };
  const audiences = choices.data?.audiences.data ?? [];
  const agents = choices.data?.agents.data ?? [];
  const numbers = choices.data?.phoneNumbers.data ?? [];
  return (
    <Page title="New program">
      <form onSubmit={(event) => void submit(event)} noValidate aria-label="New program">
        <TextField label="Name" field="name" value={name} onChange={setName} error={create.error} required />
        <TextField label="Description" field="description" value={description} onChange={setDescription} error={create.error} />
        <SelectField
          label="Audience"
          field="audienceId"
          value={audienceId}
          onChange={setAudienceId}
          error={create.error}
          options={[
            { value: '', label: 'Choose an audience' },
            ...audiences.map((audience) => ({ value: audience.id, label: `${audience.name} (${audience.contactCount})` })),
          ]}
        />
        <SelectField
          label="Agent"
          field="agentId"
          value={agentId}
          onChange={setAgentId}
          error={create.error}
          options={[{ value: '', label: 'None' }, ...agents.map((agent) => ({ value: agent.id, label: `${agent.name} (${agent.status})` }))]}
        />
        <SelectField
          label="Carrier"
          field="carrier"
          value={carrier}
          onChange={(value) => setCarrier(value as ProgramCarrier)}
          error={create.error}
          options={[
            { value: 'simulator', label: 'simulator (offline)' },
            { value: 'twilio', label: 'twilio' },
          ]}
        />
        {carrier === 'twilio' ? (
          <SelectField
            label="Caller ID"
            field="fromNumberId"
            value={fromNumberId}
            onChange={setFromNumberId}
            error={create.error}
            hint="A number of the organization (Settings, Telephony); needed to activate a twilio program"
            options={[
              { value: '', label: 'Choose a number' },
              ...numbers.map((number) => ({ value: number.id, label: number.label ? `${number.number} (${number.label})` : number.number })),
            ]}
          />
        ) : null}
        <CheckboxField label="Call only within a calling window" field="callingWindow" checked={windowed} onChange={setWindowed} error={create.error} />
        {windowed ? (
          <fieldset className="calling-window">
            <legend>Calling window, on each contact’s own clock</legend>
            <TextField
              label="From"
              field="callingWindow.startTime"
              inputMode="numeric"
              value={startTime}
              onChange={setStartTime}
              error={create.error}
              hint="HH:MM, 24-hour clock"
            />
            <TextField
              label="Until"
              field="callingWindow.endTime"
              inputMode="numeric"
              value={endTime}
              onChange={setEndTime}
              error={create.error}
              hint="HH:MM; 24:00 is the end of the day"
            />
            <fieldset className="weekdays" aria-describedby={create.error?.forField('callingWindow.daysOfWeek') ? 'calling-days-error' : undefined}>
              <legend>Days</legend>
              {WEEKDAYS.map((day, index) => (
                <CheckboxField
                  key={day}
                  label={day}
                  field={`callingWindow.daysOfWeek.${index + 1}`}
                  checked={days.includes(index + 1)}
                  onChange={(checked) =>
                    setDays((previous) => (checked ? [...previous, index + 1].sort((a, b) => a - b) : previous.filter((value) => value !== index + 1)))
                  }
                  error={null}
                />
              ))}
              {create.error?.forField('callingWindow.daysOfWeek') ? (
                <p className="field-error" id="calling-days-error" data-field="callingWindow.daysOfWeek">
                  {create.error.forField('callingWindow.daysOfWeek')}
                </p>
              ) : null}
            </fieldset>
          </fieldset>
        ) : null}
        <TextField
          label="Calls at once"
          field="maxConcurrentCalls"
          type="number"
          inputMode="numeric"
          value={maxConcurrentCalls}
          onChange={setMaxConcurrentCalls}
          error={create.error}
        />
        <CheckboxField label="Record the calls" field="recording.enabled" checked={recording} onChange={setRecording} error={create.error} />
        {carrier === 'simulator' ? (
          <TextArea
            label="What the simulated callee says, a line each"
            field="simulatedCaller.utterances"
            value={utterances}
            onChange={setUtterances}
            error={create.error}
            rows={3}
          />
        ) : null}
        <FormError error={create.error ?? choices.error} shown={SHOWN} />
        <button type="submit" className="primary" disabled={create.pending}>
          Create program
        </button>
      </form>
    </Page>
  );
}
