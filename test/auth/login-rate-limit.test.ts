import t from 'tap'
import { LoginRateLimiter } from '../../lib/auth/password-auth.js'

const MIN = 60 * 1000

t.test('five failures in 15 minutes limit the client, with Retry-After in seconds', async t => {
  const limiter = new LoginRateLimiter()
  const start = 1_000_000
  for (let i = 0; i < 5; i++) {
    t.equal(limiter.retryAfter('a', start + i * MIN), null, `attempt ${i + 1} allowed`)
    limiter.recordFailure('a', start + i * MIN)
  }
  // The first failure leaves the window at start + 15 min.
  t.equal(limiter.retryAfter('a', start + 5 * MIN), 10 * 60)
  t.equal(limiter.retryAfter('a', start + 15 * MIN - 1500), 2)
  t.equal(limiter.retryAfter('b', start + 5 * MIN), null, 'another client is not affected')
  t.equal(limiter.retryAfter('a', start + 15 * MIN), null, 'sliding window: one failure expired')
  limiter.recordFailure('a', start + 15 * MIN)
  t.equal(limiter.retryAfter('a', start + 15 * MIN), 60, 'limited again until the second failure expires')
})

t.test('four failures do not limit; a success resets the count', async t => {
  const limiter = new LoginRateLimiter()
  for (let i = 0; i < 4; i++) limiter.recordFailure('a', 1000 + i)
  t.equal(limiter.retryAfter('a', 2000), null)
  limiter.reset('a')
  for (let i = 0; i < 4; i++) limiter.recordFailure('a', 3000 + i)
  t.equal(limiter.retryAfter('a', 4000), null, 'the earlier four were forgotten')
  limiter.recordFailure('a', 5000)
  t.ok(limiter.retryAfter('a', 5000) !== null)
})

t.test('memory stays bounded: expired failures no longer count, and at most maxClients are kept', async t => {
  const limiter = new LoginRateLimiter(100)
  for (let i = 0; i < 50; i++) for (let j = 0; j < 5; j++) limiter.recordFailure(`old-${i}`, 0)
  t.equal(limiter.size, 50)
  t.ok(limiter.retryAfter('old-0', 0) !== null)
  t.equal(limiter.retryAfter('old-0', 16 * MIN), null, 'expired failures no longer count')
  t.equal(limiter.size, 49, 'and the client is forgotten when next seen')
  for (let i = 0; i < 1000; i++) limiter.recordFailure(`flood-${i}`, 16 * MIN + i)
  t.equal(limiter.size, 100)
  t.equal(limiter.retryAfter('flood-999', 16 * MIN + 1000), null)
  for (let i = 0; i < 4; i++) limiter.recordFailure('flood-999', 16 * MIN + 1000)
  t.ok(limiter.retryAfter('flood-999', 16 * MIN + 1000) !== null, 'the most recent clients are the ones kept')
})

t.test('two limiters share nothing', async t => {
  const a = new LoginRateLimiter()
  const b = new LoginRateLimiter()
  for (let i = 0; i < 5; i++) a.recordFailure('x', 10)
  t.ok(a.retryAfter('x', 10) !== null)
  t.equal(b.retryAfter('x', 10), null)
})
