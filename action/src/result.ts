/**
 * What the action reads from a result file itself (the engine reads the rest): the spec's
 * `name` and the measurement's health. Each reader returns the "nothing known" value for a
 * file it cannot read.
 */
import { readFileSync } from 'node:fs'

/** Whether a result file says its measurement is invalid (`health.valid` false). */
export function invalidResult(path: string): boolean {
  try {
    return JSON.parse(readFileSync(path, 'utf8')).health?.valid === false
  } catch {
    return false
  }
}

/** The `health.problems` of a result file: why the engine found the measurement invalid. */
export function healthProblems(path: string): string[] {
  try {
    const problems: unknown = JSON.parse(readFileSync(path, 'utf8')).health?.problems
    return Array.isArray(problems) ? problems.filter((p): p is string => typeof p === 'string') : []
  } catch {
    return []
  }
}

/** The spec `name` a result file records (`spec.name`), or undefined when it is not a readable result. */
export function specName(path: string): string | undefined {
  try {
    const name: unknown = JSON.parse(readFileSync(path, 'utf8')).spec?.name
    return typeof name === 'string' ? name : undefined
  } catch {
    return undefined
  }
}
