/** The rows of a CSV (RFC 4180: quoted cells may hold commas, doubled quotes and line breaks), at most `limit` of them. */
export function csvRows(text: string, limit = Infinity): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < text.length && rows.length < limit; index++) {
    const char = text[index]!;
    if (quoted) {
      if (char !== '"') cell += char;
      else if (text[index + 1] === '"') {
        cell += '"';
        index++;
      } else quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[index + 1] === '\n') index++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += char;
  }
  if ((cell !== '' || row.length > 0) && rows.length < limit) rows.push([...row, cell]);
  return rows;
}
