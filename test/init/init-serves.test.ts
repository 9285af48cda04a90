/**
 * End to end: the config `git-cms init` writes for each example site makes the real server list
 * every entry the site has, under the ids section 11 gives them, each readable and titled.
 * Needs the layouts of section 11 (folder, format, nested, indexFile, files) in the service.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parse } from 'yaml'
import { EXAMPLE_SITES, makeExampleSite } from '../helpers/example-site.js'
import { entriesOf, type LayoutKeys } from '../helpers/site-entries.js'
import { git, startServer } from '../helpers/site.js'
import { fromRoot } from '../helpers/repo-root.js'

const BIN = fromRoot('bin/git-cms')

async function init (dir: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [BIN, 'init', '--repo', dir], { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (err === null) resolve(); else reject(new Error(`init failed: ${stderr}`))
    })
  })
}

interface ListedEntry { id: string, data?: Record<string, unknown>, readError?: { message: string } }

for (const site of EXAMPLE_SITES) {
  t.test(`${site}: the server lists every entry of every collection init configured`, async t => {
    const dir = await makeExampleSite(t, site)
    await init(dir)
    git(dir, 'add', 'cms.config.yaml')
    git(dir, 'commit', '-q', '-m', 'git cms init')
    const { collections } = parse(await readFile(path.join(dir, 'cms.config.yaml'), 'utf8')) as { collections: Record<string, LayoutKeys & { titleField?: string }> }
    const s = await startServer(t, { repoDir: dir })
    const cookie = await s.login()
    for (const [name, def] of Object.entries(collections)) {
      const expected = await entriesOf(dir, def)
      const res = await s.request(`/api/cms/entries?collection=${encodeURIComponent(name)}&pageSize=100`, { headers: { cookie } })
      t.equal(res.status, 200, `${name}: listed`)
      if (res.status !== 200) continue
      const body = await res.json() as { entries: ListedEntry[] }
      t.same(body.entries.map(e => e.id).sort(), [...expected.keys()].sort(), `${name}: every entry, by its file's id`)
      for (const entry of body.entries) {
        t.equal(entry.readError, undefined, `${name}/${entry.id}: readable`)
        if (def.titleField !== undefined) t.match(entry.data?.[def.titleField], /\S/, `${name}/${entry.id}: has its ${def.titleField}`)
      }
    }
  })
}
