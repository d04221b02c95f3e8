/** Uploading a step's artifact: only on a runner, which gives the artifact service's address and token. */
import { relative } from 'node:path'
import * as core from '@actions/core'
import { uploadArtifact } from './artifacts.js'

/** Uploads `files` (all inside `root`) as the artifact `name` of this run; warns instead off a runner. */
export async function upload(name: string, files: string[], root: string): Promise<void> {
  if (!process.env.ACTIONS_RUNTIME_TOKEN || !process.env.ACTIONS_RESULTS_URL) {
    core.warning('No artifact upload: ACTIONS_RUNTIME_TOKEN or ACTIONS_RESULTS_URL is not set (not running on GitHub Actions?)')
    return
  }
  const id = await core.group(`Upload the artifact ${name}`, () => uploadArtifact(name, files, root))
  core.info(`Uploaded artifact ${name} (id ${id}): ${files.map((f) => relative(root, f)).join(', ')}`)
}
