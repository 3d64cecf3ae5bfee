import { CALL_CSV_HEADER, csvField, csvLine } from './call-csv.js';

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
    expect(csvField(value).replace(/^"|"$/g, '').startsWith(`'${value.slice(0, 1)}`)).toBe(true);
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
  });
});
