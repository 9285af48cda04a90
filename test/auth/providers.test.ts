import t from 'tap'
import { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import { pino } from 'pino'
import { adapterProvider, trustedHeaderProvider } from '../../lib/auth/create-auth.js'

const log = pino({ level: 'silent' })

function requestWith (headers: Record<string, string>): IncomingMessage {
  const req = new IncomingMessage(new Socket())
  req.headers = headers
  return req
}

t.test('adapter URL functions that throw or return nothing give null, not an error', async t => {
  const good = adapterProvider({ authenticate: () => null, loginUrl: ({ redirectTo }) => `https://idp/in?r=${redirectTo}`, logoutUrl: () => 'https://idp/out' }, log)
  t.equal(good.loginUrl('/x'), 'https://idp/in?r=/x')
  t.equal(good.logoutUrl('/x'), 'https://idp/out')
  const bad = adapterProvider({
    authenticate: async () => await Promise.reject(new Error('down')),
    loginUrl: () => { throw new Error('boom') },
    logoutUrl: () => '' as string
  }, log)
  t.equal(bad.loginUrl('/x'), null)
  t.equal(bad.logoutUrl('/x'), null)
  t.equal(await bad.authenticate(requestWith({})), null, 'a rejected promise denies')
  const undef = adapterProvider({ authenticate: () => undefined as unknown as null, loginUrl: () => 'u', logoutUrl: () => 'u' }, log)
  t.equal(await undef.authenticate(requestWith({})), null)
})

t.test('trusted headers: id, name, comma-separated roles; unsafe or repeated ids deny', async t => {
  const p = trustedHeaderProvider({ provider: 'trusted-header', idHeader: 'X-User', nameHeader: 'X-Name', rolesHeader: 'X-Roles', loginUrl: 'https://sso/in?rd={redirectTo}' }, log)
  t.same(await p.authenticate(requestWith({ 'x-user': 'ada', 'x-name': 'Ada', 'x-roles': ' writer ,, chief ' })), { id: 'ada', name: 'Ada', roles: ['writer', 'chief'] })
  t.same(await p.authenticate(requestWith({ 'x-user': 'bo' })), { id: 'bo', name: 'bo', roles: [] }, 'name defaults to the id')
  t.equal(await p.authenticate(requestWith({})), null)
  t.equal(await p.authenticate(requestWith({ 'x-user': '' })), null)
  t.equal(await p.authenticate(requestWith({ 'x-user': 'ada, mallory' })), null, 'a repeated header (joined by Node) is refused')
  t.equal(await p.authenticate(requestWith({ 'x-user': 'ada@example.com' })), null)
  t.equal(p.loginUrl('/a b'), 'https://sso/in?rd=%2Fa%20b')
  t.equal(p.logoutUrl('/'), null)
  const plain = trustedHeaderProvider({ provider: 'trusted-header', idHeader: 'x-user', logoutUrl: 'https://sso/out' }, log)
  t.equal(plain.logoutUrl('/x'), 'https://sso/out', 'a URL without {redirectTo} is used as it is')
  t.same(await plain.authenticate(requestWith({ 'x-user': 'ada', 'x-roles': 'chief' })), { id: 'ada', name: 'ada', roles: [] }, 'no roles header configured: roles are not read')
})
