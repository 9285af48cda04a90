/**
 * In-place editing on posts four real generators built, one browser for them all, each site built
 * once (the checks: test/helpers/inline-generator.ts):
 * - Eleventy: markdown-it with markdown-it-anchor permalinks, Prism, an eleventy-img-like
 *   <picture>, a shortcode, and a 20 KB page for the pairing's time;
 * - Hugo: goldmark with its typographer, heading anchors from a render hook, a footnote, a
 *   shortcode, Chroma;
 * - Jekyll: kramdown with an attribute list, a footnote, Liquid output, Rouge;
 * - MDX: compiled by @mdx-js/mdx, with an export, an expression and a JSX component in the body.
 */
import t from 'tap'
import { hasChromium, launchBrowser, ensureBrowserBundle } from '../helpers/browser.js'
import { checkGeneratorPage } from '../helpers/inline-generator.js'

if (!hasChromium()) t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
else {
  // Four sites in one file: twice .taprc's limit for one file (each generator took up to 45 s of it).
  t.setTimeout(360_000)
  ensureBrowserBundle('editor')
  const browser = await launchBrowser(t)

  await t.test('eleventy', async t => {
    await checkGeneratorPage(t, browser, {
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
  })

  await t.test('hugo', async t => {
    await checkGeneratorPage(t, browser, {
      name: 'hugo',
      templateOutput: '.note',
      tabInto: 'The second item',
      pasteInto: 'Install it',
      edits: [
        { kind: 'type', block: 'A paragraph with an image', word: 'Zebra', from: 'middle of its text.', to: 'middle of its text. Zebra' },
        { kind: 'type', block: 'The second item', word: 'Zebra', from: 'with a [link to Hugo]', to: 'with a Zebra [link to Hugo]' },
        { kind: 'type', block: 'Getting started', word: 'Zebra', from: '## Getting started', to: '## Getting started Zebra' },
        { kind: 'bold', block: 'The last paragraph', word: 'last', from: 'The last paragraph', to: 'The **last** paragraph' },
        { kind: 'link', block: 'A quote about', word: 'quote', from: '> A quote about', to: '> A [quote](https://example.org/page) about' }
      ]
    })
  })

  await t.test('jekyll', async t => {
    await checkGeneratorPage(t, browser, {
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
  })

  await t.test('mdx', async t => {
    await checkGeneratorPage(t, browser, {
      name: 'mdx',
      templateOutput: '.callout',
      tabInto: 'The second item',
      pasteInto: 'A component sits',
      edits: [
        { kind: 'type', block: 'This post is written', word: 'Zebra', from: 'with components.', to: 'with components. Zebra' },
        { kind: 'type', block: 'The second item', word: 'Zebra', from: 'with a [link to MDX]', to: 'with a Zebra [link to MDX]' },
        { kind: 'type', block: 'Why MDX', word: 'Zebra', from: '## Why MDX', to: '## Why MDX Zebra' },
        { kind: 'bold', block: 'The last paragraph', word: 'last', from: 'The last paragraph', to: 'The **last** paragraph' }
      ]
    })
  })
}
