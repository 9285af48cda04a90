import t from 'tap'
import { main, EXIT_USAGE } from '../../lib/cli.js'

t.test('--clone usage errors are refused before anything is cloned', async t => {
  const run = async (argv: string[]): Promise<{ code: number, err: string }> => {
    let err = ''
    const code = await main(argv, {}, { stdout: { write: () => true }, stderr: { write: (s: string) => { err += s; return true } } })
    return { code, err }
  }
  t.match(await run(['serve', '--clone', 'http://example.invalid/site.git']), { code: EXIT_USAGE, err: /--clone needs --repo DIR/ })
  t.match(await run(['serve', '--clone', '', '--repo', '/tmp/x']), { code: EXIT_USAGE, err: /--clone needs a URL/ })
  t.match(await run(['demo', '--clone', 'http://example.invalid/site.git']), { code: EXIT_USAGE, err: /--clone is for serve/ })
  const help = await run(['--help'])
  t.equal(help.code, 0)
})
