/** The long-lived git processes of one repository (cat-file, update-ref), owned by one instance and closed with it. */
import { CatFile } from './cat-file.js'
import { RefUpdater } from './update-ref.js'

export class GitStore {
  /** The repository's (common) git directory. */
  readonly gitDir: string
  readonly objects: CatFile
  readonly refs: RefUpdater

  /** @param gitDir the repository's (common) git directory */
  constructor (gitDir: string) {
    this.gitDir = gitDir
    this.objects = new CatFile(gitDir)
    this.refs = new RefUpdater(gitDir, async ref => await this.readRef(ref))
  }

  /**
   * A ref's commit, read by git (loose or packed).
   * @param ref a full ref name
   * @returns the commit id, or null when the ref does not exist
   */
  async readRef (ref: string): Promise<string | null> {
    const object = await this.objects.read(ref)
    return object?.type === 'commit' ? object.oid : null
  }

  /**
   * Ends the git processes once they answered what they were asked.
   * @returns resolves once they exited
   */
  async close (): Promise<void> {
    await this.refs.close()
    await this.objects.close()
  }
}
