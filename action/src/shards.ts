/**
 * A shard step (input `shard: K/N`, in a matrix job): `loadgate run --shard K/N` applies its
 * share of the load, and the step uploads the shard's result and report as the artifact
 * `<artifact-name>-shard-K-of-N` for the merge step (`mode: merge`, merge.ts). A shard is not
 * judged alone: no baseline, no comparison, no comment; the step fails only when the engine
 * could not run (exit code 3), crashed, or refused the spec or the command line.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as core from '@actions/core'
import { EXIT, engineFailure, invoke } from './engine.js'
import type { Children } from './child.js'
import type { Shard } from './inputs.js'
import { escapeMarkdown, notCarriedOut, setOutputs, writeSummary } from './summary.js'
import { upload } from './upload.js'
import { readVerdict, type LoadgateVerdict } from './verdict.js'

/** `K/N`, as `--shard` takes it. */
export function shardText(s: Shard): string {
  return `${s.index}/${s.count}`
}

/** `--start-at TIME` for `loadgate run`; none for '' (at once). */
export function startAtArgs(startAt: string): string[] {
  return startAt === '' ? [] : ['--start-at', startAt]
}

/** The artifact a shard uploads: `<artifact-name>-shard-K-of-N`. */
export function shardArtifactName(artifactName: string, s: Shard): string {
  return `${artifactName}-shard-${s.index}-of-${s.count}`
}

/**
 * The shard an artifact name stands for, when it is `<artifact-name>-shard-K-of-N` exactly
 * (1 ≤ K ≤ N); undefined for any other name (another step's artifact, the merged one).
 */
export function shardOfArtifact(artifactName: string, name: string): Shard | undefined {
  if (!name.startsWith(`${artifactName}-shard-`)) return undefined
  const m = name.slice(artifactName.length).match(/^-shard-([1-9]\d*)-of-([1-9]\d*)$/)
  if (!m) return undefined
  const [index, count] = [Number(m[1]), Number(m[2])]
  return index <= count ? { index, count } : undefined
}

/** What a shard step needs: the engine, the spec, and where its files go. */
export interface ShardStep {
  engine: string
  /** The spec file, absolute. */
  spec: string
  /** The spec as the repository names it (relative to the workspace), for the summary. */
  specLabel: string
  /** The working directory the engine runs in. */
  cwd: string
  /** This step's folder (empty): what is uploaded. */
  out: string
  artifactName: string
  shard: Shard
  /** `--start-at` (RFC 3339 or `+30s`); '' for at once. */
  startAt: string
  /** Extra `loadgate run` arguments. */
  args: string[]
  /** What the engine (and the service it starts) gets. */
  children: Children
}

/** Runs shard `step.shard`, uploads it, writes one summary line and the outputs; throws what fails the step. */
export async function runShard(step: ShardStep): Promise<void> {
  const { engine, cwd, out, shard } = step
  const name = shardArtifactName(step.artifactName, shard)
  const resultPath = join(out, 'result.json')
  const mdPath = join(out, 'report.md')
  const args = ['run', step.spec, '--out', resultPath, '--shard', shardText(shard), ...startAtArgs(step.startAt), ...step.args]
  const ran = await core.group(`loadgate run ${step.specLabel} --shard ${shardText(shard)}`, () => invoke(engine, args, cwd, step.children))

  if (ran.code === EXIT.notCarriedOut) {
    // Uploaded all the same: the merge step names this shard as one that could not run.
    const stop = notCarriedOut(step.specLabel, 'run', ran)
    writeFileSync(mdPath, stop.markdown)
    writeFileSync(join(out, 'engine.log'), ran.stderr)
    await upload(name, [mdPath, join(out, 'engine.log')], out)
    await writeSummary(`${stop.note}\n\n${stop.markdown}`)
    setOutputs({ verdict: undefined, paths: { result: '', markdown: mdPath, html: '', junit: '' }, commentUrl: undefined, shard: true, engine })
    throw new Error(stop.message)
  }
  // A shard's SLOs are not judged (the engine exits 0); an engine that judged them still ran.
  const measured: number[] = [EXIT.pass, EXIT.sloFailed, EXIT.invalidMeasurement]
  if (!measured.includes(ran.code)) throw new Error(engineFailure('run', ran))

  const verdictPath = join(out, 'verdict.json')
  await core.group('loadgate report', async () => {
    for (const [format, file] of [['md', mdPath], ['json', verdictPath]]) {
      const r = await invoke(engine, ['report', resultPath, '--format', format, '--output', file], cwd, step.children)
      if (r.code !== EXIT.pass) throw new Error(engineFailure(`report --format ${format}`, r))
    }
  })
  const verdict = readVerdict(readFileSync(verdictPath, 'utf8'), verdictPath)
  await upload(name, [resultPath, mdPath], out)
  await writeSummary(`${shardLine(step.specLabel, shard, verdict, name)}\n`)
  setOutputs({ verdict, paths: { result: resultPath, markdown: mdPath, html: '', junit: '' }, commentUrl: undefined, shard: true, engine })
}

/** The shard's line in the job summary: its numbers as the engine formatted them, and where it went. */
export function shardLine(spec: string, shard: Shard, v: LoadgateVerdict, artifact: string): string {
  const d = v.current.headline.display
  return (
    `**loadgate ${escapeMarkdown(spec)}, shard ${shard.index} of ${shard.count}**: rps ${d.rps}, p95 ${d.p95}, p99 ${d.p99}, ` +
    `error rate ${d.error_rate}, requests ${d.requests}. Uploaded as the artifact \`${artifact}\`; ` +
    'the SLOs and the comparison with the baseline are judged on the merged result (the `mode: merge` step).'
  )
}
