import { phoneKey } from './phone-key.js';

describe('phoneKey', () => {
  // Security review 4, Info: +4402071234567 and +442071234567 passed as two numbers on the do-not-call list.
  it('drops a trunk 0 written after the country code where the plan dials it as one', () => {
    expect(phoneKey('+4402071234567')).toBe('+442071234567');
    expect(phoneKey('+49015112345678')).toBe('+4915112345678');
    expect(phoneKey('+330612345678')).toBe('+33612345678');
  });

  it('keeps a 0 that is part of the number, and every other number as written', () => {
    expect(phoneKey('+390612345678')).toBe('+390612345678');
    expect(phoneKey('+442071234567')).toBe('+442071234567');
    expect(phoneKey('+14155550100')).toBe('+14155550100');
    expect(phoneKey('+201012345678')).toBe('+201012345678');
    // A number the metadata cannot read (no such country code) stays as it is.
    expect(phoneKey('+9990123456')).toBe('+9990123456');
    // A 0 later than right after the country code (+1 703 0…, +44 7 0…) is no trunk prefix.
    expect(phoneKey('+17030012345')).toBe('+17030012345');
    expect(phoneKey('+4470123456789')).toBe('+4470123456789');
  });

  it('drops a trunk 0 after a three-digit country code, and keeps +1 0…, which no plan dials', () => {
    // Ireland +353: 0 is its trunk prefix.
    expect(phoneKey('+3530871234567')).toBe('+353871234567');
    expect(phoneKey('+10123456789')).toBe('+10123456789');
  });
});
