/**
 * The crash tests' burst: one client per entry saves `n = 1, 2, ...` into its own entry of a JSON
 * collection until the server is killed with SIGKILL, once every client had `minAcked` saves
 * acknowledged (or a minute passed).
 */
import type { SpawnedServer } from './spawn-server.js'

const API = '/api/cms'

/**
 * Saves from `entries` clients (entries `e0`..`e<entries-1>` of `collection`, field `n`), kills the
 * server mid-burst and waits for the clients to stop.
 * @param server the spawned server
 * @param cookie a signed-in editor's cookie
 * @param opts the collection, how many entries, how many saves each client must have had acknowledged before the kill
 * @returns the last acknowledged value per entry (0: none)
 */
export async function saveUntilKilled (server: SpawnedServer, cookie: string, opts: { collection: string, entries: number, minAcked: number }): Promise<number[]> {
  const acked = new Array<number>(opts.entries).fill(0)
  let stop = false
  const client = async (i: number): Promise<void> => {
    for (let n = 1; !stop; n++) {
      try {
        const res = await fetch(`${server.url}${API}/mutate`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/json', 'x-cms-request': '1' },
          body: JSON.stringify({ type: 'save_field', collection: opts.collection, id: `e${i}`, field: 'n', value: n })
        })
        if (res.status !== 200) return
        acked[i] = n
      } catch { return }
    }
  }
  const clients = Array.from({ length: opts.entries }, async (_, i) => await client(i))
  const deadline = Date.now() + 60000
  while (Date.now() < deadline && acked.some(n => n < opts.minAcked)) await new Promise(resolve => setTimeout(resolve, 20))
  await server.kill('SIGKILL')
  stop = true
  await Promise.all(clients)
  return acked
}
