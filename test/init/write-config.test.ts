/**
 * Writing cms.config.yaml: created exclusively (an existing config of any kind, even a dangling
 * link named like one, blocks it), nothing left behind, replaced only when forced.
 */
import t from 'tap'
import { readFile, readdir, rm, symlink } from 'node:fs/promises'
import path from 'node:path'
import { writeConfig } from '../../lib/init/init-site.js'
import { makeSite } from '../helpers/site.js'

t.test('writeConfig: created exclusively, no temporary file left behind, refused when a config appears', async t => {
  const dir = await makeSite(t, {}, { fixtures: false, commit: false })
  t.same(await writeConfig(dir, 'collections: {}\n', false), [])
  t.equal(await readFile(path.join(dir, 'cms.config.yaml'), 'utf8'), 'collections: {}\n')
  await t.rejects(writeConfig(dir, 'collections: { x: {} }\n', false), /cms\.config\.yaml already exists; nothing was written/)
  t.equal(await readFile(path.join(dir, 'cms.config.yaml'), 'utf8'), 'collections: {}\n', 'unchanged')
  t.same((await readdir(dir)).filter(n => n !== '.git'), ['cms.config.yaml'], 'no temporary file left')
  await symlink(path.join(dir, 'nowhere.yaml'), path.join(dir, 'cms.config.yml'))
  await rm(path.join(dir, 'cms.config.yaml'))
  await t.rejects(writeConfig(dir, 'collections: {}\n', false), /already exists/, 'even a dangling link named like a config blocks init')
  t.same((await readdir(dir)).filter(n => n !== '.git').sort(), ['cms.config.yml'])
})

t.test('writeConfig with force: replaces atomically and removes the other config files', async t => {
  const dir = await makeSite(t, { 'cms.config.json': '{}\n', 'cms.config.yaml': 'old: true\n' }, { fixtures: false, commit: false })
  t.same(await writeConfig(dir, 'collections: {}\n', true), ['cms.config.yaml', 'cms.config.json'])
  t.same((await readdir(dir)).filter(n => n !== '.git').sort(), ['cms.config.yaml'])
  t.equal(await readFile(path.join(dir, 'cms.config.yaml'), 'utf8'), 'collections: {}\n')
})
