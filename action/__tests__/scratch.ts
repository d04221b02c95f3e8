/**
 * Vitest's global setup: every temporary folder the tests make (workspaces, runs, releases,
 * tool caches, git origins and checkouts, and the engine's own) goes under one folder of this
 * test run, `TMPDIR` for the workers, removed when the run ends, so that runs leave nothing
 * behind in the system's temporary folder.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'loadgate-action-tests-'))
  process.env.TMPDIR = root
  return () => rmSync(root, { recursive: true, force: true })
}
