/**
 * Artifacts: uploading this run's result and reports (the next baseline), and downloading an
 * earlier run's result, or this run's shards (through the REST API).
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DefaultArtifactClient } from '@actions/artifact'

/**
 * Uploads `files` (all inside `rootDir`) as the artifact `name`; returns its id. With
 * `skipArchive`, one file, not zipped, named as the file.
 */
export async function uploadArtifact(name: string, files: string[], rootDir: string, options: { skipArchive?: boolean } = {}): Promise<number | undefined> {
  const client = new DefaultArtifactClient()
  const { id } = await client.uploadArtifact(name, files, rootDir, options)
  return id
}

export interface ArtifactOrigin {
  token: string
  owner: string
  repo: string
  runId: number
}

/** Downloads artifact `id` of run `from.runId` (another run, or this one) into `dir`, through the REST API. */
export async function downloadArtifact(id: number, from: ArtifactOrigin, dir: string): Promise<void> {
  const client = new DefaultArtifactClient()
  await client.downloadArtifact(id, {
    path: dir,
    findBy: {
      token: from.token,
      workflowRunId: from.runId,
      repositoryOwner: from.owner,
      repositoryName: from.repo
    }
  })
}

/** Downloads artifact `id` of another run into `dir`; returns the path of the result JSON in it. */
export async function downloadResult(id: number, from: ArtifactOrigin, dir: string, resultFile: string): Promise<string> {
  await downloadArtifact(id, from, dir)
  const path = join(dir, resultFile)
  if (!existsSync(path)) {
    const found = readdirSync(dir).join(', ') || 'nothing'
    throw new Error(`the baseline artifact of run ${from.runId} holds no ${resultFile} (it holds ${found})`)
  }
  return path
}
