const { Ajv } = await import('ajv')
const { configSchema } = await import('/work/wt/t1-bundle/dist/lib/config-schema.js')
const mode = process.argv[2]
const opts = { allErrors: false, strict: false }
if (mode !== 'base') opts.validateSchema = false
if (mode === 'nometa') opts.meta = false
const t1 = performance.now()
const ajv = new Ajv(opts)
const f = ajv.compile(configSchema)
const t2 = performance.now()
console.log(mode, (t2 - t1).toFixed(0), f({ collections: { a: { format: 'md' } } }), f({ bogus: 1 }))
