/** ajv's regular expressions on RE2 (re2js), linear in the input, so a pattern like `^(a|a)*$` cannot stall the service. */
import { createRequire } from 'node:module'
import type { RE2JS } from 're2js'
import type { CodeOptions } from 'ajv'

/* re2js (260 KB, with Unicode tables built when it loads) is loaded on the first schema pattern:
   most collections' schemas have none. */
const loadRe2js = (): typeof RE2JS => (createRequire(import.meta.url)('re2js') as { RE2JS: typeof RE2JS }).RE2JS

type RegExpEngine = NonNullable<CodeOptions['regExp']>

/**
 * The engine to pass as ajv's `code.regExp` (its `code` names it in standalone code, unused here):
 * a JavaScript-syntax pattern compiled with RE2 into the `{ test }` object ajv calls.
 */
export const linearRegExp: RegExpEngine = Object.assign((pattern: string) => {
  let compiled: RE2JS
  try {
    const re2js = loadRe2js()
    compiled = re2js.compile(re2js.translateRegExp(pattern))
  } catch (err) {
    throw new Error(`pattern ${JSON.stringify(pattern)} is not supported (${(err as Error).message}); lookaround and backreferences cannot be matched in linear time`)
  }
  // ajv caches compiled patterns by toString(): it must tell patterns apart.
  return { test: (s: string) => compiled.test(s), toString: () => `/${pattern}/` }
}, { code: 'linearRegExp' })
