import { ConfigError, loadConfig } from '../../src/config.js';

const base = { JWT_SECRET: 'a-secret-that-is-long-enough-for-the-tests-1234', DATA_DIR: '/tmp/gateway-test-unused' };

describe('runner configuration', () => {
  it('defaults: enabled, a tick a second, one-minute leases, 200 ms simulated calls, seed "gateway", calls talked through the voice engine', () => {
    expect(loadConfig(base).runner).toEqual({
      enabled: true,
      intervalMs: 1000,
      leaseMs: 60_000,
      dialerSpeedMs: 200,
      dialerSeed: 'gateway',
      dialerVoice: true,
      directCallsMax: 10,
    });
  });

  it('reads each variable', () => {
    const env = {
      ...base,
      RUNNER_ENABLED: 'false',
      RUNNER_INTERVAL_MS: '250',
      RUNNER_LEASE_MS: '5000',
      DIALER_SPEED_MS: '0',
      DIALER_SEED: 'demo',
      DIALER_VOICE: 'false',
      DIRECT_CALLS_MAX: '3',
    };
    expect(loadConfig(env).runner).toEqual({
      enabled: false,
      intervalMs: 250,
      leaseMs: 5000,
      dialerSpeedMs: 0,
      dialerSeed: 'demo',
      dialerVoice: false,
      directCallsMax: 3,
    });
  });

  it.each([
    ['RUNNER_ENABLED', 'maybe', 'RUNNER_ENABLED must be true or false, got "maybe"'],
    ['RUNNER_INTERVAL_MS', '5', 'RUNNER_INTERVAL_MS must be an integer from 10 to 3600000, got "5"'],
    ['RUNNER_LEASE_MS', 'soon', 'RUNNER_LEASE_MS must be an integer from 1000 to 86400000, got "soon"'],
    ['DIALER_SPEED_MS', '-1', 'DIALER_SPEED_MS must be an integer from 0 to 600000, got "-1"'],
    ['DIALER_VOICE', 'maybe', 'DIALER_VOICE must be true or false, got "maybe"'],
    ['DIALER_SEED', 'x'.repeat(201), 'DIALER_SEED must be at most 200 characters, got 201'],
  ])('a bad %s is one clear line', (name, value, message) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(new ConfigError(message));
  });
});
