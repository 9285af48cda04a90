/**
 * A real local HTTP receiver for the publish tests: records every request (method, headers, exact
 * body bytes) and answers with whatever the test sets.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received { method: string, headers: IncomingHttpHeaders, body: Buffer }

export interface Receiver {
  url: string
  requests: Received[]
  /** What the next requests get: status, JSON body, delay before answering. */
  reply: { status: number, body?: unknown, delayMs?: number }
}

/**
 * Starts a receiver on port 0.
 * @param t the tap test (closes the server at teardown)
 * @param t.teardown registers the cleanup
 * @returns the receiver
 */
export async function startReceiver (t: { teardown: (fn: () => unknown) => void }): Promise<Receiver> {
  const receiver: Receiver = { url: '', requests: [], reply: { status: 200 } }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      receiver.requests.push({ method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks) })
      const { status, body, delayMs } = receiver.reply
      const answer = (): void => {
        if (res.destroyed) return
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(body === undefined ? '{}' : typeof body === 'string' ? body : JSON.stringify(body))
      }
      if (delayMs !== undefined) setTimeout(answer, delayMs)
      else answer()
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  return receiver
}
