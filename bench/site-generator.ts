/**
 * A generated site repository for the benches: N Markdown posts (frontmatter title/date/tags and a
 * body of a few paragraphs, 1-2 KB each, words drawn Zipf-like from a vocabulary of 4,000
 * deterministic pseudo-words) and a cms.config.yaml, written with plain fs calls and
 * committed once with the real git CLI.
 *
 * Sites go to the system temp directory, or BENCH_DIR. Where matters on the CI machine: its
 * journal-less ext4 makes creating a file cost 0.04 ms or 1 ms depending on how full and how
 * recently churned the directory's block group is (measured: /tmp 0.04 ms while this checkout,
 * next to node_modules, took 0.9 ms), and a save creates files.
 */
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import os from 'node:os'
import path from 'node:path'

const execFileAsync = promisify(execFile)

/** Where generated sites go: BENCH_DIR, or the system temp directory. */
function sitesDir (): string {
  return process.env.BENCH_DIR ?? os.tmpdir()
}

/** A word that appears in about one title in ten (and in no body): the bench's title search term. */
export const SEARCH_WORD = 'lantern'
/** A word that appears in about one body in three and in no title: the body-only search term. */
export const BODY_WORD = 'quillmoss'
/** A word that appears in about one body in a thousand: the rare search term. */
export const RARE_WORD = 'zephyrine'

/** Distinct words of the generated bodies (a Zipf-like distribution over them, like real text). */
const VOCABULARY_SIZE = 4000
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 've', 'so', 'pi', 'da', 'gor', 'lin', 'mar', 'tes', 'bel', 'vin', 'sor', 'al', 'en', 'or',
  'qui', 'ph', 'tra', 'ster', 'wen', 'dri', 'fal', 'hol', 'cre', 'mun', 'ba', 'zel']

/**
 * The vocabulary: VOCABULARY_SIZE deterministic pseudo-words of 2 to 4 syllables, most frequent
 * first (short ones first, as in real text), none equal to the three search words.
 */
export const VOCABULARY: readonly string[] = (() => {
  const random = seededRandom(20_260_000)
  const seen = new Set([SEARCH_WORD, BODY_WORD, RARE_WORD])
  const words: string[] = []
  while (words.length < VOCABULARY_SIZE) {
    const n = 2 + Math.floor(random() * (words.length < 200 ? 1 : 3))
    let w = ''
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)] ?? 'a'
    if (!seen.has(w)) { seen.add(w); words.push(w) }
  }
  return words
})()

/** Cumulative Zipf weights (s = 1) of the vocabulary's ranks. */
const ZIPF_CDF: Float64Array = (() => {
  const cdf = new Float64Array(VOCABULARY.length)
  let sum = 0
  for (let r = 0; r < cdf.length; r++) { sum += 1 / (r + 1); cdf[r] = sum }
  for (let r = 0; r < cdf.length; r++) cdf[r] = (cdf[r] ?? 0) / sum
  return cdf
})()

/** A vocabulary word drawn with the Zipf distribution. */
function zipfWord (random: () => number): string {
  const x = random()
  let lo = 0
  let hi = ZIPF_CDF.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((ZIPF_CDF[mid] ?? 1) < x) lo = mid + 1
    else hi = mid
  }
  return VOCABULARY[lo] ?? 'word'
}

/** The generated repository. */
export interface GeneratedSite {
  dir: string
  /** The ids of the posts, in order (`post-00000` ...). */
  ids: string[]
  /**
   * Removes the repository.
   * @returns resolves when removed
   */
  remove: () => Promise<void>
}

/** What to generate. */
export interface SiteOptions {
  entries: number
  /** Extra lines appended to cms.config.yaml (e.g. a permissions policy). */
  extraConfig?: string
  /**
   * `flat` (default): `content/posts/<id>.md`. `bundles`: Hugo-style page bundles in year folders,
   * `content/posts/<yyyy>/<name>/index.md` (id `<yyyy>/<name>`, `indexFile: index`), an image
   * beside every tenth.
   */
  layout?: 'flat' | 'bundles'
  /**
   * Spreads the entries over this many collections (`content/c0000/` ...; each defined like `posts`
   * in a `cms.config.json`, `extraConfig` ignored) instead of one `posts` collection (issue 18:
   * many collections). Flat layout only.
   */
  collections?: number
  /**
   * Generates into this directory (created; must not exist) instead of a new temporary one, so a
   * bench can keep a large site between runs.
   */
  dir?: string
}

/**
 * Runs git in a directory with a fixed author (the bench's own setup, not the service).
 * @param cwd the repository
 * @param args git arguments
 * @returns stdout
 */
export async function runGit (cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.invalid', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.invalid' }
  })
  return stdout
}

/**
 * The id of the i-th generated post.
 * @param i index
 * @returns the id
 */
export function postId (i: number): string {
  return `post-${String(i).padStart(5, '0')}`
}

/** A small deterministic generator, so every run benches the same site. */
function seededRandom (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

function postFile (i: number, random: () => number): string {
  const pick = (): string => zipfWord(random)
  const sentence = (n: number): string => {
    const words = Array.from({ length: n }, pick)
    const first = words[0] ?? 'word'
    return `${first[0]?.toUpperCase() ?? ''}${first.slice(1)} ${words.slice(1).join(' ')}.`
  }
  const paragraph = (): string => Array.from({ length: 3 + Math.floor(random() * 4) }, () => sentence(8 + Math.floor(random() * 8))).join(' ')
  const titleWords = [pick(), pick(), pick()]
  if (random() < 0.1) titleWords[1] = SEARCH_WORD
  const title = `${titleWords.join(' ')} ${i}`
  const day = new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10)
  const tags = [pick(), pick()]
  const paragraphs = Array.from({ length: 3 + Math.floor(random() * 3) }, paragraph)
  // The body-only and rare words go into a paragraph (never a title or a tag).
  if (random() < 1 / 3) paragraphs[0] = `${paragraphs[0] ?? ''} Some ${BODY_WORD} here.`
  if (random() < 1 / 1000) paragraphs[1] = `${paragraphs[1] ?? ''} A ${RARE_WORD} too.`
  return `---\ntitle: ${title}\ndate: '${day}'\ntags:\n  - ${tags[0] ?? ''}\n  - ${tags[1] ?? ''}\n---\n\n## ${sentence(4)}\n\n${paragraphs.join('\n\n')}\n`
}

// A 1x1 PNG: the image beside a bundle's index file.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')

const CONFIG = `collections:
  posts:
    format: md
    label: Posts
    titleField: title
    schema:
      type: object
      required: [title]
      properties:
        title: { type: string, minLength: 1 }
        date: { type: string }
        tags: { type: array, items: { type: string } }
        body: { type: string }
`

/**
 * The name of the i-th collection of a many-collections site.
 * @param i index
 * @returns the name (`c0000` ...)
 */
export function collectionName (i: number): string {
  return `c${String(i).padStart(4, '0')}`
}

/** A JSON config defining N collections like `posts`. */
function manyCollectionsConfig (n: number): string {
  const definition = {
    format: 'md',
    label: 'Posts',
    titleField: 'title',
    schema: { type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 }, date: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } }, body: { type: 'string' } } }
  }
  return JSON.stringify({ collections: Object.fromEntries(Array.from({ length: n }, (_, i) => [collectionName(i), definition])) }, null, 1) + '\n'
}

/**
 * Writes a site of N posts into a temporary directory and commits it (`git add -A && git commit`).
 * @param opts number of entries and extra config
 * @returns the repository, its post ids, and a remover
 */
export async function generateSite (opts: SiteOptions): Promise<GeneratedSite> {
  await mkdir(sitesDir(), { recursive: true })
  let dir: string
  if (opts.dir === undefined) {
    dir = await mkdtemp(path.join(sitesDir(), 'git-cms-bench-'))
  } else {
    dir = opts.dir
    await mkdir(dir)
  }
  const posts = path.join(dir, 'content', 'posts')
  const bundles = opts.layout === 'bundles'
  const collections = opts.collections ?? 0
  const config = bundles ? CONFIG.replace('    format: md\n', '    format: md\n    indexFile: index\n') : CONFIG
  // Many collections: a JSON config (parsing 12,000 lines of YAML alone took a second).
  if (collections > 0) await writeFile(path.join(dir, 'cms.config.json'), manyCollectionsConfig(collections))
  else await writeFile(path.join(dir, 'cms.config.yaml'), config + (opts.extraConfig ?? ''))
  const random = seededRandom(opts.entries)
  const ids = Array.from({ length: opts.entries }, (_, i) => bundles ? `${2000 + Math.floor(i / 500)}/${postId(i)}` : postId(i))
  // Entry i of a many-collections site goes to collection i % collections.
  const folderOf = (i: number): string => collections > 0 ? path.join(dir, 'content', collectionName(i % collections)) : posts
  for (const folder of new Set(ids.map((_, i) => folderOf(i)))) await mkdir(folder, { recursive: true })
  // Files are generated first (the generator is sequential), then written in batches.
  const files = ids.map((id, i) => ({ file: path.join(folderOf(i), bundles ? `${id}/index.md` : `${id}.md`), text: postFile(i, random), image: bundles && i % 10 === 0 }))
  const BATCH = 256
  for (let i = 0; i < files.length; i += BATCH) {
    await Promise.all(files.slice(i, i + BATCH).map(async f => {
      if (bundles) await mkdir(path.dirname(f.file), { recursive: true })
      await writeFile(f.file, f.text)
      if (f.image) await writeFile(path.join(path.dirname(f.file), 'cover.png'), PNG)
    }))
  }
  await runGit(dir, 'init', '-q', '-b', 'main')
  await runGit(dir, 'add', '-A')
  // Not detached: a commit of 100,000 files starts `git gc --auto`, which git would leave running in
  // the background for 40-56 s, taking half a core from the figures timed next (z4).
  await runGit(dir, '-c', 'gc.autoDetach=false', 'commit', '-q', '-m', `bench site with ${opts.entries} posts`)
  return { dir, ids, remove: async () => { await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }) } }
}
