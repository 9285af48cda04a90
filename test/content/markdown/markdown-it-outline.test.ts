import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { unified } from 'unified'
import remarkParse from 'remark-parse'
import remarkGfm from 'remark-gfm'
import { fromRoot } from '../../helpers/repo-root.js'
import { outlineOf } from '../../../lib/content/markdown/body-outline.js'
import { parseOutline } from '../../../lib/content/markdown/markdown-it-outline.js'

// The outline made from markdown-it's tokens (micromark only for the runs it may read otherwise)
// must be the one of a whole micromark parse: every top-level node, definition label, emphasis
// marker and block (range, hash, kind, depth, plain text, editable).
const processor = unified().use(remarkParse).use(remarkGfm).freeze()
const whole = (body: string): ReturnType<typeof outlineOf> => outlineOf(processor.parse(body), body)

const corpus = readdirSync(fromRoot('test/fixtures/markdown-corpus')).filter(f => f.endsWith('.md')).sort()
  .map(name => ({ name, body: readFileSync(fromRoot('test/fixtures/markdown-corpus', name), 'utf8') }))

/** The bodies of the generator sites' Markdown files (front matter left out). */
function generatorBodies (): Array<{ name: string, body: string }> {
  const root = fromRoot('test/fixtures')
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter(f => /\.(?:md|markdown)$/.test(f)).sort().map(name => {
    const text = readFileSync(path.join(root, name), 'utf8')
    const matter = /^(?:---\r?\n[\s\S]*?\r?\n---|\+\+\+\r?\n[\s\S]*?\r?\n\+\+\+)\r?\n/.exec(text)
    return { name, body: matter === null ? text : text.slice(matter[0].length) }
  })
}

/** A body of about `chars` characters made of the corpus's LF documents, as the bench makes it. */
function generated (chars: number, from: number): string {
  const docs = corpus.filter(d => !d.body.includes('\r')).map(d => d.body)
  let body = ''
  for (let i = from; body.length < chars; i++) body += (docs[i % docs.length] as string) + '\n\n'
  return body
}

const CASES: Record<string, string> = {
  'fences: open, in a list, holding blank lines': 'a\n\n```\ncode\n\nnot cut\n\n```\n\n- item\n  ```\n  code\n\nafter\n\n  ```\n\n~~~ js\nx\n~~~\n\n````\nopen\n',
  'HTML blocks of every kind': '<pre>\nx\n\ny\n</pre>\n\n<!--\n\nc\n\n-->\n\n<?php x ?>\n\n<!DOCTYPE html>\n\n<![CDATA[\nq\n]]>\n\n<div>\n\n*text*\n\n</div>\n\n<custom-tag>\nz\n\n  <table><tr><td>cell</td></tr></table>  \n',
  'definitions: in quotes, over lines, twice, javascript:, used before': '[a] and [B c][] and [d][e] [x] [js]\n\n[a]: /1\n[b  c]: /2 "t"\n\n> [e]: /3\n> text\n\n[x]:\n/url\n"title"\n\n[x]: /again\n\n[js]: javascript:alert(1)\n\n[a\\]b]: /x\n\nsee [a\\]b]\n\n- [li]: /in-item\n  para [li]\n',
  'footnotes with continuations': 'text[^1] and [^n b]\n\nq\n\n[^1]: one\n\n    more\n\n    - list in it\n\n[^n b]: two\nlazy\n\nafter\n',
  'lazy lines and nested quotes': '> a\nb\n\nc\n\n> d\n> > e\n> > f\n>\n> g\n\n>\n\n> > > deep\n\n>     code in quote\n',
  'lists: loose, tight, empty items, ordered, nested': '- a\n\n- b\n\n  c\n\nd\n\n1. x\n\n2) y\n\n-\n- \n-   spaced\n\n10. ten\n    - nested\n      1. deeper\n\n* star\n+ plus\n\n- item\n\n      indented code in item\n',
  'indented code, trailing spaces, tabs': '    code   \n\n    more\n  \n\nx\n\n\tcode with tab\n\ntrailing spaces   \nhard break\\\nend  \n\n# heading #   \n\n## closed ##\n\n***   \n\n- \ta tab item\n',
  'setext headings': 'a\n\n===\n\nb\n---\n\nc\nd\n====  \n\n  e\n---\n',
  'tables': '| a | b |\n|---|---|\n| 1 | 2 |\n\nx\n\n| c |\n|---|\n\npara\n| h |\n| - |\nrow without pipe\n',
  'inline constructs': 'A `code\nover lines` and `` ` `` and ` a ` and *em* __strong__ ***both*** ![alt *x*](i.png) <b>html</b> &amp; &copy; &#35; \\* [link](/u "t") <https://a.b/%20c> <mailto:x@y.z> https://x.org/a_b_ www.e.com/*x* a_b@c.de foo@bar.com\n',
  'task items and strikethrough': '- [ ] open\n- [x] done\n* [X] also\n\n~one~ and ~~two~~ and ~~~three~~~\n',
  'template and MDX-looking paragraphs': '{{< shortcode >}}\n\n{% raw %}\n\nimport x from "y"\n\n<Tabs>\n\n<span>inline html first</span>\n',
  'blank lines of spaces, leading and trailing': '\n\n\na\n  \t\nb\n \n\nc\n\n\n',
  'a byte order mark, CRLF and CR': '\uFEFFa\r\n\r\n- b\r\n\r\nc\rd',
  'a body with no final newline': '# t\n\npara',
  'trailing whitespace after every kind of block': '```  \ncode  \n```  \n\n[d]: /u "t"  \n\n#  \n\n> quote  \n>  \n\n- item  \n  \n\n~~~\nopen  \n  \n',
  'blocks in quotes and items': '> # h\n> ```\n> code\n> ```\n> ***\n> <div>x</div>\n>\n> para\n\n- > quoted\n  > more\n- # heading item\n- ```\n  fenced\n  ```\n\n1. a\n   [r]: /r\n\n   b [r]\n',
  'footnote calls: defined, undefined, escaped, in brackets, before a link': 'a[^1] b[^none] \\[^1] [x [^1]] [^1](u) *c[^1]*\n\ntext [^n.b-c] end\n\n[^1]: one\n\n[^n.b-c]: two\n',
  'a footnote label that markdown-it reads as a link definition': 'see [^w]\n\n[^w]: word\n',
  'emphasis markers first in a later chunk': 'plain\n\n| t |\n|---|\n| _u_ |\n\n*later* __strong__\n'
}

t.test('the outline is a whole micromark parse\'s', async t => {
  const cases = [
    ...corpus.map(d => ({ name: d.name, body: d.body })),
    { name: 'the corpus as one body', body: corpus.map(d => d.body).join('\n\n') },
    { name: 'a generated 20 KB body', body: generated(20 * 1024, 0) },
    { name: 'a generated 60 KB body from another document', body: generated(60 * 1024, 7) },
    ...Object.entries(CASES).map(([name, body]) => ({ name, body })),
    ...generatorBodies()
  ]
  for (const { name, body } of cases) t.same(parseOutline(body), whole(body), name)
})
