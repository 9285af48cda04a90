/**
 * In-place editing on a post Eleventy built (markdown-it with markdown-it-anchor permalinks, Prism,
 * an eleventy-img-like <picture>, a shortcode): see test/helpers/inline-generator.ts.
 */
import t from 'tap'
import { hasChromium } from '../helpers/browser.js'
import { checkGeneratorPage } from '../helpers/inline-generator.js'

if (!hasChromium()) t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
else {
  await checkGeneratorPage(t, {
    name: 'eleventy',
    templateOutput: '.callout',
    tabInto: 'The second item',
    pasteInto: 'Welcome to the',
    longPage: '/posts/long-post/',
    edits: [
      { kind: 'type', block: 'The possum sits', word: 'Zebra', from: 'picture with a srcset.', to: 'picture with a srcset. Zebra' },
      { kind: 'type', block: 'The second item', word: 'Zebra', from: 'with a [link to Eleventy]', to: 'with a Zebra [link to Eleventy]' },
      { kind: 'type', block: 'Writing code', word: 'Zebra', from: '## Writing code', to: '## Writing code Zebra' },
      { kind: 'bold', block: 'The last paragraph', word: 'last', from: 'The last paragraph', to: 'The **last** paragraph' },
      { kind: 'link', block: 'A quote from', word: 'quote', from: '> A quote from', to: `> A [quote](https://example.org/page) from` }
    ]
  })
}
