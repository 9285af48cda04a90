/**
 * Facts about the client that only a trusted proxy may override: its address (the rate-limit key)
 * and whether it used HTTPS (the cookie's Secure flag). Without CMS_TRUST_PROXY the headers a
 * client sends are ignored; with it, only what the nearest proxy wrote is believed.
 */
import type { IncomingMessage } from 'node:http'
import { isIPv6 } from 'node:net'
import type { TLSSocket } from 'node:tls'

/**
 * The client's address for rate limiting: the socket's peer, or with a trusted proxy the last
 * `X-Forwarded-For` hop (the one the nearest proxy appended; earlier hops are the client's say).
 * @returns an address string ('unknown' when the socket has none)
 */
export function clientAddress (req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for']
    // Node joins repeated X-Forwarded-For headers with ', ', so the last hop is the last item.
    const hops = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map(h => h.trim()).filter(h => h !== '')
    const last = hops[hops.length - 1]
    if (last !== undefined) return last
  }
  return req.socket.remoteAddress ?? 'unknown'
}

/**
 * The key a client's failed logins count under: an IPv4 address as it is, an IPv6 address by its
 * /64 (one host is usually given a whole /64, so keying by /128 gives it 2^64 buckets).
 */
export function rateLimitKey (address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0] ?? ''
  if (!isIPv6(bare)) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)
  if (mapped !== null) return mapped[1]!
  const [head = '', tail] = bare.split('::')
  const first = head === '' ? [] : head.split(':')
  const last = tail === undefined || tail === '' ? [] : tail.split(':')
  // An IPv4 tail (`::1.2.3.4`) is two groups.
  const lastCount = last.length + (last.some(g => g.includes('.')) ? 1 : 0)
  const groups = tail === undefined ? first : [...first, ...Array<string>(8 - first.length - lastCount).fill('0'), ...last]
  return groups.slice(0, 4).map(g => g.includes('.') ? g : parseInt(g, 16).toString(16)).join(':') + '::/64'
}

/**
 * Whether the client reached us over HTTPS: a TLS socket, or with a trusted proxy an
 * `X-Forwarded-Proto` of `https`. Decided here rather than by Koa's `ctx.secure`, so it follows
 * CMS_TRUST_PROXY even when the CMS is mounted inside another Koa app with its own `proxy` setting.
 */
export function isHttps (req: IncomingMessage, trustProxy: boolean): boolean {
  if ((req.socket as Partial<TLSSocket>).encrypted === true) return true
  if (!trustProxy) return false
  const header = req.headers['x-forwarded-proto']
  const value = (Array.isArray(header) ? header[0] : header) ?? ''
  return value.split(',')[0]?.trim().toLowerCase() === 'https'
}
