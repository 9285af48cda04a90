#!/usr/bin/env node
// Writes ajv's standalone code of the validators the service would otherwise compile at run time:
// lib/config-shape.generated.ts (the config schema, lib/config-schema.ts), lib/content/draft7-meta.generated.ts
// (JSON Schema draft-07's meta-schema, which checks each collection schema) and
// lib/content/command-validators.generated.ts (the command bodies, lib/content/command-schema-table.ts):
// together 100-130 ms of a start or first write, code a V8 code cache cannot hold.
// The code is made from this package's own schemas and ajv's meta-schema, never from a site's input.
// Each file records validatorDigest (lib/content/generated-validators.ts) of what it was made from; the
// service compiles at run time instead when it differs, and test/config/config-shape.test.ts fails then.
// Run by `npm run build` (first); alone: `node scripts/generate-config-validator.mjs` (`--check`:
// exit 1 when a file is not what this script would write).
import { build } from 'esbuild'
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'
import path from 'node:path'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const target = path.join(root, 'lib', 'config-shape.generated.ts')
const metaTarget = path.join(root, 'lib', 'content', 'draft7-meta.generated.ts')
const commandTarget = path.join(root, 'lib', 'content', 'command-validators.generated.ts')

/** The generated modules' texts by file. */
export async function generatedConfigValidator () {
  const out = await build({
    absWorkingDir: root,
    stdin: { contents: "export { configSchema, CONFIG_AJV_OPTIONS } from './lib/config-schema.ts'\nexport { DRAFT7_AJV_OPTIONS, validatorDigest } from './lib/content/generated-validators.ts'\nexport { commandSchemas, COMMAND_AJV_OPTIONS } from './lib/content/command-schema-table.ts'\n", resolveDir: root, loader: 'ts' },
    bundle: true,
    // generated-validators.ts reads ajv's version with createRequire(import.meta.url).
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(path.join(root, 'package.json')).href) },
    platform: 'node',
    format: 'esm',
    write: false,
    logLevel: 'warning'
  })
  const { configSchema, CONFIG_AJV_OPTIONS, DRAFT7_AJV_OPTIONS, validatorDigest, commandSchemas, COMMAND_AJV_OPTIONS } = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`)
  const require = createRequire(path.join(root, 'package.json'))
  const { Ajv } = require('ajv')
  const standaloneCode = require('ajv/dist/standalone').default
  const ajv = new Ajv({ ...CONFIG_AJV_OPTIONS, code: { ...CONFIG_AJV_OPTIONS.code, source: true } })
  const config = moduleOf(standaloneCode(ajv, ajv.compile(configSchema)), 'lib/config-schema.ts', 'CONFIG_SCHEMA_DIGEST', validatorDigest(configSchema, CONFIG_AJV_OPTIONS), 'validateConfigSchema', 'The config schema\'s validator, as ajv.compile(configSchema) with CONFIG_AJV_OPTIONS makes it.')
  // The run-time instance runs patterns on a linear-time engine; the meta-schema has no pattern
  // (checked: the engine's code would appear in the output).
  const marker = 'GIT_CMS_PATTERN_ENGINE_USED'
  const metaId = 'http://json-schema.org/draft-07/schema'
  const metaAjv = new Ajv({ ...DRAFT7_AJV_OPTIONS, code: { source: true, regExp: Object.assign((s, f) => new RegExp(s, f), { code: marker }) } })
  const metaSource = standaloneCode(metaAjv, metaAjv.getSchema(metaId))
  if (metaSource.includes(marker)) throw new Error('the draft-07 meta-schema uses a pattern: its validator needs the pattern engine')
  const meta = moduleOf(metaSource, 'ajv\'s JSON Schema draft-07 meta-schema', 'DRAFT7_META_DIGEST', validatorDigest(metaId, DRAFT7_AJV_OPTIONS), 'validateDraft7Schema', 'The draft-07 meta-schema\'s validator, as an ajv instance with DRAFT7_AJV_OPTIONS compiles it to check a schema.')
  const commandAjv = new Ajv({ ...COMMAND_AJV_OPTIONS, code: { source: true } })
  for (const [name, schema] of Object.entries(commandSchemas)) commandAjv.addSchema(schema, name)
  const commandSource = standaloneCode(commandAjv, Object.fromEntries(Object.keys(commandSchemas).map(name => [name, name])))
  const commands = moduleOf(commandSource, 'lib/content/command-schema-table.ts', 'COMMAND_SCHEMAS_DIGEST', validatorDigest(commandSchemas, COMMAND_AJV_OPTIONS), 'commandValidatorsGenerated', 'Each command body\'s validator by its name, as ajv.compile(schema) with COMMAND_AJV_OPTIONS makes it.')
  return { [target]: config, [metaTarget]: meta, [commandTarget]: commands }
}

/** An ES module of ajv's standalone (CommonJS) output. */
function moduleOf (standalone, from, digestName, digest, exportName, doc) {
  let code = standalone
  // CommonJS output: `module.exports = validate...; module.exports.default = ...`, and ajv's run-time
  // helpers by `require("ajv/dist/runtime/NAME")`: made an ES module whose helpers come from node_modules.
  const helpers = [...new Set([...code.matchAll(/require\("(ajv\/dist\/runtime\/[a-z0-9]+)"\)/g)].map(m => m[1]))]
  code = code.replace(/^"use strict";/, '').replace(/module\.exports = (\w+);module\.exports\.default = \w+;/, 'const validate = $1;')
  // Several validators: `exports.NAME = validateN;` each, gathered in one object (functions are hoisted).
  const named = [...code.matchAll(/exports\.(\w+) = (\w+);/g)].map(m => `${m[1]}: ${m[2]}`)
  if (named.length > 0) code = code.replace(/exports\.(\w+) = (\w+);/g, '') + `\nconst validate = { ${named.join(', ')} };`
  if (code.includes('module.exports')) throw new Error('unexpected standalone output: module.exports left')
  code = code.replace(/require\("(ajv\/dist\/runtime\/[a-z0-9]+)"\)/g, (_, name) => `helpers[${JSON.stringify(name)}]`)
  if (/\brequire\(/.test(code)) throw new Error('unexpected standalone output: require left')
  const requireLines = helpers.map(name => `  ${JSON.stringify(name)}: require(${JSON.stringify(name)})`).join(',\n')
  return `// @ts-nocheck
// GENERATED by scripts/generate-config-validator.mjs from ${from}: do not edit.
/* eslint-disable */
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** The digest of what this validator was made from (ajv's version included). */
export const ${digestName} = ${JSON.stringify(digest)}

const helpers = {
${requireLines}
}

${code}

/** ${doc} */
export const ${exportName} = validate
`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [file, text] of Object.entries(await generatedConfigValidator())) {
    if (process.argv.includes('--check')) {
      let current = ''
      try { current = readFileSync(file, 'utf8') } catch {}
      if (current !== text) {
        process.stderr.write(`${path.relative(root, file)} is out of date: run node scripts/generate-config-validator.mjs\n`)
        process.exitCode = 1
      }
    } else {
      writeFileSync(file, text)
    }
  }
}
