// Builds tap's test runner with the plugins .taprc names, once, before the suite runs.
// A fresh install holds tap's default set (its TypeScript loader included), and tap itself rebuilds
// only during a run, after that run's test processes were already given the old loaders.
import { execFileSync } from 'node:child_process'
import { TapConfig } from '@tapjs/config'
import { signature } from '@tapjs/test/test-built'

const config = await TapConfig.load()
if (config.pluginSignature !== signature) {
  console.log('tap-runner: building tap with the plugins .taprc names')
  execFileSync(process.execPath, ['node_modules/tap/dist/esm/run.mjs', 'build'], { stdio: 'inherit' })
}
