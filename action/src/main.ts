/**
 * The action: inputs -> engine -> run -> baseline -> report -> publish. Every step is awaited
 * inside the one try/catch that ends in `core.setFailed`.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as core from '@actions/core'
import * as github from '@actions/github'
import { readInputs, type Inputs } from './inputs.js'
import { readContext, type RunContext } from './context.js'
import { acquireEngine, engineMessage, EXIT, invoke, type Invocation } from './engine.js'
import { findBaselineArtifact, historyName, historyWindow, planBaseline } from './baseline.js'
import { downloadResult, uploadArtifact } from './artifacts.js'
import { commentBody, marker, upsertComment } from './comment.js'
import { annotateFailedSlos, setOutputs, writeSummary } from './summary.js'
import { failures, readRegression, readResult, verdict, type RegressionState } from './verdict.js'
import { httpStatus, type GitHubApi } from './github.js'

/** The root of the action's checkout: action/dist/index.js is two folders below it. */
function actionDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
}

export async function run(): Promise<void> {
  try {
    await main()
  } catch (error) {
    core.setFailed(error instanceof Error ? error.message : String(error))
  }
}

async function main(): Promise<void> {
  const inputs = readInputs((name) => core.getInput(name))
  const ctx = readContext(process.env, github.context.payload)
  const api = github.getOctokit(inputs.token)
  const workspace = process.env.GITHUB_WORKSPACE || process.cwd()
  const cwd = resolve(workspace, inputs.workingDirectory)
  const spec = resolve(cwd, inputs.spec)
  if (!existsSync(spec)) {
    throw new Error(`spec not found: ${spec} (input \`spec\` is ${inputs.spec}, relative to the working directory ${cwd})`)
  }
  const out = join(process.env.RUNNER_TEMP || tmpdir(), 'loadgate', inputs.artifactName)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })

  // engine
  // An action inside the workspace is this repository's own checkout (`uses: ./`): it gets the
  // engine built from that source, never a release of another commit.
  const root = actionDir()
  const inWorkspace = relative(resolve(workspace), root)
  const local = !inWorkspace.startsWith('..') && !isAbsolute(inWorkspace)
  const engine = await acquireEngine(inputs.engine, {
    api,
    actionDir: root,
    actionRepository: local ? '' : ctx.actionRepository,
    workingDirectory: cwd
  })
  core.info(`Engine: ${engine.how}`)

  // run
  const resultPath = join(out, 'result.json')
  const ran = await core.group(`loadgate run ${inputs.spec}`, () =>
    invoke(engine.path, ['run', spec, '--out', resultPath, ...inputs.args], cwd)
  )
  if (ran.code !== EXIT.pass && ran.code !== EXIT.sloFailed) throw new Error(engineFailure('run', ran))
  const result = readResult(readFileSync(resultPath, 'utf8'), resultPath)

  // baseline
  const baseline = await core.group('Find the baseline', () => resolveBaseline(inputs, ctx, api, cwd, out))
  core.info(baseline.note)

  // On a schedule, the window of scheduled results goes to the report for its trend.
  const history = ctx.eventName === 'schedule' ? carryHistory(out, baseline.dir, resultPath, ctx.runId) : []

  // report
  const mdPath = join(out, 'report.md')
  const htmlPath = join(out, 'report.html')
  const verdictPath = join(out, 'verdict.json')
  const results = history.length > 1 ? [join(out, 'history')] : [resultPath]
  const reports: Array<[string, string]> = [
    ['md', mdPath],
    ['html', htmlPath],
    ['json', verdictPath]
  ]
  let refused = await core.group('loadgate report', () => report(engine.path, results, baseline.path, reports, cwd))
  if (refused && baseline.found) {
    // A baseline found in an earlier run that the engine refuses to compare with (another spec
    // name, another result version) is no baseline: the first run of a renamed spec passes.
    core.warning(`The baseline cannot be compared with this run: ${engineMessage(refused.stderr, 3)}`)
    const said = engineMessage(refused.stderr, 1).replace(/^loadgate: error: /, '')
    baseline.note = `Not compared: the baseline, ${baseline.found}, cannot be compared with this run (the engine says: ${said}).`
    delete baseline.path
    refused = await core.group('loadgate report (without the baseline)', () => report(engine.path, results, undefined, reports, cwd))
  }
  if (refused) throw new Error(engineFailure('report', refused))
  const regression: RegressionState = baseline.path
    ? readRegression(readFileSync(verdictPath, 'utf8'), verdictPath)
    : 'no-baseline'
  const v = verdict(result, regression)

  // publish
  const markdown = `> ${baseline.note}\n\n${readFileSync(mdPath, 'utf8')}`
  await writeSummary(markdown)
  annotateFailedSlos(result.failedSlos, relative(workspace, spec))

  const mark = marker(`${ctx.workflowFile ?? ctx.workflowName}/${ctx.job}/${inputs.artifactName}`)
  const body = commentBody(mark, markdown, `[the job summary](${ctx.runUrl}) and the \`${inputs.artifactName}\` artifact`)
  const files = [resultPath, mdPath, htmlPath, verdictPath, ...history]
  if (ctx.pullRequest) {
    // For a trusted workflow_run workflow that comments on pull requests from forks (README).
    writeFileSync(join(out, 'comment.md'), body)
    writeFileSync(join(out, 'pull-request.json'), `${JSON.stringify({ number: ctx.pullRequest.number })}\n`)
    files.push(join(out, 'comment.md'), join(out, 'pull-request.json'))
  }
  await upload(inputs.artifactName, files, out)

  let commentUrl: string | undefined
  if (ctx.pullRequest && inputs.comment !== 'never') {
    const failed = v.overall === 'fail'
    const r = await upsertComment(api, {
      owner: ctx.owner,
      repo: ctx.repo,
      issueNumber: ctx.pullRequest.number,
      mark,
      body,
      create: inputs.comment === 'always' || failed
    })
    commentUrl = r.url
    if (r.outcome === 'forbidden') {
      core.warning(
        `Could not comment on pull request #${ctx.pullRequest.number}: the token may not write to it` +
          `${ctx.pullRequest.fromFork ? ' (a pull request from a fork gets a read-only token)' : ''}. ` +
          'The report is in the job summary; the README shows the workflow_run pattern that comments from a trusted workflow.'
      )
    } else {
      core.info(`Pull request comment: ${r.outcome}${r.url ? ` (${r.url})` : ''}`)
    }
  }

  setOutputs({ verdict: v, resultPath, markdownPath: mdPath, htmlPath, headline: result.headline, commentUrl })

  const why = failures(inputs.failOn, v, result)
  if (why.length > 0) {
    core.setFailed(`loadgate: ${why.join('; ')} (fail-on: ${inputs.failOn})`)
  } else {
    core.info(`loadgate: SLOs ${v.slo}, regression ${v.regression}; the step passes (fail-on: ${inputs.failOn})`)
  }
}

/**
 * Writes each report; returns the failed invocation when the engine refused the comparison
 * (exit code 2 with a baseline), and throws for any other failure.
 */
async function report(
  engine: string,
  results: string[],
  baseline: string | undefined,
  reports: Array<[string, string]>,
  cwd: string
): Promise<Invocation | undefined> {
  const against = baseline ? ['--baseline', baseline] : []
  for (const [format, file] of reports) {
    const r = await invoke(engine, ['report', ...results, ...against, '--format', format, '--output', file], cwd)
    if (r.code === EXIT.invalid && baseline) return r
    if (r.code !== EXIT.pass) throw new Error(engineFailure(`report --format ${format}`, r))
  }
  return undefined
}

/** What the engine said when it did not produce a verdict. */
function engineFailure(what: string, r: Invocation): string {
  const meaning: Record<number, string> = {
    [EXIT.invalid]: 'the spec or the command line is invalid',
    [EXIT.notCarriedOut]: 'the run could not be carried out',
    [EXIT.regression]: 'a regression was found',
    [EXIT.invalidMeasurement]: 'the measurement is invalid'
  }
  const m =
    r.code === -1 ? 'the engine crashed: it was killed by a signal' : `${meaning[r.code] ?? 'the engine failed unexpectedly'} (exit code ${r.code})`
  const said = engineMessage(r.stderr)
  return `loadgate ${what}: ${m}${said ? `:\n${said}` : ''}`
}

/**
 * The window of scheduled results for the trend: the previous scheduled run's `history/` (its
 * newest results) plus this run's result, written to `out/history/`; returns the files.
 */
function carryHistory(out: string, previous: string | undefined, resultPath: string, runId: number): string[] {
  const dir = join(out, 'history')
  mkdirSync(dir, { recursive: true })
  const from = previous ? join(previous, 'history') : undefined
  const kept = from && existsSync(from) ? historyWindow(readdirSync(from)) : []
  for (const name of kept) copyFileSync(join(from!, name), join(dir, name))
  copyFileSync(resultPath, join(dir, historyName(runId)))
  core.info(`Trend window: ${kept.length + 1} scheduled result(s) kept in the artifact's history/`)
  return [...kept, historyName(runId)].map((name) => join(dir, name))
}

interface ResolvedBaseline {
  /** The baseline result file, when there is one. */
  path?: string
  /** The earlier run it was found in, for notes; unset when the `baseline` input named a file. */
  found?: string
  /** The folder the baseline artifact was downloaded to. */
  dir?: string
  /** One line for the log and the top of the report. */
  note: string
}

async function resolveBaseline(
  inputs: Inputs,
  ctx: RunContext,
  api: GitHubApi,
  cwd: string,
  out: string
): Promise<ResolvedBaseline> {
  const plan = planBaseline(inputs.baseline, ctx)
  if (plan.kind === 'none') return { note: `Not compared with a baseline: ${plan.reason}.` }
  if (plan.kind === 'path') {
    const path = resolve(cwd, plan.path)
    if (!existsSync(path)) throw new Error(`input \`baseline\`: no file at ${path} (use \`auto\`, \`none\` or the path of a result JSON)`)
    return { path, note: `Baseline: ${plan.path}.` }
  }

  let found
  try {
    found = await findBaselineArtifact(api, ctx, plan, inputs.artifactName, (l) => core.info(l))
  } catch (error) {
    if (httpStatus(error) === 403 || httpStatus(error) === 404) {
      throw new Error(
        `cannot look up ${plan.describe}: ${(error as Error).message}. The token needs \`actions: read\` permission (see the README's permissions).`,
        { cause: error }
      )
    }
    throw error
  }
  if (found === undefined) {
    return {
      note: `No baseline yet: ${plan.describe} with an artifact named \`${inputs.artifactName}\` was not found, so this run is not compared (not a failure).`
    }
  }
  const dir = join(out, 'baseline')
  mkdirSync(dir, { recursive: true })
  const path = await downloadResult(
    found.artifactId,
    { token: inputs.token, owner: ctx.owner, repo: ctx.repo, runId: found.run.id },
    dir,
    'result.json'
  )
  const r = found.run
  const run = `[run #${r.run_number}](${r.html_url}) (${r.event}, ${r.head_sha.slice(0, 7)})`
  return {
    path,
    found: run,
    dir,
    note: `Baseline: ${run}, ${plan.describe}.`
  }
}

async function upload(name: string, files: string[], root: string): Promise<void> {
  if (!process.env.ACTIONS_RUNTIME_TOKEN || !process.env.ACTIONS_RESULTS_URL) {
    core.warning('No artifact upload: ACTIONS_RUNTIME_TOKEN or ACTIONS_RESULTS_URL is not set (not running on GitHub Actions?)')
    return
  }
  const id = await core.group(`Upload the artifact ${name}`, () => uploadArtifact(name, files, root))
  core.info(`Uploaded artifact ${name} (id ${id}): ${files.map((f) => relative(root, f)).join(', ')}`)
}
