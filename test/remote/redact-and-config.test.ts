import t from 'tap'
import { redactSecrets, secretsOfUrl } from '../../lib/git-runner.js'
import { normalizeConfig } from '../../lib/config.js'
import { ConfigError } from '../../lib/errors.js'

t.test('credentials are removed from git messages', async t => {
  const url = 'https://oauth2:glpat-abcdefghijklmnop1234@gitlab.example.com/site.git'
  const secrets = secretsOfUrl(url)
  t.same(secrets, ['oauth2:glpat-abcdefghijklmnop1234', 'glpat-abcdefghijklmnop1234'], 'the userinfo and the password, not the plain user name')
  const message = `fatal: unable to access '${url}/': The requested URL returned error: 403\nremote: token glpat-abcdefghijklmnop1234 has expired (decoded: glpat-abcdefghijklmnop1234)`
  const clean = redactSecrets(message, secrets)
  t.notMatch(clean, /glpat-abcdefghijklmnop1234/)
  t.match(clean, /https:\/\/\*\*\*@gitlab\.example\.com\/site\.git/)
  t.equal(redactSecrets('push to https://ghp_0123456789abcdefghijABCDEFGHIJ@github.com/x.git'), 'push to https://***@github.com/x.git')
  t.equal(redactSecrets('token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz in text'), 'token *** in text')
  t.equal(redactSecrets('Authorization: Bearer abcdefghijklmnopqrstuvwxyz'), 'Authorization: ***')
  t.equal(redactSecrets('ssh://git@host:22/site.git and git@github.com:you/site.git'), 'ssh://***@host:22/site.git and git@github.com:you/site.git', 'an ssh user name is not a secret but is still hidden in URLs')
  t.same(secretsOfUrl('git@github.com:you/site.git'), [])
  t.same(secretsOfUrl('https://tokenonly0123456789@github.com/x.git'), ['tokenonly0123456789'], 'a bare userinfo is the token')
})

t.test('git.* config keys: defaults and refusals', async t => {
  t.same(normalizeConfig({}).git, { remote: null, branch: null, pushOnPublish: false, pushRefs: false, pullInterval: 60, syncSecret: null })
  t.same(normalizeConfig({ git: { remote: 'origin' } }).git, { remote: 'origin', branch: null, pushOnPublish: true, pushRefs: true, pullInterval: 60, syncSecret: null })
  t.same(normalizeConfig({ git: { remote: 'upstream', branch: 'site/live', pushOnPublish: false, pushRefs: false, pullInterval: 0, syncSecret: 'x'.repeat(16) } }).git,
    { remote: 'upstream', branch: 'site/live', pushOnPublish: false, pushRefs: false, pullInterval: 0, syncSecret: 'x'.repeat(16) })
  const bad: Array<[unknown, RegExp]> = [
    [{ git: { remote: '--upload-pack=evil' } }, /git\.remote/],
    [{ git: { remote: 'https://x@host/site.git' } }, /git\.remote/],
    [{ git: { branch: '../main' } }, /git\.branch/],
    [{ git: { branch: '-f' } }, /git\.branch/],
    [{ git: { pullInterval: -1 } }, /git\.pullInterval/],
    [{ git: { pullInterval: '60' } }, /git\.pullInterval/],
    [{ git: { syncSecret: 'short' } }, /git\.syncSecret/],
    [{ git: { pushOnPublish: 'yes' } }, /git\.pushOnPublish/],
    [{ git: { token: 'x' } }, /git\.token/],
    [{ git: { __proto__: { remote: 'x' }, remote: 'a b' } }, /git\.remote/]
  ]
  for (const [input, key] of bad) {
    let error: unknown = null
    try { normalizeConfig(input) } catch (err) { error = err }
    t.ok(error instanceof ConfigError && key.test(error.message), `${JSON.stringify(input)}: ${String(error)}`)
  }
})
