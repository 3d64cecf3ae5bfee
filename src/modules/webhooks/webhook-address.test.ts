import { ADDRESS_REFUSED, assertPublicHost, guardedLookup, isBlockedAddress, WebhookAddressError } from './webhook-address.js';

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '::1',
    '::',
    'fd00:ec2::254',
    'fc00::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '[::1]',
    'fe80::1%eth0',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '169.253.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
  ])('lets %s through', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  // IPv4-translated (::ffff:0:0:0/96, RFC 2765) carries an IPv4 address like the mapped form: judged by it.
  it.each(['::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:a00:1', '::ffff:0:169.254.169.254', '[::ffff:0:7f00:1]', '::FFFF:0:7F00:1'])(
    'refuses the IPv4-translated %s by the address it carries',
    (address) => {
      expect(isBlockedAddress(address)).toBe(true);
    },
  );

  it.each(['::ffff:0:8.8.8.8', '::ffff:0:808:808', '::ffff:808:808'])('lets the IPv4-mapped or -translated %s of a public address through', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  // Only global unicast (2000::/3) is reachable: each of these is outside it, next to its edge, or a special prefix inside it.
  it.each([
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'just below 2000::/3'],
    ['4000::1', 'just above 2000::/3'],
    ['::8.8.8.8', 'IPv4-compatible (deprecated)'],
    ['::1:0:0:1', 'neither mapped nor translated'],
    ['::fffe:0:808:808', 'neither mapped nor translated'],
    ['0:0:0:1:ffff:0:808:808', 'not mapped: a non-zero group before the marker'],
    ['1::ffff:808:808', 'not mapped: a non-zero first group'],
    ['0:0:1::ffff:808:808', 'not mapped: a non-zero third group'],
    ['0:0:0:0:ffff:ffff:808:808', 'neither mapped nor translated: both marker groups set'],
    ['64:ff9b::808:808', 'NAT64'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['100::1', 'discard'],
    ['5f00::1', 'SRv6 SIDs'],
    ['fc00::1', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['2001::1', 'Teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:1::1', 'IETF protocol assignments'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    ['2001:20::1', 'ORCHIDv2'],
    ['2001:1ff:ffff::1', 'the last of 2001::/23'],
    ['2001:db8::1', 'documentation'],
    ['2001:db8:ffff:ffff::1', 'documentation'],
    ['2002::1', '6to4'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2002:808:808::1', '6to4 of a public address'],
    ['2002:ffff:ffff::1', 'the last of 6to4'],
    ['3fff::1', 'documentation (3fff::/20)'],
    ['3fff:fff:ffff::1', 'the last of 3fff::/20'],
  ])('refuses %s (%s)', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each([
    ['2000::1', 'the first of 2000::/3'],
    ['3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'the last of 2000::/3'],
    ['2001:200::1', 'the first past 2001::/23'],
    ['2001:4860:4860::8888', 'a public resolver'],
    ['2001:db7:ffff::1', 'just below 2001:db8::/32'],
    ['2001:db9::1', 'just above 2001:db8::/32'],
    ['2003::1', 'just above 6to4'],
    ['2001:ffff::1', 'just below 6to4'],
    ['3fff:1000::1', 'just above 3fff::/20'],
    ['3ffe:ffff::1', 'just below 3fff::/20'],
  ])('lets %s through (%s)', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });
});

describe('assertPublicHost', () => {
  it('refuses a name that resolves to loopback, and literal private addresses', async () => {
    await expect(assertPublicHost('localhost')).rejects.toThrow(/resolves to (127\.0\.0\.1|::1)/);
    await expect(assertPublicHost('169.254.169.254')).rejects.toThrow(/169\.254\.169\.254/);
    await expect(assertPublicHost('[fd00:ec2::254]')).rejects.toThrow(/fd00:ec2::254/);
  });

  it('answers a public literal without a lookup', async () => {
    expect(await assertPublicHost('8.8.8.8')).toEqual(['8.8.8.8']);
  });
});

describe('guardedLookup', () => {
  const lookupOf = (allowPrivate: boolean, options: object) =>
    new Promise<{ error: Error | null; address: unknown }>((resolve) =>
      guardedLookup(allowPrivate)('localhost', options as never, ((error: Error | null, address: unknown) => resolve({ error, address })) as never),
    );

  it('refuses to hand a socket a private address unless they are allowed', async () => {
    const refused = await lookupOf(false, { all: true });
    expect(refused.error?.message).toMatch(/resolves to .*private, loopback/);
    const allowed = await lookupOf(true, { all: true });
    expect(allowed.error).toBeNull();
    expect((allowed.address as { address: string }[]).every((entry) => isBlockedAddress(entry.address))).toBe(true);
    const single = await lookupOf(true, {});
    expect(['127.0.0.1', '::1']).toContain(single.address);
  });

  it('fails a name that does not resolve with the very message of a private one (no DNS oracle in the delivery log)', async () => {
    const lookup = (hostname: string, allowPrivate: boolean) =>
      new Promise<Error | null>((resolve) => guardedLookup(allowPrivate)(hostname, { all: true } as never, ((error: Error | null) => resolve(error)) as never));
    const missing = await lookup('does-not-exist.invalid', false);
    const private_ = await lookup('localhost', false);
    expect(missing).toBeInstanceOf(WebhookAddressError);
    expect(missing?.message).toBe(`Refused: ${ADDRESS_REFUSED}`);
    expect((missing as WebhookAddressError).detail).toBe('The host does-not-exist.invalid does not resolve');
    expect((private_ as WebhookAddressError).detail).toMatch(/^The host localhost resolves to (127\.0\.0\.1|::1), a private/);
    expect(private_?.message).toBe(missing?.message);
    expect((await lookup('does-not-exist.invalid', true))?.message).toBe(missing?.message);
  });
});
