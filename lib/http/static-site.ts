/**
 * A built site folder (`serve --site <dir>`): a path becomes a file, `index.html` for a folder,
 * `<path>.html` for an extensionless address, else `404.html`. Paths are decoded once and must stay
 * inside the folder lexically and after symbolic links; hidden files (a `.` segment) are never served.
 */
import { realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { isInside } from '../storage/safe-path.js'

/** A file of the site to send. */
interface SiteFile {
  /** Its real path (inside the folder). */
  file: string
  size: number
  /** 200, or 404 for the folder's `404.html`. */
  status: 200 | 404
}

/** The folder's answer to a path. */
type SiteLookup = SiteFile | { redirect: string } | { refused: true } | null

/** Checks the `--site` folder and gives its real path; rejects when it is not a readable folder. */
export async function siteFolder (dir: string): Promise<string> {
  let real: string
  try {
    real = await realpath(path.resolve(dir))
  } catch {
    throw new Error(`--site: no such folder '${dir}'`)
  }
  if (!(await stat(real)).isDirectory()) throw new Error(`--site: '${dir}' is not a folder`)
  return real
}

/**
 * Finds the file a request path (still percent-encoded) names in a site folder: the file, a redirect
 * (a folder without its `/`), refused (out of the folder, hidden, bad encoding), or null.
 */
export async function findSiteFile (root: string, urlPath: string): Promise<SiteLookup> {
  let decoded: string
  try { decoded = decodeURIComponent(urlPath) } catch { return { refused: true } }
  // eslint-disable-next-line no-control-regex
  if (!decoded.startsWith('/') || /[\u0000-\u001f\\]/.test(decoded)) return { refused: true }
  const segments = decoded.split('/').slice(1)
  if (segments.some(s => s === '..' || (s.startsWith('.') && s !== ''))) return { refused: true }
  const target = path.join(root, ...segments)
  if (!isInside(root, target)) return { refused: true }
  const found = await fileAt(root, target)
  if (found === 'outside') return { refused: true }
  if (found === 'folder') {
    if (!decoded.endsWith('/')) return { redirect: `${urlPath}/` }
    const index = await fileAt(root, path.join(target, 'index.html'))
    if (isFile(index)) return { ...index, status: 200 }
  } else if (found !== null) {
    return { ...found, status: 200 }
  } else if (!decoded.endsWith('/') && path.extname(target) === '') {
    const page = await fileAt(root, `${target}.html`)
    if (isFile(page)) return { ...page, status: 200 }
  }
  const notFound = await fileAt(root, path.join(root, '404.html'))
  return isFile(notFound) ? { ...notFound, status: 404 } : null
}

type Found = { file: string, size: number } | 'folder' | 'outside' | null

function isFile (found: Found): found is { file: string, size: number } {
  return found !== null && typeof found === 'object'
}

/** A regular file or folder at a path, checked to be really inside the root (symbolic links resolved). */
async function fileAt (root: string, target: string): Promise<Found> {
  let real: string
  try { real = await realpath(target) } catch { return null }
  if (!isInside(root, real)) return 'outside'
  const st = await stat(real)
  if (st.isDirectory()) return 'folder'
  return st.isFile() ? { file: real, size: st.size } : null
}
