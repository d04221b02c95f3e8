/** Uploading a step's artifacts: only on a runner, which gives the artifact service's address and token. */
import { basename, relative } from 'node:path'
import * as core from '@actions/core'
import { uploadArtifact } from './artifacts.js'

/** Whether the runner gives the artifact service's address and token; warns when it does not. */
function onRunner(): boolean {
  if (process.env.ACTIONS_RUNTIME_TOKEN && process.env.ACTIONS_RESULTS_URL) return true
  core.warning('No artifact upload: ACTIONS_RUNTIME_TOKEN or ACTIONS_RESULTS_URL is not set (not running on GitHub Actions?)')
  return false
}

/**
 * Uploads `files` (all inside `root`) as the artifact `name` of this run; returns its id.
 * Warns instead off a runner; throws what the artifact service answered after its retries.
 */
export async function upload(name: string, files: string[], root: string): Promise<number | undefined> {
  if (!onRunner()) return undefined
  const id = await core.group(`Upload the artifact ${name}`, () => uploadArtifact(name, files, root))
  core.info(`Uploaded artifact ${name} (id ${id}): ${files.map((f) => relative(root, f)).join(', ')}`)
  return id
}

/**
 * Uploads one file as an artifact of its own, not zipped, named as the file (a browser opens
 * it from its link); returns its id.
 */
export async function uploadPage(file: string): Promise<number | undefined> {
  if (!onRunner()) return undefined
  const id = await uploadArtifact(basename(file), [file], file.slice(0, -basename(file).length), { skipArchive: true })
  core.info(`Uploaded ${basename(file)} as an artifact of its own (id ${id})`)
  return id
}
