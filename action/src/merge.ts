/**
 * The merge step (`mode: merge`): finds the shard artifacts of this workflow run
 * (`<artifact-name>-shard-K-of-N`, uploaded by the `shard` steps of earlier jobs), downloads
 * them, and merges their results with `loadgate merge`. What follows (baseline, reports, summary,
 * comment, the `<artifact-name>` artifact) is the stored mode's, in main.ts.
 */
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import * as core from '@actions/core'
import { downloadArtifact, type ArtifactOrigin } from './artifacts.js'
import { EXIT, engineMessage, invoke } from './engine.js'
import type { Children } from './child.js'
import { httpStatus, type GitHubApi } from './github.js'
import type { Shard } from './inputs.js'
import { shardOfArtifact } from './shards.js'
import { errorLines, type Unmeasured } from './summary.js'

/** A shard's artifact in this run. */
export interface ShardArtifact {
  id: number
  name: string
  shard: Shard
}

/** The fields of a run artifact (REST `GET .../actions/runs/{id}/artifacts`) that selection reads. */
export interface RunArtifact {
  id: number
  name: string
  expired: boolean
  created_at?: string | null
}

/**
 * The shard artifacts among a run's artifacts, by K then N: unexpired ones named
 * `<artifact-name>-shard-K-of-N`; of several with one name (a re-run job's upload beside the
 * first attempt's), the newest.
 */
export function selectShardArtifacts(artifacts: RunArtifact[], artifactName: string): ShardArtifact[] {
  const newest = new Map<string, ShardArtifact & { at: number }>()
  for (const a of artifacts) {
    const shard = shardOfArtifact(artifactName, a.name)
    if (shard === undefined || a.expired) continue
    const at = Date.parse(a.created_at ?? '') || 0
    const kept = newest.get(a.name)
    if (!kept || at > kept.at || (at === kept.at && a.id > kept.id)) newest.set(a.name, { id: a.id, name: a.name, shard, at })
  }
  return [...newest.values()]
    .sort((x, y) => x.shard.index - y.shard.index || x.shard.count - y.shard.count)
    .map(({ id, name, shard }) => ({ id, name, shard }))
}

/** What the merge step needs: this run's artifacts, the engine, and where its files go. */
export interface MergeStep {
  api: GitHubApi
  /** This workflow run, where the shards uploaded their artifacts. */
  origin: ArtifactOrigin
  engine: string
  /** The working directory the engine runs in. */
  cwd: string
  /** This step's folder: the shards go to `shards/`, the merged result to `result.json`. */
  out: string
  artifactName: string
  /** `loadgate merge --allow-missing`: merge the shards present, the result marked partial. */
  allowMissing: boolean
  /** What the engine gets. */
  children: Children
}

/** The merged result, or why there is none (the step publishes that, then fails). */
export type Merged = { resultPath: string } | { unmerged: Unmeasured }

/**
 * Lists this run's shard artifacts (paginated), downloads each into `out/shards/<name>/`, and
 * merges the results that hold a `result.json` (a shard that could not run uploads its report
 * and engine.log only, and counts as missing).
 */
export async function mergeShards(step: MergeStep): Promise<Merged> {
  const { api, origin, artifactName } = step
  let all
  try {
    all = await api.paginate(api.rest.actions.listWorkflowRunArtifacts, {
      owner: origin.owner,
      repo: origin.repo,
      run_id: origin.runId,
      per_page: 100
    })
  } catch (error) {
    const status = httpStatus(error)
    if (status !== 403 && status !== 404) throw error
    throw new Error(
      `cannot list the artifacts of this workflow run (run ${origin.runId}): ${(error as Error).message}. The token needs \`actions: read\` permission (docs/action.md, "Permissions").`,
      { cause: error }
    )
  }
  const found = selectShardArtifacts(all as RunArtifact[], artifactName)
  if (found.length === 0) return { unmerged: noShards(artifactName, origin.runId, all.length) }
  core.info(`Shard artifacts of run ${origin.runId}: ${found.map((a) => a.name).join(', ')}`)

  const results: string[] = []
  for (const a of found) {
    const dir = join(step.out, 'shards', a.name)
    mkdirSync(dir, { recursive: true })
    await downloadArtifact(a.id, origin, dir)
    const path = join(dir, 'result.json')
    if (existsSync(path)) results.push(path)
    else core.warning(`The artifact ${a.name} holds no result.json: shard ${a.shard.index} of ${a.shard.count} could not run (its engine.log says why); it counts as missing.`)
  }
  const resultPath = join(step.out, 'result.json')
  const args = ['merge', ...results, '--out', resultPath, ...(step.allowMissing ? ['--allow-missing'] : [])]
  const r = results.length === 0 ? undefined : await invoke(step.engine, args, step.cwd, step.children)
  // The engine judges the merged run as `run` judges one (exit 1: an SLO failed; 5: an invalid
  // measurement): the verdict's to report, not an error here.
  const merged: number[] = [EXIT.pass, EXIT.sloFailed, EXIT.invalidMeasurement]
  if (r === undefined || !merged.includes(r.code)) return { unmerged: notMerged(found, results.length, r?.code, r?.stderr ?? '', step.allowMissing) }
  return { resultPath }
}

const NOT_MERGED_NOTE = 'Not merged: there is no merged result, so nothing was compared, and this step fails whatever `fail-on` says.'

/** No artifact of this run is a shard's. */
function noShards(artifactName: string, runId: number, others: number): Unmeasured {
  const wanted = `${artifactName}-shard-K-of-N`
  return {
    markdown: [
      `### ⚠️ loadgate merge: no shard results in this run`,
      '',
      `\`mode: merge\` found no artifact named \`${wanted}\` in this workflow run (run ${runId}; it has ${others} other artifact(s)), so there is nothing to merge.`,
      '',
      `What to do: run the shards in earlier jobs of this workflow (a matrix job whose loadgate step has \`shard: \${{ matrix.shard }}/N\` and the same \`artifact-name\`, \`${artifactName}\`), make the merge job need them (\`needs:\`), and check their logs: a shard that failed before uploading leaves no artifact.`,
      ''
    ].join('\n'),
    note: NOT_MERGED_NOTE,
    log: undefined,
    message: `mode: merge: no artifact named ${wanted} in this workflow run (run ${runId}): nothing to merge (see the job summary)`
  }
}

/** `loadgate merge` refused the shards (or none of them holds a result): the engine's words, and what to do. */
function notMerged(found: ShardArtifact[], withResult: number, code: number | undefined, stderr: string, allowMissing: boolean): Unmeasured {
  const names = found.map((a) => `\`${a.name}\``).join(', ')
  const what =
    code === undefined
      ? `None of the shard artifacts (${names}) holds a result: no shard could run (each artifact's engine.log says why).`
      : `\`loadgate merge\` refused the ${withResult} shard result(s) of ${names} (exit code ${code}). The engine said:\n\n${errorLines(stderr)}`
  const todo = allowMissing
    ? 'What to do: fix what the message names (every shard of one run, started within a second of each other, from the same spec), then re-run the jobs.'
    : 'What to do: re-run the failed shard jobs; or, to merge the shards present, set `allow-missing: true` on this step (the merged result is then marked partial and its numbers cover only part of the load).'
  const said = code === undefined ? 'no shard artifact holds a result' : `the shards' results cannot be merged (exit code ${code})${stderr ? `:\n${engineMessage(stderr)}` : ''}`
  return {
    markdown: ['### ⚠️ loadgate merge: the shards could not be merged', '', what, '', todo, ''].join('\n'),
    note: NOT_MERGED_NOTE,
    log: code === undefined ? undefined : stderr,
    message: `loadgate merge: ${said}`
  }
}
