/**
 * The index worker: reads and parses every file of a collection in its own thread and posts back
 * only what the index keeps. Parsing 10,000 files leaves tens of megabytes of garbage; in the
 * worker that heap goes away with the thread instead of growing the server's for good.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { SchemaCompiler } from '../content/schema-tools.js'
import { readEntryFile } from './entry-file.js'
import { formatOfFile, isDefaultFile } from './entry-paths.js'
import { makeRow, rowContent, type IndexRow } from './index-row.js'
import { WORKER_TABLE_FORMAT, WORKER_TABLE_KEY, type IndexJob, type IndexReply } from './index-reader.js'
import { RowTableWriter } from './row-table.js'

const job = workerData as IndexJob
const validate = job.schema === null ? () => [] : new SchemaCompiler().validator(job.schema)
// Rows go back as a row table (see IndexReply); the few a record cannot carry, as they are.
const chunks: Buffer[] = []
const writer = new RowTableWriter(WORKER_TABLE_FORMAT, WORKER_TABLE_KEY, job.rules.titleField, chunk => { chunks.push(Buffer.from(chunk)) })
const odd: IndexRow[] = []
for (const [id, file] of job.files) {
  // A Markdown collection holds .md and .mdx files alike: each file is read as its extension says.
  const rules = { ...job.rules, format: formatOfFile(file, job.rules.format) }
  const state = await readEntryFile(job.repoRealDir, file, rules.format)
  if (state.kind === 'missing') continue
  if (state.kind !== 'ok') { odd.push(makeRow(id, file, state.sig, 0, { message: state.message })); continue }
  const content = rowContent(id, state.data, state.text, rules, validate)
  const own = job.layout !== undefined && isDefaultFile(job.layout, id, file) ? null : file
  if (!writer.add({ id, sig: state.sig, order: content.order, file: own, content })) odd.push(makeRow(id, file, state.sig, 0, content))
}
writer.end()
// One buffer of its own (not a pooled one), handed over without a copy.
const table = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0))
let at = 0
for (const chunk of chunks) { table.set(chunk, at); at += chunk.byteLength }
const reply: IndexReply = { table, odd }
parentPort?.postMessage(reply, [table.buffer])
