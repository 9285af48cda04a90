/**
 * A signed-in editor talking to the server over HTTP, timing every request from send to the end
 * of its body. It uses node:http with a keep-alive agent of its own:
 * the load generator shares the 2 cores with the server, and node:http costs the client about a
 * third of what global fetch (undici) does per request, which would otherwise be charged to the
 * server's figures.
 */
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import { BENCH_PASSWORD } from './cms-process.js'

/** A JSON response and how long it took. */
export interface Timed<T> {
  status: number
  body: T
  ms: number
}

/** A request that did not answer 2xx. */
export class HttpStatusError extends Error {
  /**
   * @param method the method
   * @param path the path
   * @param status the status
   * @param body the response text
   */
  constructor (method: string, path: string, readonly status: number, body: string) {
    super(`${method} ${path}: HTTP ${status} ${body.slice(0, 200)}`)
  }
}

/** One editor session against one server. */
export class ApiClient {
  private cookie = ''
  /** An idle kept-alive socket is dropped before the server's 5 s keep-alive timeout closes it under us (ECONNRESET). */
  private readonly agent = new http.Agent({ keepAlive: true, timeout: 4000 })

  /**
   * @param baseUrl the server (`http://127.0.0.1:PORT`)
   * @param apiBase the API base path
   */
  constructor (readonly baseUrl: string, readonly apiBase = '/api/cms') {}

  /**
   * Signs in with the bench password; every login is a new editor (a new editorId).
   * @returns the identity the server returned
   */
  async login (): Promise<{ id: string }> {
    const res = await this.request('POST', '/auth/login', { 'content-type': 'application/json' }, JSON.stringify({ password: BENCH_PASSWORD }))
    const text = res.text
    if (res.status !== 200) throw new HttpStatusError('POST', '/auth/login', res.status, text)
    this.cookie = (res.setCookie[0] ?? '').split(';')[0] ?? ''
    if (this.cookie === '') throw new Error('login answered 200 without a session cookie')
    const body = JSON.parse(text) as { identity?: { id: string } }
    return { id: body.identity?.id ?? '' }
  }

  /**
   * The same session against another server (another instance of the same site).
   * @param baseUrl that server
   * @returns a client carrying this client's session cookie
   */
  sameSessionOn (baseUrl: string): ApiClient {
    const other = new ApiClient(baseUrl, this.apiBase)
    other.cookie = this.cookie
    return other
  }

  /**
   * GETs an API path.
   * @param path path under the API base, with query
   * @returns the parsed body and the time
   */
  async get<T> (path: string): Promise<Timed<T>> {
    return await this.send<T>('GET', path)
  }

  /**
   * POSTs a JSON body to an API path with the request-forgery header.
   * @param path path under the API base
   * @param body the JSON body
   * @returns the parsed body and the time
   */
  async post<T> (path: string, body: unknown): Promise<Timed<T>> {
    return await this.send<T>('POST', path, body)
  }

  private async send<T> (method: string, path: string, body?: unknown): Promise<Timed<T>> {
    const headers: Record<string, string> = { cookie: this.cookie }
    if (body !== undefined) {
      headers['content-type'] = 'application/json'
      headers['x-cms-request'] = '1'
    }
    const started = performance.now()
    const res = await this.request(method, path, headers, body !== undefined ? JSON.stringify(body) : undefined)
    const ms = performance.now() - started
    if (res.status < 200 || res.status > 299) throw new HttpStatusError(method, path, res.status, res.text)
    return { status: res.status, body: JSON.parse(res.text) as T, ms }
  }

  private async request (method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number, text: string, setCookie: string[] }> {
    return await new Promise((resolve, reject) => {
      const req = http.request(`${this.baseUrl}${this.apiBase}${path}`, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => { chunks.push(c) })
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), setCookie: res.headers['set-cookie'] ?? [] }) })
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  /** Closes the client's kept-alive connection. */
  close (): void {
    this.agent.destroy()
  }
}

/** The outcome of a load run. */
export interface LoadResult {
  /** Latency of each successful task (ms). */
  latencies: number[]
  /** Wall time of the whole run (ms). */
  elapsedMs: number
  /** Tasks that threw, with the first error message. */
  errors: number
  firstError: string | null
}

/**
 * Runs `total` tasks with `concurrency` workers; each worker takes the next task index until none
 * is left (or until `maxMs` has passed, so a slow server cannot stretch the bench for minutes).
 * A task returns its own latency (ms).
 * @param concurrency number of workers
 * @param total number of tasks
 * @param task runs task i (receives its worker number too)
 * @param maxMs stop starting tasks after this long (default: no limit)
 * @returns latencies, wall time and errors
 */
export async function runLoad (concurrency: number, total: number, task: (i: number, worker: number) => Promise<number>, maxMs = Infinity): Promise<LoadResult> {
  const latencies: number[] = []
  let next = 0
  let errors = 0
  let firstError: string | null = null
  const started = performance.now()
  const deadline = started + maxMs
  const worker = async (w: number): Promise<void> => {
    while (next < total && performance.now() < deadline) {
      const i = next++
      try {
        latencies.push(await task(i, w))
      } catch (err) {
        errors++
        firstError ??= err instanceof Error ? err.message : String(err)
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => { await worker(w) }))
  return { latencies, elapsedMs: performance.now() - started, errors, firstError }
}
