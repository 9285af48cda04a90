/**
 * The inline editor's binding grammar: `<collection>/<id>#<path>`, where ids may hold `/`, spaces
 * and `#` (nested collections, page bundles, real file names); the server checks each part.
 */
import t from 'tap'
import { parseBinding } from '../../lib/browser/editor/bindings.js'
import { parseSourceHint as parseHint, slugOf } from '../../lib/api-shapes.js'

t.test('parseBinding splits at the first / and the last #', async t => {
  t.same(parseBinding('posts/hello#body'), { collection: 'posts', id: 'hello', path: 'body' })
  t.same(parseBinding('posts/2023/launch#body'), { collection: 'posts', id: '2023/launch', path: 'body' })
  t.same(parseBinding('posts/Markdown Syntax#body'), { collection: 'posts', id: 'Markdown Syntax', path: 'body' })
  t.same(parseBinding("posts/what's new#title"), { collection: 'posts', id: "what's new", path: 'title' })
  t.same(parseBinding('posts/c#-notes#body'), { collection: 'posts', id: 'c#-notes', path: 'body' })
  t.same(parseBinding('pages/home#sections.0.heading'), { collection: 'pages', id: 'home', path: 'sections.0.heading' })
})

t.test('parseBinding refuses what cannot be a binding', async t => {
  for (const bad of [undefined, '', 'posts', 'posts/hello', 'posts/#body', 'posts/hello#', '/hello#body', 'Posts/hello#body', '-x/hello#body']) {
    t.equal(parseBinding(bad), null, String(bad))
  }
})

t.test('the editor reads start:end:hash with the server\'s parseSourceHint', async t => {
  t.same(parseHint('0:12:0123456789abcdef'), { start: 0, end: 12, hash: '0123456789abcdef' })
  for (const bad of [undefined, '', '0:12', '0:12:0123456789ABCDEF', '0:12:0123', 'a:b:0123456789abcdef']) t.equal(parseHint(bad), null, String(bad))
})

t.test('slugOf drops accents whole, as the Studio\'s ids and the server\'s upload names both need', async t => {
  t.equal(slugOf('Résumé', 80), 'resume')
  t.equal(slugOf('  Bakery window!  ', 80), 'bakery-window')
  t.equal(slugOf('Crème brûlée / 2024', 80), 'creme-brulee-2024')
  t.equal(slugOf('a'.repeat(59) + ' b', 60), 'a'.repeat(59))
  t.equal(slugOf('日本語', 80), '')
})
