/**
 * The objects of one commit (blobs, trees, the commit itself), encoded the way git does and named
 * by their SHA-1, collected in memory so that PackStore writes them as one pack.
 */
import { createHash } from 'node:crypto'
import type { ObjectType, PackObject } from './pack-file.js'

/** One entry of a tree object. */
export interface TreeItem {
  /** `100644` for a file, `040000` (or `40000`) for a directory */
  mode: string
  /** the file or directory name (no slash) */
  path: string
  oid: string
  type: 'blob' | 'tree' | 'commit'
}

/** Who wrote a commit, and when. */
export interface Signature {
  name: string
  email: string
  /** seconds since the epoch */
  timestamp: number
}

/** Printable ASCII only. */
const ASCII = /^[\x20-\x7e]*$/

/** Objects to be written together. */
export class ObjectBatch {
  readonly objects: PackObject[] = []

  /**
   * Adds a blob.
   * @param content the file content
   * @returns the blob's object id
   */
  blob (content: Buffer): string {
    return this.add('blob', content)
  }

  /**
   * Adds a tree; entries may come in any order (they are sorted the way git sorts them).
   * @param entries the tree's entries
   * @returns the tree's object id
   */
  tree (entries: TreeItem[]): string {
    const items = entries.map(e => {
      if (e.path === '' || e.path.includes('/') || e.path.includes('\0')) throw new Error(`Invalid tree entry name: ${JSON.stringify(e.path)}`)
      // Git sorts names as bytes, a directory as if its name ended in `/`.
      return { e, key: e.type === 'tree' ? `${e.path}/` : e.path, head: `${e.mode.replace(/^0+/, '')} ${e.path}\0` }
    })
    // For ASCII names (ids and shard names always are) string order is byte order.
    if (items.every(i => ASCII.test(i.key))) items.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
    else items.sort((a, b) => Buffer.compare(Buffer.from(a.key, 'utf8'), Buffer.from(b.key, 'utf8')))
    const content = Buffer.alloc(items.reduce((n, i) => n + Buffer.byteLength(i.head, 'utf8') + 20, 0))
    let at = 0
    for (const { e, head } of items) {
      at += content.write(head, at, 'utf8')
      at += content.write(e.oid, at, 'hex')
    }
    return this.add('tree', content)
  }

  /**
   * Adds a commit (UTC timestamps).
   * @param commit its tree, parents, author (also the committer) and message
   * @returns the commit's object id
   */
  commit (commit: { tree: string, parents: string[], author: Signature, message: string }): string {
    const who = `${commit.author.name} <${commit.author.email}> ${commit.author.timestamp} +0000`
    const text = [
      `tree ${commit.tree}`,
      ...commit.parents.map(p => `parent ${p}`),
      `author ${who}`,
      `committer ${who}`,
      '',
      commit.message.endsWith('\n') ? commit.message : `${commit.message}\n`
    ].join('\n')
    return this.add('commit', Buffer.from(text, 'utf8'))
  }

  private add (type: ObjectType, content: Buffer): string {
    const oid = createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex')
    this.objects.push({ oid, type, content })
    return oid
  }
}
