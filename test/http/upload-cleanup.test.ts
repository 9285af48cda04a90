import t from 'tap'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { makeSite, repoFingerprint, startServer } from '../helpers/site.js'

const API = '/api/cms'

async function filesUnder (dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter(e => e.isFile()).map(e => e.name)
  } catch { return [] }
}

t.test('refused multipart requests leave nothing in .git/cms/uploads-tmp', async t => {
  const s = await startServer(t)
  const cookie = await s.login()
  const tempDir = path.join(s.repoDir, '.git/cms/uploads-tmp')
  const fp = await repoFingerprint(s.repoDir)
  const upload = async (fd: FormData): Promise<Response> => await s.request(`${API}/upload`, { method: 'POST', headers: { cookie, 'x-cms-request': '1' }, body: fd })
  const bytes = Buffer.alloc(256 * 1024, 7)

  const fieldsAfterFile = new FormData()
  fieldsAfterFile.append('file', new Blob([bytes]), 'a.png')
  for (let i = 0; i < 20; i++) fieldsAfterFile.append(`f${i}`, 'x')
  const tooManyFields = await upload(fieldsAfterFile)
  t.equal(tooManyFields.status, 400, 'too many fields after the file')
  t.match(await tooManyFields.json(), { code: 'bad_request' })

  const twoFiles = new FormData()
  twoFiles.append('file', new Blob([bytes]), 'a.png')
  twoFiles.append('other', new Blob([bytes]), 'b.png')
  t.equal((await upload(twoFiles)).status, 400, 'two files')

  for (const size of [1, 64 * 1024, 2 * 1024 * 1024]) {
    const around = new FormData()
    for (let i = 0; i < 10; i++) around.append(`f${i}`, 'x')
    around.append('file', new Blob([Buffer.alloc(size, 7)]), 'a.png')
    around.append('f10', 'x')
    t.equal((await upload(around)).status, 400, `the eleventh field right after a file of ${size} bytes`)
  }

  const wrongName = new FormData()
  wrongName.append('image', new Blob([bytes]), 'a.png')
  t.equal((await upload(wrongName)).status, 400, 'wrong part name')

  // A file stream that formidable was still writing when the refusal came must not land later.
  await delay(300)
  t.same(await filesUnder(tempDir), [], 'no temporary file left')
  t.equal(await repoFingerprint(s.repoDir), fp, 'nothing stored')
})

t.test('start-up sweeps .git/cms/uploads-tmp', async t => {
  const repoDir = await makeSite(t)
  const tempDir = path.join(repoDir, '.git/cms/uploads-tmp')
  await mkdir(path.join(tempDir, 'sub'), { recursive: true })
  await writeFile(path.join(tempDir, 'abandoned'), 'x'.repeat(1000))
  await writeFile(path.join(tempDir, 'sub', 'abandoned-too'), 'x')
  await startServer(t, { repoDir })
  t.same(await filesUnder(tempDir), [], 'left-overs of a crashed process are removed')
})
