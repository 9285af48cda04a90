import t from 'tap'
import { pino } from 'pino'
import { createAuthorizer, grants } from '../../lib/auth/create-auth.js'
import type { AuthAction, Identity } from '../../lib/config.js'

const log = pino({ level: 'silent' })
const who = (roles: string[]): Identity => ({ id: 'u1', name: 'U', roles })

t.test('without a policy the authorizer is inactive and allows everything', async t => {
  const a = createAuthorizer({ log })
  t.equal(a.active, false)
  for (const action of ['edit', 'publish', 'delete', 'manage_collections', 'upload'] as AuthAction[]) t.equal(await a.can(who([]), action), true)
})

t.test('declarative permissions: union over roles, * for all, unknown roles get nothing', async t => {
  const a = createAuthorizer({ log, permissions: { writer: ['edit', 'upload'], publisher: ['publish'], admin: ['*'] } })
  t.equal(a.active, true)
  t.equal(await a.can(who(['writer']), 'edit'), true)
  t.equal(await a.can(who(['writer']), 'publish'), false)
  t.equal(await a.can(who(['writer', 'publisher']), 'publish'), true)
  t.equal(await a.can(who(['writer', 'publisher']), 'delete'), false)
  t.equal(await a.can(who(['admin']), 'manage_collections'), true)
  t.equal(await a.can(who([]), 'edit'), false)
  t.equal(await a.can(who(['guest']), 'edit'), false)
  for (const role of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) t.equal(await a.can(who([role]), 'edit'), false, role)
})

t.test('grants() reads own keys only', async t => {
  const policy = JSON.parse('{"__proto__": ["*"], "editor": ["edit"]}') as Record<string, Array<AuthAction | '*'>>
  t.equal(grants(policy, ['__proto__'], 'delete'), true, 'a role literally named __proto__ is honoured as written')
  t.equal(grants({ editor: ['edit'] }, ['__proto__'], 'edit'), false)
})

t.test('adapter authorize: booleans and promises; a throw or a non-boolean denies', async t => {
  const calls: unknown[] = []
  const a = createAuthorizer({
    log,
    authorize: async ({ identity, action, collection, id }) => {
      calls.push({ identity, action, collection, id })
      if (collection === 'boom') throw new Error('policy bug')
      return action === 'edit' && collection === 'posts'
    }
  })
  t.equal(a.active, true)
  t.equal(await a.can(who(['x']), 'edit', { collection: 'posts', id: 'p1' }), true)
  t.equal(await a.can(who(['x']), 'edit', { collection: 'pages', id: 'p1' }), false)
  t.equal(await a.can(who(['x']), 'edit', { collection: 'boom' }), false)
  t.same(calls[0], { identity: who(['x']), action: 'edit', collection: 'posts', id: 'p1' })
  const sync = createAuthorizer({ log, authorize: ({ action }) => action === 'upload' })
  t.equal(await sync.can(who([]), 'upload'), true)
  t.equal(await sync.can(who([]), 'publish'), false)
  const sloppy = createAuthorizer({ log, authorize: (() => 'yes') as unknown as () => boolean })
  t.equal(await sloppy.can(who([]), 'edit'), false, 'a truthy non-boolean is not a yes')
  const throwsSync = createAuthorizer({ log, authorize: () => { throw new Error('sync') } })
  t.equal(await throwsSync.can(who([]), 'edit'), false)
})

t.test('an adapter policy cannot change the identity it is given', async t => {
  const identity = who(['writer'])
  const a = createAuthorizer({ log, authorize: ({ identity: i }) => { i.roles.push('admin'); i.id = 'x'; return true } })
  await a.can(identity, 'edit')
  t.same(identity, who(['writer']))
})

t.test('with both a policy and permissions, both must allow', async t => {
  const a = createAuthorizer({ log, permissions: { writer: ['edit', 'delete'] }, authorize: ({ action }) => action !== 'delete' })
  t.equal(await a.can(who(['writer']), 'edit'), true)
  t.equal(await a.can(who(['writer']), 'delete'), false, 'authorize says no')
  t.equal(await a.can(who(['writer']), 'publish'), false, 'permissions say no')
})
