/** Recognises a site's generator and where it keeps content; JavaScript configs are searched with patterns, never run. */
import { lstat, readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { isPlainObject } from '../content/data-diff.js'
import { parseEntry } from '../content/formats.js'
import { formatOfFile } from '../storage/entry-paths.js'
import { astroLocales, commonFolder, hugoLanguages, localeFolders, orderLocales, type InitI18n } from './detect-locales.js'

/** The generators init recognises. */
export type Generator = 'hugo' | 'jekyll' | 'astro' | 'eleventy' | 'markdown'

/** Human names of the generators, for the summary. */
export const GENERATOR_NAMES: Record<Generator, string> = {
  hugo: 'Hugo', jekyll: 'Jekyll', astro: 'Astro', eleventy: 'Eleventy', markdown: 'plain Markdown folders'
}

/** A place where a generator keeps content. */
export interface ContentSource {
  /** Relative to the repository root, `/`-separated; `.` is the root. */
  folder: string
  /** The collection name it suggests (normalised later). */
  name: string
  /** `folder`: a folder collection; `files`: its own files, listed one by one (data folders, root pages). */
  kind: 'folder' | 'files'
  /** Whether files in subfolders count (folder sources). */
  recursive: boolean
  /** Only Markdown (md, mdx) files are content here; other files are the generator's own (Eleventy directory data). */
  pagesOnly: boolean
  /** A folder holding `index.md(x)` is one page (Hugo's leaf bundles); other generators: false. */
  bundles?: boolean
  /** The collection's translations (CONTRACT section 15). */
  i18n?: InitI18n
  /** Only these folders below `folder` hold entries (locale folders when no locale sits at the root). */
  roots?: string[]
}

/** What detection found. */
export interface DetectedSite {
  generator: Generator
  /** The generator's config file that gave it away (relative), or null. */
  configFile: string | null
  sources: ContentSource[]
  /** Things worth telling the user (a declared collection without a folder...). */
  notes: string[]
}

const MAX_CONFIG_BYTES = 1024 * 1024
/** Repository documents that are not site pages, when they sit at a site's root. */
export const REPO_DOCUMENTS = /^(readme|license|licence|changelog|contributing|code_of_conduct|security|history)(\.|$)/i

/** Looks at a repository and says which generator built it and where its content lives. */
export async function detectGenerator (repoDir: string): Promise<DetectedSite> {
  return await detectHugo(repoDir) ??
    await detectJekyll(repoDir) ??
    await detectAstro(repoDir) ??
    await detectEleventy(repoDir) ??
    await detectMarkdown(repoDir)
}

async function detectHugo (repoDir: string): Promise<DetectedSite | null> {
  const own = await firstFile(repoDir, ['hugo.toml', 'hugo.yaml', 'hugo.yml', 'hugo.json', 'config/_default/hugo.toml', 'config/_default/hugo.yaml', 'config/_default/hugo.yml', 'config/_default/hugo.json'])
  const shared = own ?? await firstFile(repoDir, ['config.toml', 'config.yaml', 'config.yml', 'config.json', 'config/_default/config.toml', 'config/_default/config.yaml', 'config/_default/config.yml', 'config/_default/config.json'])
  // config.* alone is too common a name: it is Hugo's only beside Hugo's own folders.
  const hugoFolders = await Promise.all(['content', 'archetypes', 'layouts', 'themes'].map(async dir => await isDir(repoDir, dir)))
  if (shared === null || (own === null && !hugoFolders.includes(true))) return null
  const config = await readConfigData(repoDir, shared)
  if (config.languages === undefined) {
    const languagesFile = await firstFile(repoDir, ['config/_default/languages.toml', 'config/_default/languages.yaml', 'config/_default/languages.yml', 'config/_default/languages.json'])
    if (languagesFile !== null) config.languages = await readConfigData(repoDir, languagesFile)
  }
  const contentDir = safeRelative(config.contentDir) ?? 'content'
  const dataDir = safeRelative(config.dataDir) ?? 'data'
  const languages = hugoLanguages(config, contentDir, safeRelative)
  const dirs = languages === null ? [] : [...new Set(languages.contentDirs.values())]
  const sources: ContentSource[] = []
  const notes: string[] = []
  if (languages !== null && dirs.length > 1) {
    // A content folder per language: one collection over all of them, each file in its language.
    const base = commonFolder(dirs)
    const roots = dirs.map(dir => path.posix.relative(base, dir))
    const i18n: InitI18n = { locales: languages.locales, layout: 'dirs', folders: Object.fromEntries(languages.contentDirs) }
    sources.push({ folder: base, name: 'pages', kind: 'folder', recursive: true, pagesOnly: true, bundles: true, i18n, ...(roots.includes('') ? {} : { roots }) })
    notes.push(`Languages ${languages.locales.join(', ')}: one collection over ${dirs.map(d => `${d}/`).join(', ')}`)
  } else {
    const i18n: InitI18n | undefined = languages === null ? undefined : { locales: languages.locales, layout: 'suffix' }
    sources.push({ folder: contentDir, name: 'pages', kind: 'folder', recursive: false, pagesOnly: true, ...(i18n === undefined ? {} : { i18n }) })
    for (const sub of await subfolders(repoDir, contentDir)) sources.push({ folder: `${contentDir}/${sub}`, name: sub, kind: 'folder', recursive: true, pagesOnly: false, bundles: true, ...(i18n === undefined ? {} : { i18n }) })
  }
  sources.push(...await dataSources(repoDir, dataDir))
  return { generator: 'hugo', configFile: shared, sources, notes }
}

async function detectJekyll (repoDir: string): Promise<DetectedSite | null> {
  const configFile = await firstFile(repoDir, ['_config.yml', '_config.yaml'])
  if (configFile === null) return null
  const config = await readConfigData(repoDir, configFile)
  const source = safeRelative(config.source) ?? '.'
  const at = (rel: string): string => source === '.' ? rel : `${source}/${rel}`
  const collectionsDir = safeRelative(config.collections_dir)
  const inCollections = (rel: string): string => at(collectionsDir === null ? rel : `${collectionsDir}/${rel}`)
  const sources: ContentSource[] = [
    { folder: inCollections('_posts'), name: 'posts', kind: 'folder', recursive: true, pagesOnly: true },
    { folder: inCollections('_drafts'), name: 'drafts', kind: 'folder', recursive: true, pagesOnly: true }
  ]
  const declared = config.collections
  const names = Array.isArray(declared) ? declared.filter((n): n is string => typeof n === 'string') : isPlainObject(declared) ? Object.keys(declared) : []
  const notes: string[] = []
  for (const name of names) {
    if (name === 'posts' || name === 'drafts') continue
    const folder = inCollections(`_${name}`)
    if (safeRelative(folder) === null) continue
    if (!(await isDir(repoDir, folder))) notes.push(`_config.yml declares the collection '${name}' but ${folder}/ does not exist`)
    sources.push({ folder, name, kind: 'folder', recursive: true, pagesOnly: false })
  }
  sources.push(...await dataSources(repoDir, at(safeRelative(config.data_dir) ?? '_data')))
  sources.push({ folder: source, name: 'pages', kind: 'files', recursive: false, pagesOnly: true })
  // Any other folder Jekyll renders (not `_`-prefixed, not excluded) may hold pages: `blog/`, `docs/`.
  const excluded = new Set(['assets', 'vendor', 'node_modules', '_site', ...stringList(config.exclude)])
  const pageFolders = (await subfolders(repoDir, source)).filter(sub => !sub.startsWith('_') && !excluded.has(sub))
  sources.push(...byLocale(source, pageFolders, config))
  return { generator: 'jekyll', configFile, sources, notes }
}

async function detectAstro (repoDir: string): Promise<DetectedSite | null> {
  const configFile = await firstFile(repoDir, ['astro.config.mjs', 'astro.config.js', 'astro.config.ts', 'astro.config.mts', 'astro.config.cjs'])
  if (configFile === null && !(await packageUses(repoDir, 'astro'))) return null
  const contentConfig = await firstFile(repoDir, ['src/content.config.ts', 'src/content.config.mjs', 'src/content.config.js', 'src/content/config.ts', 'src/content/config.mjs', 'src/content/config.js', 'src/content/config.mts'])
  const declared = contentConfig === null ? [] : astroCollections(await readSmall(repoDir, contentConfig))
  const sources = (await subfolders(repoDir, 'src/content'))
    .map((sub): ContentSource => ({ folder: `src/content/${sub}`, name: sub, kind: 'folder', recursive: true, pagesOnly: false }))
  const notes: string[] = []
  for (const { name, base } of declared) {
    if (sources.some(source => source.folder === (base ?? `src/content/${name}`))) continue
    if (base !== null && await isDir(repoDir, base)) sources.push({ folder: base, name, kind: 'folder', recursive: true, pagesOnly: false })
    else notes.push(`${contentConfig ?? 'the content config'} declares the collection '${name}' but no folder of its files was found`)
  }
  // Markdown files under src/pages are pages Astro renders as they are (the .astro files beside them are code).
  if (await isDir(repoDir, 'src/pages')) sources.push({ folder: 'src/pages', name: 'pages', kind: 'folder', recursive: true, pagesOnly: true })
  const i18n = configFile === null ? null : astroLocales(await readSmall(repoDir, configFile))
  if (i18n !== null) {
    for (const source of sources) {
      const inFolders = (await subfolders(repoDir, source.folder)).filter(sub => i18n.locales.includes(sub))
      if (inFolders.length === 0) continue
      source.i18n = i18n
      if (i18n.rootLocale === undefined) source.roots = inFolders
      notes.push(`Locales ${i18n.locales.join(', ')} in ${source.folder}/${i18n.rootLocale === undefined ? '' : ` (${i18n.rootLocale} at its root)`}`)
    }
  }
  return { generator: 'astro', configFile: configFile ?? 'package.json', sources, notes }
}

async function detectEleventy (repoDir: string): Promise<DetectedSite | null> {
  const configFile = await firstFile(repoDir, ['eleventy.config.js', 'eleventy.config.mjs', 'eleventy.config.cjs', 'eleventy.config.ts', '.eleventy.js', '.eleventy.cjs', '.eleventy.mjs'])
  if (configFile === null && !(await packageUses(repoDir, '@11ty/eleventy'))) return null
  const text = configFile === null ? '' : await readSmall(repoDir, configFile)
  const input = safeRelative(stringOption(text, 'input')) ?? '.'
  const inInput = (rel: string): string => input === '.' ? rel : `${input}/${rel}`
  const includes = safeRelative(stringOption(text, 'includes')) ?? '_includes'
  const layouts = safeRelative(stringOption(text, 'layouts'))
  const data = safeRelative(stringOption(text, 'data')) ?? '_data'
  const output = safeRelative(stringOption(text, 'output')) ?? '_site'
  const skip = new Set([includes, data, output, layouts ?? includes, 'assets', 'node_modules', 'public', 'static', 'css', 'js', 'img', 'images', 'fonts'])
  const sources: ContentSource[] = [{ folder: input, name: 'pages', kind: input === '.' ? 'files' : 'folder', recursive: false, pagesOnly: true }]
  const pageFolders = (await subfolders(repoDir, input)).filter(sub => !skip.has(sub) && !(input === '.' && sub === output))
  sources.push(...byLocale(input, pageFolders, {}))
  sources.push(...await dataSources(repoDir, inInput(data)))
  return { generator: 'eleventy', configFile: configFile ?? 'package.json', sources, notes: [] }
}

async function detectMarkdown (repoDir: string): Promise<DetectedSite> {
  const sources: ContentSource[] = []
  if (await isDir(repoDir, 'content')) {
    for (const sub of await subfolders(repoDir, 'content')) sources.push({ folder: `content/${sub}`, name: sub, kind: 'folder', recursive: true, pagesOnly: false })
    sources.push({ folder: 'content', name: 'pages', kind: 'folder', recursive: false, pagesOnly: true })
  } else {
    const skip = new Set(['node_modules', 'dist', 'build', 'out', 'public', 'static', 'assets', 'vendor', 'coverage', 'test', 'tests', 'src', 'lib', 'bin', 'scripts'])
    for (const sub of await subfolders(repoDir, '.')) {
      if (!skip.has(sub) && !sub.startsWith('_')) sources.push({ folder: sub, name: sub, kind: 'folder', recursive: true, pagesOnly: true })
    }
    sources.push({ folder: '.', name: 'pages', kind: 'files', recursive: false, pagesOnly: true })
  }
  return { generator: 'markdown', configFile: null, sources, notes: [] }
}

/** Page folders, one collection each; two or more named like locale codes form one translated collection. */
function byLocale (parent: string, folders: string[], config: Record<string, unknown>): ContentSource[] {
  const at = (sub: string): string => parent === '.' ? sub : `${parent}/${sub}`
  const codes = localeFolders(folders)
  const sources: ContentSource[] = folders.filter(sub => !codes.includes(sub)).map(sub => ({ folder: at(sub), name: sub, kind: 'folder', recursive: true, pagesOnly: true }))
  if (codes.length > 0) {
    sources.push({ folder: parent, name: 'translated', kind: 'folder', recursive: true, pagesOnly: true, i18n: { locales: orderLocales(codes, config), layout: 'folder' }, roots: codes })
  }
  return sources
}

/** A data folder: its own files are one `files` collection; each subfolder a folder collection. */
async function dataSources (repoDir: string, dataDir: string): Promise<ContentSource[]> {
  const name = path.posix.basename(dataDir).replace(/^_+/, '') || 'data'
  const sources: ContentSource[] = [{ folder: dataDir, name, kind: 'files', recursive: false, pagesOnly: false }]
  for (const sub of await subfolders(repoDir, dataDir)) sources.push({ folder: `${dataDir}/${sub}`, name: sub, kind: 'folder', recursive: true, pagesOnly: false })
  return sources
}

/** The collections an Astro content config exports, with a `glob()` loader's literal `base` (read by patterns, never run). */
function astroCollections (text: string): Array<{ name: string, base: string | null }> {
  const bases = new Map<string, string>()
  const definitions = [...text.matchAll(/(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*defineCollection\s*\(/g)]
  definitions.forEach((match, i) => {
    const end = definitions[i + 1]?.index ?? text.length
    const base = /\bbase\s*:\s*(['"`])([^'"`]+)\1/.exec(text.slice(match.index, end))
    if (base?.[2] !== undefined && match[1] !== undefined) bases.set(match[1], base[2].replace(/^\.\//, '').replace(/\/+$/, ''))
  })
  const exported = /export\s+const\s+collections\s*=\s*\{([^}]*)\}/.exec(text)
  if (exported?.[1] === undefined) return []
  const out: Array<{ name: string, base: string | null }> = []
  for (const part of exported[1].split(',')) {
    const pair = /^\s*(?:(['"]?)([\w$-]+)\1\s*:\s*([\w$]+)|([\w$]+))\s*$/.exec(part)
    if (pair === null) continue
    const name = pair[2] ?? pair[4]
    const variable = pair[3] ?? pair[4]
    if (name === undefined || variable === undefined) continue
    const base = bases.get(variable)
    out.push({ name, base: base === undefined ? null : safeRelative(base) })
  }
  return out
}

/** The value of `key: "literal"` in a JavaScript config (Eleventy's `dir: { input: "src" }`). */
function stringOption (text: string, key: string): string | undefined {
  return new RegExp(`\\b${key}\\s*:\\s*(['"\`])([^'"\`\\n]+)\\1`).exec(text)?.[2]
}

async function readConfigData (repoDir: string, rel: string): Promise<Record<string, unknown>> {
  return await readSmall(repoDir, rel).then(text => parseEntry(formatOfFile(rel, 'yaml'), text)).catch(() => ({}))
}

async function readSmall (repoDir: string, rel: string): Promise<string> {
  const full = path.join(repoDir, rel)
  const info = await lstat(full)
  if (!info.isFile() || info.size > MAX_CONFIG_BYTES) return ''
  return await readFile(full, 'utf8')
}

async function packageUses (repoDir: string, dependency: string): Promise<boolean> {
  try {
    const pkg = JSON.parse(await readSmall(repoDir, 'package.json')) as Record<string, unknown>
    return [pkg.dependencies, pkg.devDependencies].some(deps => isPlainObject(deps) && dependency in deps)
  } catch {
    return false
  }
}

async function firstFile (repoDir: string, candidates: string[]): Promise<string | null> {
  for (const rel of candidates) {
    try { if ((await lstat(path.join(repoDir, rel))).isFile()) return rel } catch {}
  }
  return null
}

async function isDir (repoDir: string, rel: string): Promise<boolean> {
  try { return (await lstat(path.join(repoDir, rel))).isDirectory() } catch { return false }
}

/** Real (not linked), visible subfolders of a folder, sorted. */
async function subfolders (repoDir: string, rel: string): Promise<string[]> {
  const dirents = await readdir(path.join(repoDir, rel), { withFileTypes: true }).catch(() => [])
  return dirents.filter(d => d.isDirectory() && !d.name.startsWith('.') && d.name !== 'node_modules').map(d => d.name).sort()
}

/** A folder a site's config names, when it is a plain relative path (no `..`, not absolute, not under .git). */
function safeRelative (value: unknown): string | null {
  if (typeof value !== 'string') return null
  const cleaned = value.trim().replace(/\\/g, '/').replace(/^\.\/+/, '').replace(/\/+$/, '')
  if (cleaned === '' || cleaned === '.') return '.'
  const segments = cleaned.split('/')
  if (path.posix.isAbsolute(cleaned) || segments.some(s => s === '..' || s === '' || s === '.git' || s.includes('\0'))) return null
  return segments.filter(s => s !== '.').join('/')
}

function stringList (value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').map(v => v.replace(/\/+$/, '')) : []
}
