import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a webhook may never reach unless WEBHOOK_ALLOW_PRIVATE is on: this host, private and
 * shared networks, link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254 among them),
 * multicast, documentation and reserved ranges.
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
/**
 * IPv6: only global unicast (2000::/3) may be reached, less the prefixes in it that are not an
 * ordinary host: the IETF protocol assignments (2001::/23: Teredo 2001::/32, which embeds an IPv4
 * address, benchmarking, ORCHID 2001:10::/28 and 2001:20::/28, AMT, AS112...), documentation
 * (2001:db8::/32, 3fff::/20) and 6to4 (2002::/16, which embeds an IPv4 address and reaches it
 * through a relay). Everything outside 2000::/3 is refused: loopback, unspecified, unique-local
 * (fd00:ec2::254, the EC2 metadata address, is in it), link-local, site-local, multicast, NAT64
 * (64:ff9b::/96, 64:ff9b:1::/48: they may reach any IPv4 address, private ones included), discard,
 * IPv4-compatible, SRv6; except the IPv4-mapped (::ffff:0:0/96) and IPv4-translated
 * (::ffff:0:0:0/96) forms, which are judged by the IPv4 address they carry.
 */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');
const SPECIAL_IN_GLOBAL = new BlockList();
for (const [network, prefix] of [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT, AS112...
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['3fff::', 20], // documentation
] as const) {
  SPECIAL_IN_GLOBAL.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail becomes two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : new Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => parseInt(group, 16));
}

/** The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or IPv4-translated (::ffff:0:a.b.c.d) IPv6 address carries, or null. */
function embeddedIpv4(address: string): string | null {
  const groups = ipv6Groups(address);
  const mapped = groups[4] === 0 && groups[5] === 0xffff;
  const translated = groups[4] === 0xffff && groups[5] === 0;
  if (groups.slice(0, 4).some((group) => group !== 0) || !(mapped || translated)) return null;
  const [high, low] = [groups[6]!, groups[7]!];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether a literal IP address is one a webhook may not reach (unless private addresses are allowed). */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const family = isIP(bare);
  if (family === 0) return true; // not an address at all: refuse rather than guess
  if (family === 4) return BLOCKED.check(bare, 'ipv4');
  const v4 = embeddedIpv4(bare);
  if (v4 !== null) return BLOCKED.check(v4, 'ipv4');
  return !GLOBAL_UNICAST.check(bare, 'ipv6') || SPECIAL_IN_GLOBAL.check(bare, 'ipv6');
}

/**
 * The one answer to every refused webhook host, whatever the reason (no address, a private one, a
 * literal one): told apart, "does not resolve" and "resolves to 10.1.2.3" would let a caller map
 * internal DNS names through the gateway. The reason goes to the log (WebhookAddressError.message).
 */
export const ADDRESS_REFUSED = 'its host does not resolve, or resolves to a private, loopback, link-local or reserved address';

export class WebhookAddressError extends Error {
  constructor(
    message: string,
    /** The reason behind a generic message, for the operator's log only. */
    readonly detail: string = message,
  ) {
    super(message);
    this.name = 'WebhookAddressError';
  }
}

/** Every address the host resolves to (node:dns lookup, all families); a literal IP is its own answer. */
export async function resolveHost(hostname: string): Promise<string[]> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return [bare];
  const found = await dnsLookup(bare, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

/** Refuses a host any of whose addresses is blocked (all of them are checked, since a client may pick any). */
export async function assertPublicHost(hostname: string): Promise<string[]> {
  let addresses: string[];
  try {
    addresses = await resolveHost(hostname);
  } catch {
    throw new WebhookAddressError(`The host ${hostname} does not resolve`);
  }
  if (addresses.length === 0) throw new WebhookAddressError(`The host ${hostname} does not resolve`);
  const blocked = addresses.find(isBlockedAddress);
  if (blocked !== undefined) {
    throw new WebhookAddressError(`The host ${hostname} resolves to ${blocked}, a private, loopback, link-local or reserved address`);
  }
  return addresses;
}

/**
 * A `lookup` for http(s).request that resolves, checks every address, then hands the socket only the
 * checked ones: what is connected to is what was checked (no second resolution a DNS rebinding could
 * answer differently). A name that does not resolve and one that resolves to a blocked address fail
 * alike (`Refused: ` and ADDRESS_REFUSED), since the failure is shown to the endpoint's organization.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  const refused = (detail: string) => new WebhookAddressError(`Refused: ${ADDRESS_REFUSED}`, detail);
  return (hostname, options, callback) => {
    resolveHost(hostname)
      .catch(() => {
        throw refused(`The host ${hostname} does not resolve`);
      })
      .then((addresses) => {
        if (addresses.length === 0) throw refused(`The host ${hostname} does not resolve`);
        const blocked = allowPrivate ? undefined : addresses.find(isBlockedAddress);
        if (blocked !== undefined) throw refused(`The host ${hostname} resolves to ${blocked}, a private, loopback, link-local or reserved address`);
        const family = typeof options === 'object' && options ? options.family : undefined;
        const wanted = addresses.map((address) => ({ address, family: isIP(address) })).filter((entry) => !family || family === 0 || entry.family === family);
        if (wanted.length === 0) throw new WebhookAddressError(`The host ${hostname} has no address of the family asked for`);
        if (typeof options === 'object' && options?.all) (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}

/**
 * The check of a URL the gateway will send to (a webhook endpoint, an HTTP tool, an MCP server) when
 * it is saved: absolute, https (http too when private addresses are allowed), no credentials or
 * fragment, and a host that resolves only to public addresses. Answers the reason, or null; an
 * address refused for any reason gets the one ADDRESS_REFUSED message, its cause in `detail` for the log.
 */
export async function outboundUrlProblem(raw: string, allowPrivate: boolean, field = 'url'): Promise<{ message: string; detail?: string } | null> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { message: `${field} must be an absolute https URL` };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return { message: `${field} must use https${allowPrivate ? ' or http' : ''}, got ${url.protocol.replace(/:$/, '')}` };
  }
  if (url.username || url.password)
    return { message: `${field} must not carry credentials (user:password@); authenticate requests by their signature or a header` };
  if (url.hash) return { message: `${field} must not have a fragment (#…)` };
  if (allowPrivate) return null;
  try {
    await assertPublicHost(url.hostname);
  } catch (error) {
    if (error instanceof WebhookAddressError) return { message: `${field} is refused: ${ADDRESS_REFUSED}`, detail: error.message };
    throw error;
  }
  return null;
}
