/**
 * The demo site's stylesheet, inlined in every page: a readable single-column blog that works from
 * 390 px phones up, with no web fonts and no external requests.
 */
export const SITE_CSS = `
:root { --ink: #1f2328; --muted: #5b636e; --line: #e3e6ea; --paper: #fdfcfa; --accent: #b4532a; --accent-ink: #fff; --soft: #f4efe9; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--paper); color: var(--ink); font: 18px/1.65 Charter, "Bitstream Charter", "Iowan Old Style", Georgia, serif; }
a { color: var(--accent); text-underline-offset: 0.15em; }
a:hover { text-decoration-thickness: 2px; }
a:focus-visible, .button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
img { max-width: 100%; height: auto; }
.wrap { max-width: 42rem; margin: 0 auto; padding: 0 1.25rem; }
.site-header { border-bottom: 1px solid var(--line); background: #fff; }
.site-header .wrap { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.25rem 1.5rem; padding-top: 1rem; padding-bottom: 1rem; }
.brand { font: 700 1.35rem/1.2 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); text-decoration: none; }
.tagline { margin: 0; color: var(--muted); font-size: 0.95rem; flex: 1 1 12rem; }
.site-nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; margin: 0; padding: 0; list-style: none; font: 500 0.95rem/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
.site-nav a { color: var(--ink); text-decoration: none; padding: 0.25rem 0; display: inline-block; }
.site-nav a:hover { color: var(--accent); }
main.wrap { padding-top: 2rem; padding-bottom: 3rem; }
h1, h2, h3 { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.25; letter-spacing: -0.01em; }
h1 { font-size: 2.1rem; margin: 0 0 0.75rem; }
h2 { font-size: 1.4rem; margin: 2rem 0 0.5rem; }
h3 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
.section-title { font-size: 0.85rem; text-transform: uppercase; letter-spacing: 0.08em; color: var(--muted); margin: 2.5rem 0 0.75rem; }
.post-list, .page-list { list-style: none; margin: 0; padding: 0; }
.post-list li { padding: 1.1rem 0; border-bottom: 1px solid var(--line); }
.post-list h2 { margin: 0.15rem 0 0.35rem; font-size: 1.3rem; }
.post-list h2 a { color: var(--ink); text-decoration: none; }
.post-list h2 a:hover { color: var(--accent); }
.page-list li { display: inline-block; margin: 0 1rem 0.5rem 0; }
.meta { color: var(--muted); font: 0.9rem/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; }
.tags { display: flex; flex-wrap: wrap; gap: 0.4rem; list-style: none; padding: 0; margin: 0.5rem 0 0; }
.tags li { background: var(--soft); border-radius: 999px; padding: 0.1rem 0.65rem; font: 0.8rem/1.6 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--muted); }
.badge { display: inline-block; background: #fff3cd; color: #6b4e00; border-radius: 4px; padding: 0 0.4rem; font-size: 0.8rem; }
.cover { margin: 1.5rem 0; }
.cover img { display: block; width: 100%; border-radius: 6px; }
.post-body { overflow-wrap: break-word; }
.post-body pre { background: #22272e; color: #e6edf3; padding: 1rem; border-radius: 6px; overflow-x: auto; font-size: 0.85rem; line-height: 1.5; }
.post-body code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.88em; }
.post-body :not(pre) > code { background: var(--soft); padding: 0.1em 0.3em; border-radius: 4px; }
.post-body blockquote { margin: 1.5rem 0; padding: 0.25rem 0 0.25rem 1rem; border-left: 4px solid var(--accent); color: var(--muted); font-style: italic; }
.post-body ul, .post-body ol { padding-left: 1.4rem; }
.author-box { display: flex; gap: 1rem; align-items: flex-start; margin-top: 3rem; padding: 1.25rem; background: var(--soft); border-radius: 8px; }
.author-box img { width: 64px; height: 64px; border-radius: 50%; flex: none; }
.author-box p { margin: 0.25rem 0 0; font-size: 0.95rem; }
.author-box ul { display: flex; flex-wrap: wrap; gap: 0 1rem; list-style: none; padding: 0; margin: 0.4rem 0 0; font-size: 0.9rem; }
.hero { padding: 2rem 0 1rem; }
.hero h1 { font-size: 2.4rem; }
.hero p { font-size: 1.2rem; color: var(--muted); margin: 0; }
.cta { margin: 2.5rem 0; padding: 1.5rem; background: var(--soft); border-radius: 8px; }
.cta h2 { margin-top: 0; }
.button { display: inline-block; background: var(--accent); color: var(--accent-ink); padding: 0.6rem 1.1rem; border-radius: 6px; text-decoration: none; font: 600 1rem/1.3 system-ui, -apple-system, "Segoe UI", sans-serif; }
.button:hover { background: #963f1c; }
.site-footer { border-top: 1px solid var(--line); color: var(--muted); font: 0.9rem/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; padding: 1.5rem 0 2.5rem; }
@media (max-width: 480px) {
  body { font-size: 17px; }
  h1, .hero h1 { font-size: 1.75rem; }
  .author-box { flex-direction: column; }
}
`
