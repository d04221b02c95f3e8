/**
 * Path inputs confined: `spec`, `working-directory` and `baseline` name files of the
 * workspace, `engine-path` a binary in the workspace or in the runner's temp or tool-cache
 * folder. A path is resolved with its symbolic links followed, so that neither `../..` nor a
 * link committed in the pull request leads the engine to read (and quote) a file elsewhere.
 */
import { existsSync, realpathSync } from 'node:fs'
import { isAbsolute, relative, resolve } from 'node:path'

/** A folder a path input may lead into, and how the error names it. */
export interface Root {
  dir: string
  label: string
}

/** `dir` with its links followed when it exists (RUNNER_TEMP may be a link, e.g. on macOS). */
export function real(dir: string): string {
  return existsSync(dir) ? realpathSync(dir) : resolve(dir)
}

/** Whether `path` is `dir` or inside it (both absolute, links followed). */
export function inside(dir: string, path: string): boolean {
  const r = relative(dir, path)
  return r === '' || (!r.startsWith('..') && !isAbsolute(r))
}

/**
 * Input `name`'s value `path`, resolved against `base`, its links followed (when it exists);
 * throws naming the input when it lies outside every one of `roots`.
 */
export function confined(name: string, path: string, base: string, roots: Root[]): string {
  const lexical = resolve(base, path)
  const full = existsSync(lexical) ? realpathSync(lexical) : lexical
  if (roots.some((r) => inside(real(r.dir), full))) return full
  const where = roots.map((r) => `${r.label} (${r.dir})`).join(' or ')
  throw new Error(`input \`${name}\` is \`${path}\`, which leads to ${full}, outside ${where}: give a path inside it`)
}
