import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

interface Violation { id: string, impact: string | null, help: string, nodes: Array<{ target: unknown[] }> }

/** axe-core's own source, to inject into a page (the page's CSP must be bypassed by the context). */
export async function axeSource (): Promise<string> {
  return await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
}

/**
 * Runs axe on the page.
 * @param page a page whose context bypasses CSP
 * @param source axe's source, from axeSource()
 * @returns the critical and serious violations, each as one line
 */
export async function severe (page: Page, source: string): Promise<string[]> {
  if (await page.evaluate('typeof axe') === 'undefined') await page.addScriptTag({ content: source })
  const violations = await page.evaluate<Violation[]>('axe.run(document, { resultTypes: ["violations"] }).then(r => r.violations)')
  return violations.filter(v => v.impact === 'critical' || v.impact === 'serious')
    .map(v => `${v.impact ?? ''} ${v.id}: ${v.help} (${v.nodes.slice(0, 3).map(n => JSON.stringify(n.target)).join(', ')})`)
}
