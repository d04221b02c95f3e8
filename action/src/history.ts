/** The history window a run on a branch carries in its artifact (`history/`), on disk. */
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import * as core from '@actions/core'
import { historyName, historyWindow } from './baseline.js'
import { specName } from './result.js'

/**
 * The history window a run on a branch carries: the previous run's `history/` (its newest
 * results of the same spec `name`) plus this run's result when `add` (not an invalid
 * measurement), written to `out/history/`; returns the files. The next runs on the branch carry
 * it on; pull requests into it read it.
 */
export function carryHistory(out: string, previous: string | undefined, resultPath: string, runId: number, add: boolean): string[] {
  const dir = join(out, 'history')
  mkdirSync(dir, { recursive: true })
  const from = previous ? join(previous, 'history') : undefined
  // Only results of this run's spec: the engine refuses a history of another (a renamed spec).
  const spec = specName(resultPath)
  const earlier = from && existsSync(from) ? readdirSync(from) : []
  const kept = historyWindow(spec === undefined ? earlier : earlier.filter((name) => specName(join(from!, name)) === spec))
  for (const name of kept) copyFileSync(join(from!, name), join(dir, name))
  if (add) {
    copyFileSync(resultPath, join(dir, historyName(runId)))
    kept.push(historyName(runId))
  }
  core.info(`History window: ${kept.length} result(s) kept in the artifact's history/${add ? '' : " (not this run's: its measurement is invalid)"}`)
  return kept.map((name) => join(dir, name))
}
