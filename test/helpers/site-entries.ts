/**
 * Test helper: which files of a repository are entries of a collection definition, computed from
 * CONTRACT section 11's rules by a plain walk (independent of lib/), and the content files of each
 * example site as a person reading the generator's documentation would list them.
 */
import { lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import type { ExampleSiteName } from './example-site.js'

/** The keys of a collection definition that decide where its entries are. */
export interface LayoutKeys {
  folder?: string
  files?: string[]
  format?: string
  nested?: boolean
  indexFile?: string
}

/** A Markdown collection reads .md, .markdown and .mdx files alike (an Astro blog mixes them). */
const EXTENSIONS: Record<string, string[]> = {
  md: ['.md', '.markdown', '.mdx'], mdx: ['.mdx', '.md', '.markdown'], json: ['.json'], yaml: ['.yaml', '.yml'], toml: ['.toml']
}

/**
 * Every regular file below a folder (no links followed, hidden names skipped), `/`-separated.
 * @param root absolute folder
 * @returns relative paths, sorted
 */
export async function walkFiles (root: string): Promise<string[]> {
  const out: string[] = []
  const walk = async (dir: string, rel: string): Promise<void> => {
    let dirents
    try { dirents = await readdir(dir, { withFileTypes: true }) } catch { return }
    for (const d of dirents) {
      if (d.name.startsWith('.')) continue
      const childRel = rel === '' ? d.name : `${rel}/${d.name}`
      if (d.isDirectory()) await walk(path.join(dir, d.name), childRel)
      else if (d.isFile()) out.push(childRel)
    }
  }
  await walk(root, '')
  return out.sort()
}

/**
 * The entries of a collection: id -> file (relative to the repository).
 * @param repoDir the repository
 * @param def the collection's layout keys
 * @returns a map from entry id to its file
 */
export async function entriesOf (repoDir: string, def: LayoutKeys): Promise<Map<string, string>> {
  const exts = EXTENSIONS[def.format ?? 'json'] ?? []
  const hasExt = (file: string): boolean => exts.includes(path.posix.extname(file).toLowerCase())
  const stripExt = (file: string): string => file.slice(0, file.length - path.posix.extname(file).length)
  const entries = new Map<string, string>()
  if (def.files !== undefined) {
    for (const file of def.files) entries.set(stripExt(path.posix.basename(file)), file)
    return entries
  }
  const folder = def.folder ?? ''
  const files = await walkFiles(path.join(repoDir, folder))
  const bundles = new Set<string>()
  if (def.indexFile !== undefined) {
    for (const f of files) {
      const dir = path.posix.dirname(f)
      if (dir !== '.' && hasExt(f) && stripExt(path.posix.basename(f)) === def.indexFile) bundles.add(dir)
    }
  }
  const bundleOf = (f: string): string | null => {
    let found: string | null = null
    for (let dir = path.posix.dirname(f); dir !== '.'; dir = path.posix.dirname(dir)) if (bundles.has(dir)) found = dir
    return found
  }
  for (const f of files) {
    if (!hasExt(f)) continue
    const bundle = bundleOf(f)
    if (bundle !== null) {
      if (f === `${bundle}/${path.posix.basename(f)}` && stripExt(path.posix.basename(f)) === def.indexFile) entries.set(bundle, `${folder}/${f}`)
      continue
    }
    if (f.includes('/') && def.nested !== true) continue
    entries.set(stripExt(f), folder === '.' || folder === '' ? f : `${folder}/${f}`)
  }
  return entries
}

/**
 * The content files of an example site, listed from the generator's documented layout.
 * @param site which example site
 * @param repoDir its copy
 * @returns relative paths, sorted
 */
export async function contentFilesOf (site: ExampleSiteName, repoDir: string): Promise<string[]> {
  const all = await walkFiles(repoDir)
  const isFile = async (rel: string): Promise<boolean> => (await lstat(path.join(repoDir, rel))).isFile()
  const pick = (test: (f: string) => boolean): string[] => all.filter(test)
  let files: string[]
  switch (site) {
    case 'hugo':
      files = pick(f => (f.startsWith('content/') && f.endsWith('.md')) || /^data\/[^/]+$/.test(f))
      break
    case 'jekyll':
      files = pick(f => /^_(posts|drafts|projects)\/.+\.(md|markdown)$/.test(f) || /^[^/]+\.md$/.test(f) || /^_data\/[^/]+$/.test(f))
      break
    case 'astro':
      files = pick(f => f.startsWith('src/content/') && f !== 'src/content/config.ts')
      break
    case 'eleventy':
      files = pick(f => (/^src\/(posts|pages)\/.+\.md$/.test(f)) || /^src\/_data\/[^/]+$/.test(f))
      break
  }
  const out: string[] = []
  for (const f of files) if (await isFile(f)) out.push(f)
  return out.sort()
}
