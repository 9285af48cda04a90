/**
 * Generated site repositories for the benches: N Markdown posts (frontmatter title/date/tags and a
 * body of a few paragraphs, 1-2 KB each, words drawn Zipf-like from a vocabulary of 4,000
 * deterministic pseudo-words) and a cms.config.yaml, in one commit made with the real git CLI.
 * Sites go to the system temp directory, or BENCH_DIR.
 */
import { mkdtemp, mkdir, readFile, writeFile, rm } from 'node:fs/promises'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { promisify } from 'node:util'
import os from 'node:os'
import path from 'node:path'

const execFileAsync = promisify(execFile)

/**
 * A new folder for one run's sites under BENCH_DIR or the system temp directory, so that a run
 * removes only its own sites (other runs may be using the same temp directory).
 * @returns its path
 */
export async function makeRunDir (): Promise<string> {
  const root = process.env.BENCH_DIR ?? os.tmpdir()
  await mkdir(root, { recursive: true })
  return await mkdtemp(path.join(root, 'git-cms-bench-run-'))
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
const VOCABULARY: readonly string[] = (() => {
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

/** A generated repository. */
export interface GeneratedSite {
  dir: string
  /** The ids of the posts, in order (`post-00000` ...). */
  ids: string[]
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


/** The site's configuration: one Markdown collection of posts. */
export const CONFIG = `collections:
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
 * Writes a site of N posts as one commit on `main`: the blobs through `git fast-import` (one pack
 * instead of N loose objects; about a fifth of the CPU of writing the files and `git add -A`), the
 * trees through `git mktree` (fast-import's own tree building is quadratic in a folder's size: it
 * had not finished 100,000 files in 10 minutes), then `git reset --hard` for the working tree.
 * @param parent the run's folder
 * @param entries number of posts
 * @returns the repository and its post ids
 */
export async function generateSite (parent: string, entries: number): Promise<GeneratedSite> {
  const dir = await mkdtemp(path.join(parent, 'site-'))
  await runGit(dir, 'init', '-q', '-b', 'main')
  const ids = Array.from({ length: entries }, (_, i) => postId(i))
  const random = seededRandom(entries)
  const marks = path.join(dir, '.git', 'bench-marks')
  const importer = spawn('git', ['fast-import', '--quiet', `--export-marks=${marks}`], { cwd: dir, stdio: ['pipe', 'ignore', 'pipe'] })
  let stderr = ''
  importer.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  const exited = new Promise<number | null>(resolve => { importer.once('close', resolve) })
  // Mark i + 1 is post i; mark entries + 1 is the config.
  const blob = (mark: number, text: string): string => `blob\nmark :${mark}\ndata ${Buffer.byteLength(text)}\n${text}\n`
  let chunk = blob(entries + 1, CONFIG)
  for (let i = 0; i < entries; i++) {
    chunk += blob(i + 1, postFile(i, random))
    if (chunk.length > 1 << 20 || i === entries - 1) {
      if (!importer.stdin.write(chunk)) await once(importer.stdin, 'drain')
      chunk = ''
    }
  }
  importer.stdin.end(chunk)
  const code = await exited
  if (code !== 0) throw new Error(`git fast-import exited with ${String(code)}: ${stderr}`)
  const shaOf = new Map((await readFile(marks, 'utf8')).split('\n').filter(l => l !== '').map(l => {
    const [mark = '', sha = ''] = l.split(' ')
    return [Number(mark.slice(1)), sha] as const
  }))
  const posts = await mktree(dir, ids.map((id, i) => `100644 blob ${shaOf.get(i + 1) ?? ''}\t${id}.md`))
  const content = await mktree(dir, [`040000 tree ${posts}\tposts`])
  const root = await mktree(dir, [`100644 blob ${shaOf.get(entries + 1) ?? ''}\tcms.config.yaml`, `040000 tree ${content}\tcontent`])
  const commit = (await runGit(dir, 'commit-tree', root, '-m', `bench site with ${entries} posts`)).trim()
  await runGit(dir, 'update-ref', 'refs/heads/main', commit)
  await runGit(dir, 'reset', '--hard', '-q')
  await rm(marks)
  return { dir, ids }
}

/** Writes a tree object from `git ls-tree`-style lines and returns its id. */
async function mktree (dir: string, lines: string[]): Promise<string> {
  const child = spawn('git', ['mktree'], { cwd: dir, stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise<number | null>(resolve => { child.once('close', resolve) })
  child.stdin.end(lines.join('\n') + '\n')
  if (await exited !== 0) throw new Error('git mktree failed')
  return out.trim()
}

/**
 * A copy of a generated site as a fresh clone has it (`git clone --local`, remote removed so the
 * service sees no upstream), optionally with lines added to cms.config.yaml and committed.
 * @param parent the run's folder
 * @param site the site to copy (never served: a pristine template)
 * @param extraConfig lines appended to cms.config.yaml (e.g. a permissions policy)
 * @returns the copy
 */
export async function cloneSite (parent: string, site: GeneratedSite, extraConfig = ''): Promise<GeneratedSite> {
  const dir = await mkdtemp(path.join(parent, 'clone-'))
  await runGit(dir, 'clone', '-q', '--local', site.dir, '.')
  await runGit(dir, 'remote', 'remove', 'origin')
  if (extraConfig !== '') {
    await writeFile(path.join(dir, 'cms.config.yaml'), CONFIG + extraConfig)
    await runGit(dir, 'commit', '-q', '-m', 'bench config', 'cms.config.yaml')
  }
  return { dir, ids: site.ids }
}
