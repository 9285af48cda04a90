/**
 * The index worker: reads and parses every file of a collection in its own thread and posts back
 * only what the index keeps. Parsing 10,000 files leaves tens of megabytes of garbage; in the
 * worker that heap goes away with the thread instead of growing the server's for good.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { SchemaCompiler } from '../content/schema-tools.js'
import { readEntryFile } from './entry-file.js'
import { formatOfFile } from './entry-paths.js'
import { makeRow, rowContent, type IndexRow } from './index-row.js'
import type { IndexJob, IndexReply } from './index-reader.js'
import { rowJson } from './index-snapshot.js'

const job = workerData as IndexJob
const validate = job.schema === null ? () => [] : new SchemaCompiler().validator(job.schema)
// Rows go back as one JSON text (see IndexReply); the few JSON cannot carry, as they are.
const json: string[] = []
const odd: IndexRow[] = []
for (const [id, file] of job.files) {
  // A Markdown collection holds .md and .mdx files alike: each file is read as its extension says.
  const rules = { ...job.rules, format: formatOfFile(file, job.rules.format) }
  const state = await readEntryFile(job.repoRealDir, file, rules.format)
  if (state.kind === 'missing') continue
  const row = makeRow(id, file, state.sig, 0, state.kind === 'ok' ? rowContent(id, state.data, state.text, rules, validate) : { message: state.message })
  const text = rowJson(row)
  if (text === null) odd.push(row)
  else json.push(text)
}
const reply: IndexReply = { json: `[${json.join(',')}]`, odd }
parentPort?.postMessage(reply)
