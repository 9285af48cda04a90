import t from 'tap'
import { checkGitVersion, requireGitVersion, MIN_GIT_VERSION } from '../lib/cli.js'
import { StartupError } from '../lib/errors.js'

t.test('git 2.38 and later pass, whatever the vendor suffix', async t => {
  for (const output of ['git version 2.38.0\n', 'git version 2.39.5', 'git version 2.45.2.windows.1', 'git version 2.39.3 (Apple Git-146)', 'git version 3.0.0']) {
    t.doesNotThrow(() => { checkGitVersion(output) }, output.trim())
  }
  t.same(MIN_GIT_VERSION, [2, 38])
})

t.test('an older git is refused in one line naming the version found and the one needed', async t => {
  for (const [output, found] of [['git version 2.37.1 (Apple Git-137.1)\n', '2.37.1'], ['git version 2.25.1', '2.25.1'], ['git version 1.99.9', '1.99.9']] as const) {
    try {
      checkGitVersion(output)
      t.fail(`${found} passed`)
    } catch (err) {
      t.type(err, StartupError)
      t.equal((err as Error).message, `git ${found} found; git-cms needs git 2.38 or later (for merge-tree --write-tree)`)
    }
  }
})

t.test('output that names no version is refused too', async t => {
  t.throws(() => { checkGitVersion('hub version 2.14.2') }, { name: 'StartupError', message: /^cannot tell git's version from 'hub version 2\.14\.2'; git-cms needs git 2\.38 or later/ })
})

t.test('the git on PATH (the one the tests run) passes', async t => {
  await t.resolves(requireGitVersion())
})
