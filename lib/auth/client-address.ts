/**
 * Facts about the client that only a trusted proxy may override: its address (the rate-limit key)
 * and whether it used HTTPS (the cookie's Secure flag). Without CMS_TRUST_PROXY the headers a
 * client sends are ignored; with it, only what the nearest proxy wrote is believed.
 */
import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'

/**
 * The client's address for rate limiting: the socket's peer, or with a trusted proxy the last
 * `X-Forwarded-For` hop (the one the nearest proxy appended; earlier hops are the client's say).
 * @param req the request
 * @param trustProxy CMS_TRUST_PROXY
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
 * Whether the client reached us over HTTPS: a TLS socket, or with a trusted proxy an
 * `X-Forwarded-Proto` of `https`. Decided here rather than by Koa's `ctx.secure`, so it follows
 * CMS_TRUST_PROXY even when the CMS is mounted inside another Koa app with its own `proxy` setting.
 * @param req the request
 * @param trustProxy CMS_TRUST_PROXY
 * @returns true for HTTPS
 */
export function isHttps (req: IncomingMessage, trustProxy: boolean): boolean {
  if ((req.socket as Partial<TLSSocket>).encrypted === true) return true
  if (!trustProxy) return false
  const header = req.headers['x-forwarded-proto']
  const value = (Array.isArray(header) ? header[0] : header) ?? ''
  return value.split(',')[0]?.trim().toLowerCase() === 'https'
}
