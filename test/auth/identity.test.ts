import t from 'tap'
import { toIdentity, isSafeIdentityId } from '../../lib/auth/identity.js'
import { safeRedirectTarget } from '../../lib/auth/redirect-target.js'

t.test('identity ids follow ^[A-Za-z0-9_-]{1,64}$', async t => {
  for (const ok of ['a', 'A-b_9', 'x'.repeat(64)]) t.equal(isSafeIdentityId(ok), true, ok)
  for (const bad of ['', 'x'.repeat(65), 'a b', 'a/b', '..', 'a.b', 'é', 'a\n', 5, null, undefined]) t.equal(isSafeIdentityId(bad), false, String(bad))
})

t.test('provider identities are checked and copied', async t => {
  const source = { id: 'alice', name: 'Alice', roles: ['writer'] }
  const checked = toIdentity(source)
  t.same(checked, { identity: { id: 'alice', name: 'Alice', roles: ['writer'] } })
  if ('identity' in checked) {
    source.roles.push('admin')
    t.same(checked.identity.roles, ['writer'], 'a later change by the provider does not leak in')
  }
  t.same(toIdentity({ id: 'bob' }), { identity: { id: 'bob', name: 'bob', roles: [] } }, 'name and roles default')
  t.same(toIdentity('alice'), { problem: 'not_an_object' })
  t.same(toIdentity(['alice']), { problem: 'not_an_object' })
  t.same(toIdentity({ id: 'a/b', name: 'x', roles: [] }), { problem: 'unsafe_id' })
  t.same(toIdentity({ id: 7 }), { problem: 'unsafe_id' })
  t.same(toIdentity({ id: 'a', name: 5 }), { problem: 'bad_name' })
  t.same(toIdentity({ id: 'a', roles: 'admin' }), { problem: 'bad_roles' })
  t.same(toIdentity({ id: 'a', roles: ['ok', 1] }), { problem: 'bad_roles' })
})

t.test('return targets stay on this site', async t => {
  t.equal(safeRedirectTarget('/admin/cms?x=1'), '/admin/cms?x=1')
  for (const bad of [undefined, ['/a', '/b'], '', 'https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)', '/a\nb', '/' + 'a'.repeat(3000)]) {
    t.equal(safeRedirectTarget(bad), '/', String(bad))
  }
})
