/**
 * Route modules whose commands the first list never runs (writes, publish, uploads, media, search)
 * import them on their first request instead of at start: 35 modules (the write commands, the
 * command validators, `diff`) a restart no longer loads before it answers.
 */

/** Wraps a dynamic import so that it runs once, on the first call. */
export function loadOnFirstUse<T> (load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null
  return async () => await (loading ??= load())
}
