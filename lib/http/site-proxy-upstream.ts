/**
 * Forwarding to a generator's dev server (`serve --proxy <url>`) with Node's http client: method,
 * headers and streamed body go on with the upstream's Host, the session cookie never leaves, a redirect
 * to the upstream comes back as a path on ours; WebSocket upgrades (live reload) are piped both ways.
 */
import http, { type IncomingMessage, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http'
import https from 'node:https'
import type { Duplex } from 'node:stream'
import { SESSION_COOKIE_NAME } from '../auth/session-cookie.js'
import { BadGatewayError } from '../errors.js'

/** Headers of one connection only (RFC 9110 section 7.6.1), never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'])

/** How long an upstream may take to start answering. */
const UPSTREAM_TIMEOUT_MS = 30_000

/** Parses and checks the `--proxy` address; gives its origin (path, query and fragment dropped). */
export function upstreamOrigin (value: string): URL {
  const url = URL.canParse(value) ? new URL(value) : null
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') throw new Error(`--proxy needs an http:// or https:// address, got '${value}'`)
  if (url.username !== '' || url.password !== '') throw new Error('--proxy takes no user name or password')
  return new URL(url.origin)
}

/** Sends a request on to the upstream and resolves with its response (body not yet read); BadGatewayError when unreachable. */
export async function forwardRequest (req: IncomingMessage, upstream: URL): Promise<IncomingMessage> {
  const client = upstream.protocol === 'https:' ? https : http
  return await new Promise<IncomingMessage>((resolve, reject) => {
    const out = client.request(upstream, {
      method: req.method,
      path: req.url ?? '/',
      headers: forwardedHeaders(req.headers, upstream),
      timeout: UPSTREAM_TIMEOUT_MS
    }, resolve)
    out.on('timeout', () => { out.destroy(new Error('no answer in time')) })
    out.on('error', (err) => { reject(new BadGatewayError(`The site at ${upstream.origin} did not answer: ${err.message}`)) })
    req.on('aborted', () => { out.destroy() })
    if (req.method === 'GET' || req.method === 'HEAD') out.end()
    else req.pipe(out)
  })
}

/**
 * The response headers to send on: hop-by-hop ones dropped, a `Location` on the upstream's origin
 * made a path on ours.
 */
export function responseHeaders (headers: IncomingHttpHeaders, upstream: URL): OutgoingHttpHeaders {
  const out = endToEnd(headers)
  if (typeof headers.location === 'string') {
    try {
      const target = new URL(headers.location, upstream)
      if (target.origin === upstream.origin) out.location = target.pathname + target.search + target.hash
    } catch {}
  }
  return out
}

/**
 * Handles an HTTP upgrade (a WebSocket of the dev server's live reload): the same request goes to
 * the upstream, and once it switches protocols the two sockets are piped together.
 */
export function upgradeForwarder (upstream: URL, isOwnPath: (path: string) => boolean): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const client = upstream.protocol === 'https:' ? https : http
  return (req, socket, head) => {
    socket.on('error', () => { socket.destroy() })
    if (isOwnPath(new URL(req.url ?? '/', 'http://x').pathname)) { socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n'); return }
    const headers = forwardedHeaders(req.headers, upstream)
    headers.connection = 'Upgrade'
    headers.upgrade = req.headers.upgrade ?? 'websocket'
    const out = client.request(upstream, { method: req.method, path: req.url ?? '/', headers })
    out.on('upgrade', (res, upstreamSocket, upstreamHead) => {
      const lines = [`HTTP/1.1 ${res.statusCode ?? 101} ${res.statusMessage ?? 'Switching Protocols'}`]
      for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i] ?? ''}: ${res.rawHeaders[i + 1] ?? ''}`)
      socket.write(lines.join('\r\n') + '\r\n\r\n')
      if (upstreamHead.length > 0) socket.write(upstreamHead)
      if (head.length > 0) upstreamSocket.write(head)
      upstreamSocket.on('error', () => { socket.destroy() })
      socket.on('close', () => { upstreamSocket.destroy() })
      upstreamSocket.on('close', () => { socket.destroy() })
      upstreamSocket.pipe(socket).pipe(upstreamSocket)
    })
    out.on('response', (res) => {
      // The upstream refused the upgrade: its answer goes back as is, then the connection closes.
      socket.end(`HTTP/1.1 ${res.statusCode ?? 502} ${res.statusMessage ?? ''}\r\nConnection: close\r\n\r\n`)
      res.resume()
    })
    out.on('error', () => { socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n') })
    out.end()
  }
}

/** The request headers to send on: hop-by-hop ones and git-cms's session cookie dropped, Host the upstream's. */
function forwardedHeaders (headers: IncomingHttpHeaders, upstream: URL): OutgoingHttpHeaders {
  const out = endToEnd(headers)
  out.host = upstream.host
  if (typeof headers.cookie === 'string') {
    const kept = headers.cookie.split(/;\s*/).filter(pair => pair.split('=')[0]?.trim() !== SESSION_COOKIE_NAME)
    if (kept.length > 0) out.cookie = kept.join('; ')
    else delete out.cookie
  }
  return out
}

/** The headers without the hop-by-hop ones. */
function endToEnd (headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !HOP_BY_HOP.has(name)))
}
