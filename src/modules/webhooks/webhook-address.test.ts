import { assertPublicHost, guardedLookup, isBlockedAddress } from './webhook-address.js';

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '169.254.0.1',
    '100.64.0.1', '100.127.255.255', '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1',
    '::1', '::', 'fd00:ec2::254', 'fc00::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254',
    '::ffff:10.0.0.1', '::127.0.0.1', '64:ff9b::a00:1', '[::1]', 'fe80::1%eth0', 'not-an-address',
  ])('refuses %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '169.253.255.255', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8'])(
    'lets %s through',
    (address) => {
      expect(isBlockedAddress(address)).toBe(false);
    },
  );
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
});
