/**
 * In-place editing on a post Jekyll built (kramdown with an attribute list, a footnote, Liquid
 * output, Rouge): see test/helpers/inline-generator.ts.
 */
import t from 'tap'
import { hasChromium } from '../helpers/browser.js'
import { checkGeneratorPage } from '../helpers/inline-generator.js'

if (!hasChromium()) t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
else {
  await checkGeneratorPage(t, {
    name: 'jekyll',
    templateOutput: 'pre',
    tabInto: 'The second item',
    pasteInto: 'Jekyll renders',
    edits: [
      { kind: 'type', block: 'A paragraph with an image', word: 'Zebra', from: 'middle of its text.', to: 'middle of its text. Zebra' },
      { kind: 'type', block: 'The second item', word: 'Zebra', from: 'with a [link to Jekyll]', to: 'with a Zebra [link to Jekyll]' },
      { kind: 'type', block: 'Getting started', word: 'Zebra', from: '## Getting started', to: '## Getting started Zebra' },
      { kind: 'type', block: 'A note box', word: 'Zebra', from: 'attribute list.\n{: .note}', to: 'attribute list. Zebra\n{: .note}' },
      { kind: 'bold', block: 'The last paragraph', word: 'last', from: 'The last paragraph', to: 'The **last** paragraph' },
      { kind: 'link', block: 'A quote about', word: 'quote', from: '> A quote about', to: '> A [quote](https://example.org/page) about' }
    ]
  })
}
