/** The HTTP listener of `serve` and `demo`, whose close lets requests in flight (a publish included) finish first. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Cms } from './cms.js'

/** A listening server. */
export interface RunningServer {
  /** `http://HOST:PORT` with the port actually bound. */
  url: string
  server: Server
  /** Stops accepting connections, waits for requests in flight to finish, then closes the instance. */
  close: () => Promise<void>
}

const IDLE_SWEEP_MS = 50
/** After this long, a close drops connections that are still busy. */
const DRAIN_TIMEOUT_MS = 30_000

/**
 * Listens on host and port with the instance's Koa app; rejects when the port cannot be bound.
 * @param opts the instance whose `app` answers, the address to bind (default 127.0.0.1) and the port (0: any free one)
 * @returns the running server
 */
export async function startServer (opts: { cms: Cms, host?: string, port: number }): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1'
  const server = createServer(opts.cms.app.callback())
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => { reject(err) }
    server.once('error', onError)
    server.listen(opts.port, host, () => {
      server.off('error', onError)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  let closing: Promise<void> | null = null
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    server,
    close: async () => {
      closing ??= drain(server, DRAIN_TIMEOUT_MS).then(async () => { await opts.cms.close() })
      await closing
    }
  }
}

/** Closes the listener and waits for open requests, sweeping the connections that become idle. */
async function drain (server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>(resolve => server.close(() => { resolve() }))
  server.closeIdleConnections()
  const sweep = setInterval(() => { server.closeIdleConnections() }, IDLE_SWEEP_MS)
  const force = setTimeout(() => { server.closeAllConnections() }, timeoutMs)
  try {
    await closed
  } finally {
    clearInterval(sweep)
    clearTimeout(force)
  }
}
