/**
 * In-place editing on an MDX page (compiled by @mdx-js/mdx; an export, an expression and a JSX
 * component in the body): see test/helpers/inline-generator.ts.
 */
import t from 'tap'
import { hasChromium } from '../helpers/browser.js'
import { checkGeneratorPage } from '../helpers/inline-generator.js'

if (!hasChromium()) t.plan(0, 'Chromium is not installed at /usr/bin/chromium')
else {
  await checkGeneratorPage(t, {
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
}
