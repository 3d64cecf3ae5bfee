import { analysisColumns, CALL_CSV_COLUMNS, CALL_CSV_HEADER, callCsvHeader, callCsvLine, csvField, csvLine, type CallCsvRow } from './call-csv.js';

describe('csvField', () => {
  it('writes plain text, numbers, dates and empty cells as they are', () => {
    expect(csvField('completed')).toBe('completed');
    expect(csvField(42)).toBe('42');
    expect(csvField(-1)).toBe('-1');
    expect(csvField(new Date('2026-01-02T03:04:05.000Z'))).toBe('2026-01-02T03:04:05.000Z');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
  });

  it('quotes a field with a comma, a quote or a line break, doubling its quotes (RFC 4180)', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
  });

  it.each(['=1+1', '+1', '-2', '@SUM(A1)', '\tx', '\rx'])('neutralizes a formula start: %j', (value) => {
    expect(
      csvField(value)
        .replace(/^"|"$/g, '')
        .startsWith(`'${value.slice(0, 1)}`),
    ).toBe(true);
  });

  it('neutralizes and quotes together', () => {
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
  });

  it('leaves a bare E.164 number as it is (a plus and digits hide no formula), and neutralizes anything more after a plus', () => {
    expect(csvField('+14155550100')).toBe('+14155550100');
    expect(csvField('+1415555010+1')).toBe("'+1415555010+1");
    expect(csvField('+1 415')).toBe("'+1 415");
  });
});

describe('csvLine', () => {
  it('joins fields with commas and ends with CRLF', () => {
    expect(csvLine(['a', 1, null, 'b,c'])).toBe('a,1,,"b,c"\r\n');
    expect(CALL_CSV_HEADER.startsWith('contactId,contactName,phone,contactStatus,attempts,lastCallId,lastCallStatus,outcome,')).toBe(true);
    // firstAudioMs, toolCalls, then the transfer's four, added in that order, so the columns before them keep their places for existing spreadsheets.
    expect(CALL_CSV_HEADER).toBe(
      'contactId,contactName,phone,contactStatus,attempts,lastCallId,lastCallStatus,outcome,queuedAt,answeredAt,endedAt,durationSeconds,errorText,creditsCharged,firstAudioMs,toolCalls,transferredTo,transferDestination,transferredAt,transferDialStatus\r\n',
    );
  });
});

describe('the analysis columns', () => {
  const schema = (names: string[]) => ({ type: 'object', properties: Object.fromEntries(names.map((name) => [name, { type: 'string' }])) });
  const row = (analysis: unknown) => ({ ...Object.fromEntries(CALL_CSV_COLUMNS.map((column) => [column, null])), analysis }) as unknown as CallCsvRow;

  it('are none without a plan, or with plans that ask for nothing', () => {
    expect(analysisColumns([])).toBeNull();
    expect(analysisColumns([null, undefined])).toBeNull();
    expect(analysisColumns([{ summary: false, structuredData: null } as never])).toBeNull();
    expect(callCsvHeader(null)).toBe(CALL_CSV_HEADER);
    expect(callCsvLine(row({ status: 'completed' }), null)).toBe(csvLine(CALL_CSV_COLUMNS.map(() => null)));
  });

  it('list the status, the summary when a plan asks for one, each field once in the plans’ order, then the error', () => {
    const columns = analysisColumns([
      { summary: false, structuredData: schema(['day', 'agreed']), fields: ['day', 'agreed'] } as never,
      { summary: true, structuredData: schema(['agreed', 'outcome']) } as never,
    ])!;
    expect(columns).toEqual({ summary: true, fields: ['day', 'agreed', 'outcome'] });
    expect(callCsvHeader(columns)).toBe(`${CALL_CSV_HEADER.trimEnd()},analysisStatus,summary,data.day,data.agreed,data.outcome,analysisError\r\n`);
    const summaryless = analysisColumns([{ summary: false, structuredData: schema(['day']) } as never])!;
    expect(summaryless).toEqual({ summary: false, fields: ['day'] });
    expect(callCsvHeader(summaryless).endsWith(',analysisStatus,data.day,analysisError\r\n')).toBe(true);
    expect(analysisColumns([{ summary: true, structuredData: null } as never])).toEqual({ summary: true, fields: [] });
    expect(analysisColumns([{ summary: true, structuredData: { type: 'object', properties: null } } as never])).toEqual({ summary: true, fields: [] });
  });

  it('write each value in its cell: text and numbers as they are, booleans as words, objects as JSON, missing as empty', () => {
    const columns = { summary: true, fields: ['day', 'count', 'agreed', 'slots', 'missing'] };
    const line = callCsvLine(
      row({ status: 'completed', summary: 'Booked, Tuesday', data: { day: 'Tuesday', count: 2, agreed: false, slots: ['9:00', '10:00'] }, error: null }),
      columns,
    );
    expect(line.endsWith(',completed,"Booked, Tuesday",Tuesday,2,false,"[""9:00"",""10:00""]",,\r\n')).toBe(true);
    const failed = callCsvLine(row({ status: 'failed', summary: null, data: null, error: 'The model answered outside the schema' }), columns);
    expect(failed.endsWith(',failed,,,,,,,The model answered outside the schema\r\n')).toBe(true);
    expect(callCsvLine(row(null), columns).endsWith(',,,,,,,,\r\n')).toBe(true);
    expect(callCsvLine(row({ status: 'completed', data: { agreed: true } }), { summary: false, fields: ['agreed'] }).endsWith(',completed,true,\r\n')).toBe(
      true,
    );
  });

  it('a field named like what every object inherits is empty when the data has none of its own', () => {
    const columns = { summary: false, fields: ['__proto__', 'constructor', 'agreed'] };
    expect(callCsvLine(row({ status: 'completed', data: { agreed: true } }), columns).endsWith(',completed,,,true,\r\n')).toBe(true);
    expect(
      callCsvLine(row({ status: 'completed', data: JSON.parse('{"__proto__": "set", "agreed": true}') }), columns).endsWith(',completed,set,,true,\r\n'),
    ).toBe(true);
  });
});
