/**
 * Route modules whose commands the first list never runs (writes, publish, uploads, media, search)
 * import them on their first request instead of at start: 35 modules (the write commands, the
 * command validators, `diff`) a restart no longer loads before it answers.
 */

/**
 * Wraps a dynamic import so that it runs once, on the first call.
 * @param load the import, e.g. `async () => await import('../commands/mutate.js')`
 * @returns a function resolving to the loaded module (the same promise on every call)
 */
export function loadOnFirstUse<T> (load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null
  return async () => await (loading ??= load())
}
