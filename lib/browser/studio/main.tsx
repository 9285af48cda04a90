/** The Studio's single-page app: routes are paths under the mount path; signed out, every route signs in. */
import { render } from 'preact'
import type { JSX } from 'preact'
import { useEffect, useRef, useState, useCallback } from 'preact/hooks'
import { Api, ApiError, type Session } from './api.js'
import { Dashboard } from './dashboard.js'
import { CollectionPage } from './collection-page.js'
import { EntryPage } from './entry-page.js'
import { LazyMediaLibrary } from './lazy-parts.js'
import { focusSoon, studioConfig, type StudioConfig } from './types.js'
import { safeRedirectTarget } from '../../auth/redirect-target.js'

/** The path segment of the media page under `/cms` (never a collection name: those never start with `_`). */
const MEDIA_SEGMENT = '_media'

/** The Studio: routing between its pages. */
function App ({ config }: { config: StudioConfig }): JSX.Element {
  const [api] = useState(() => new Api(config.apiBasePath))
  const [session, setSession] = useState<Session | null>(null)
  const [path, setPath] = useState(location.pathname)
  const [deploy, setDeploy] = useState('')

  const navigate = useCallback((to: string) => {
    history.pushState(null, '', to)
    setPath(to)
    window.scrollTo(0, 0)
    // The new page's heading takes focus (an entry page focuses its own once it has loaded).
    focusSoon('main h1')
  }, [])
  useEffect(() => {
    const onPop = (): void => setPath(location.pathname)
    addEventListener('popstate', onPop)
    api.get<Session>('/auth/session').then(setSession, () => setSession({ authenticated: false, identity: null }))
    return () => removeEventListener('popstate', onPop)
  }, [])
  useEffect(() => {
    if (session?.authenticated !== true) return
    api.get<{ configured: boolean, state: string, commit?: string }>('/deployment').then(d => setDeploy(d.configured ? `Deployment: ${d.state}${d.commit !== undefined ? ` (${d.commit.slice(0, 7)})` : ''}` : 'Deployment: not configured'),
      () => setDeploy(''))
  }, [session, path])

  if (session === null) return <main class="loading"><p>Loading…</p></main>
  if (!session.authenticated) {
    return <SignIn api={api} config={config} onSignedIn={async () => {
      // Signed in from a site's page (bootstrap.js's "Sign in to edit"): back to that page.
      const back = new URLSearchParams(location.search).get('return')
      if (back !== null && safeRedirectTarget(back) === back) { location.assign(back); return }
      setSession(await api.get<Session>('/auth/session'))
      const target = path.startsWith(config.mountPath + '/cms') ? path : config.mountPath + '/cms'
      navigate(target)
    }} />
  }
  // The parts after the mount path, each URL-decoded (an id holding `/` travels as `%2F`); none when malformed.
  let parts: string[] = []
  try { parts = path.slice(config.mountPath.length).split('/').filter(Boolean).map(decodeURIComponent) } catch {}
  if (parts[0] !== 'cms') { queueMicrotask(() => navigate(config.mountPath + '/cms')) }
  const signOut = async (): Promise<void> => {
    try {
      const res = await api.call<{ redirect?: string }>('POST', '/auth/logout', undefined, false)
      if (typeof res.redirect === 'string') { location.href = res.redirect; return }
    } catch {}
    setSession({ authenticated: false, identity: null })
    navigate(config.mountPath)
  }
  const link = (e: MouseEvent): void => {
    const a = (e.target as HTMLElement).closest('a')
    if (a === null || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return
    const href = a.getAttribute('href') ?? ''
    if (!href.startsWith(config.mountPath + '/')) return
    e.preventDefault()
    navigate(href)
  }
  let page: JSX.Element
  const collection = parts[1] !== undefined ? config.collections.find(c => c.name === parts[1]) : undefined
  if (parts[1] === undefined) page = <Dashboard api={api} config={config} />
  else if (parts[1] === MEDIA_SEGMENT) {
    page = (
      <section class="media-page">
        <nav class="crumbs" aria-label="Breadcrumb"><a href={`${config.mountPath}/cms`}>Collections</a> / <span>Media</span></nav>
        <h1>Media library</h1>
        <p class="muted">Uploads and the site's image folders. Copy a file's URL, or delete a file no page needs any more.</p>
        <LazyMediaLibrary api={api} config={config} idPrefix="media" />
      </section>
    )
  } else if (collection === undefined) page = <p role="alert">There is no collection named “{parts[1]}”.</p>
  else if (parts[2] === undefined) page = <CollectionPage key={collection.name} api={api} config={config} collection={collection} navigate={navigate} />
  else page = <EntryPage key={`${collection.name}/${parts[2]}`} api={api} config={config} collection={collection} id={parts[2]} navigate={navigate} />
  return (
    <div class="app" onClick={link}>
      <header class="top">
        <a class="brand" href={config.mountPath + '/cms'}>git-cms Studio</a>
        <a class="nav-link" href={`${config.mountPath}/cms/${MEDIA_SEGMENT}`} aria-current={parts[1] === MEDIA_SEGMENT ? 'page' : undefined}>Media</a>
        <span class="deploy" role="status">{deploy}</span>
        <span class="who">{session.identity?.name}</span>
        <button type="button" class="secondary" onClick={() => { void signOut() }}>Sign out</button>
      </header>
      <main>{page}</main>
    </div>
  )
}

/** The sign-in form. */
function SignIn ({ api, config, onSignedIn }: { api: Api, config: StudioConfig, onSignedIn: () => Promise<void> }): JSX.Element {
  const [password, setPassword] = useState('')
  const [name, setName] = useState('')
  const field = useRef<HTMLInputElement>(null)
  useEffect(() => { field.current?.focus() }, [])
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault()
    setBusy(true)
    setError('')
    try {
      await api.call('POST', '/auth/login', name.trim() === '' ? { password } : { password, name }, false)
      await onSignedIn()
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 0
      setError(status === 401 ? 'That password is not correct.' : status === 429 ? 'Too many attempts. Wait a moment and try again.' : `Sign-in failed: ${(err as Error).message}`)
    } finally { setBusy(false) }
  }
  return (
    <main class="signin">
      <h1>Sign in to git-cms</h1>
      {config.authMode === 'provider'
        ? <p><a class="button" href={config.loginUrl ?? '#'}>Sign in with your identity provider</a></p>
        : (
          <form onSubmit={e => { void submit(e) }}>
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required ref={field}
              value={password} onInput={e => setPassword((e.currentTarget as HTMLInputElement).value)} />
            <label for="editor-name">Your name <span class="muted">(optional)</span></label>
            <input id="editor-name" name="name" type="text" autocomplete="name" maxLength={64} aria-describedby="editor-name-help"
              value={name} onInput={e => setName((e.currentTarget as HTMLInputElement).value)} />
            <p id="editor-name-help" class="muted small">With a name, your drafts wait for you after signing out and on other devices, and history shows your name.</p>
            {error !== '' && <p class="error" role="alert">{error}</p>}
            <button type="submit" disabled={busy}>Sign in</button>
          </form>
          )}
    </main>
  )
}

const root = document.getElementById('studio')
if (root !== null) { root.textContent = ''; render(<App config={studioConfig()} />, root) }
