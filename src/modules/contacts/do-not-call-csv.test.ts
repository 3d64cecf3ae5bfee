import { csvRecords, parseDoNotCallCsv } from './do-not-call-csv.js';

describe('csvRecords', () => {
  it('splits records on CRLF, LF and CR, and keeps quoted commas, quotes and line breaks in their field', () => {
    expect(csvRecords('a,b\r\n"c, d","e ""f"""\n"g\nh",i\rj')).toEqual([
      { line: 1, fields: ['a', 'b'], unterminated: false },
      { line: 2, fields: ['c, d', 'e "f"'], unterminated: false },
      { line: 3, fields: ['g\nh', 'i'], unterminated: false },
      { line: 5, fields: ['j'], unterminated: false },
    ]);
  });

  it('marks a quote left open', () => {
    expect(csvRecords('+14155550100\n"+14155550101,x')).toEqual([
      { line: 1, fields: ['+14155550100'], unterminated: false },
      { line: 2, fields: ['+14155550101,x'], unterminated: true },
    ]);
  });
});

describe('parseDoNotCallCsv', () => {
  it('reads a header’s phone and note columns and reports each bad row with its line', () => {
    const csv = 'name,Phone,note\nAda,+14155550100,asked twice\n\nBob,415-555-0101,\nCy,,x\nDi,+33612345678,\n';
    expect(parseDoNotCallCsv(csv)).toEqual({
      rows: [
        { line: 2, phone: '+14155550100', note: 'asked twice' },
        { line: 6, phone: '+33612345678', note: null },
      ],
      rejected: [
        { line: 4, reason: '"415-555-0101" is not an E.164 number such as +14155550100' },
        { line: 5, reason: 'no phone number' },
      ],
    });
  });

  it('takes the first column as the number and the second as the note without a header', () => {
    expect(parseDoNotCallCsv('\uFEFF +14155550100 ,lawyer\r\nhello\r\n')).toEqual({
      rows: [{ line: 1, phone: '+14155550100', note: 'lawyer' }],
      rejected: [{ line: 2, reason: '"hello" is not an E.164 number such as +14155550100' }],
    });
  });

  it('rejects a note over 255 characters', () => {
    expect(parseDoNotCallCsv(`+14155550100,${'x'.repeat(256)}`).rejected).toEqual([{ line: 1, reason: 'the note is longer than 255 characters' }]);
  });
});
