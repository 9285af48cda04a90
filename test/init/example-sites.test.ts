/**
 * The example sites themselves: copied into a real repository byte for byte (CRLF and PNG bytes
 * intact), with the layouts the tests of the formats, layouts and `git cms init` rely on.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { EXAMPLE_SITES, EXAMPLE_SITES_DIR, makeExampleSite } from '../helpers/example-site.js'
import { git } from '../helpers/site.js'

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

t.test('each example site becomes a committed repository with every file of the fixture', async t => {
  for (const name of EXAMPLE_SITES) {
    const dir = await makeExampleSite(t, name)
    const committed = git(dir, 'ls-files').split('\n').sort()
    const fixture = execFileSync('git', ['ls-files', '--others', '--cached', '--', '.'], { cwd: path.join(EXAMPLE_SITES_DIR, name), encoding: 'utf8' }).trim().split('\n').sort()
    t.same(committed, fixture, `${name}: the repository holds the fixture's files`)
    t.equal(git(dir, 'status', '--porcelain'), '', `${name}: nothing left uncommitted`)
  }
})

t.test('the CRLF post reaches the repository with its CRLF line endings', async t => {
  const dir = await makeExampleSite(t, 'jekyll')
  const rel = '_posts/2021-11-30-written-on-windows.md'
  const blob = execFileSync('git', ['cat-file', 'blob', `HEAD:${rel}`], { cwd: dir })
  t.ok(blob.includes('---\r\nlayout: post\r\n'), 'the committed blob has CRLF')
  t.notOk(/[^\r]\n/.test(blob.toString('latin1')), 'no bare LF')
  t.same(await readFile(path.join(dir, rel)), blob, 'working file equals the blob')
})

t.test('bundle images are real PNG files', async t => {
  const dir = await makeExampleSite(t, 'hugo')
  for (const rel of ['content/post/hello-world/cover.png', 'content/post/rich-content/diagram.png', 'static/images/avatar.png']) {
    const bytes = await readFile(path.join(dir, rel))
    t.same(bytes.subarray(0, 8), PNG_SIGNATURE, `${rel} starts with the PNG signature`)
    t.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR', `${rel} has its IHDR chunk first`)
    t.equal(bytes.subarray(-8, -4).toString('latin1'), 'IEND', `${rel} ends with IEND`)
  }
})

t.test('makeExampleSite applies extra, replaced and deleted files', async t => {
  const dir = await makeExampleSite(t, 'astro', { 'src/content/blog/extra.md': '---\ntitle: Extra\n---\n', 'src/content/authors/grace.json': null })
  const files = git(dir, 'ls-files').split('\n')
  t.ok(files.includes('src/content/blog/extra.md'))
  t.notOk(files.includes('src/content/authors/grace.json'))
})
