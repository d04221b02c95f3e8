/**
 * The action: inputs -> engine -> run -> baseline -> report -> publish, one function each, then
 * the gate. In `mode: paired` the run and the baseline are one step: the pull request's base,
 * checked out and built beside it, loaded at the same time (`loadgate ab`). In `mode: merge`
 * the run is the merge of this workflow run's shards (merge.ts); a shard step (input `shard`)
 * runs its share and uploads it, and stops there (shards.ts). With `history-branch` the baseline's
 * history comes from that branch, and runs on the default branch add their result to it
 * (databranch.ts). Every step is awaited inside the
 * one try/catch that ends in `core.setFailed`. The engine decides and formats; the action reads
 * its verdict document and places what it says.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as core from '@actions/core'
import * as github from '@actions/github'
import { failOnText, readInputs, type FailOn, type Inputs } from './inputs.js'
import { readContext, type RunContext } from './context.js'
import { acquireEngine, engineFailure, engineMessage, EXIT, invoke, type Invocation } from './engine.js'
import {
  carriesHistory,
  findBaselineArtifact,
  planBaseline,
  planHistory,
  type SearchPlan,
  type WorkflowRun
} from './baseline.js'
import { downloadResult } from './artifacts.js'
import { upload, uploadPage } from './upload.js'
import { runShard, startAtArgs } from './shards.js'
import { mergeShards } from './merge.js'
import { carryHistory } from './history.js'
import { healthProblems, invalidResult, specName } from './result.js'
import { abArgs, build, findBase, freePorts, sideDir, withWorktree, type PairedBase } from './paired.js'
import { commentBody, marker, upsertComment, withNote } from './comment.js'
import {
  annotateFailedSlos,
  annotateRegressions,
  headlineLine,
  invalidMeasurementNote,
  notCarriedOut,
  setOutputs,
  writeSummary,
  type ReportPaths,
  type Unmeasured
} from './summary.js'
import { failures, readVerdict, type LoadgateVerdict } from './verdict.js'
import { client, httpStatus, type GitHubApi } from './github.js'
import { children, type Children } from './child.js'
import { confined, inside, real, type Root } from './workspace.js'
import { linksLine, trendLine, type Links } from './links.js'
import { fetchData, fromBranch, historyOf, newestResult, openDataBranch, recordResult, type Checkout, type DataBranch } from './databranch.js'

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

/**
 * The steps, in order; each throws what stops the action. A run the engine could not carry out
 * (exit code 3), or shards that could not be merged, are still published (summary, comment,
 * artifact), then fail the step whatever `fail-on` says. A shard stops after its upload.
 */
async function main(): Promise<void> {
  const setup = prepare()
  // Paired: the base commit first, so that missing history fails before the engine is got.
  const base = setup.inputs.mode === 'paired' ? await core.group('Find the base commit', () => pairedBase(setup)) : undefined
  const engine = await getEngine(setup)
  const { inputs } = setup
  if (inputs.shard) {
    const { spec, cwd, out } = setup
    const { artifactName, shard, startAt, args } = inputs
    return runShard({ engine, spec, specLabel: relative(setup.workspace, spec), cwd, out, artifactName, shard, startAt, args, children: setup.children })
  }
  const ran = base
    ? await runPaired(setup, engine, base)
    : inputs.mode === 'merge'
      ? await runMerge(setup, engine)
      : await runStored(setup, engine)
  if ('stopped' in ran) {
    await publish(setup, unmeasuredReport(setup, ran.stopped), engine)
    core.setFailed(ran.stopped.message)
    return
  }
  core.info(ran.baseline.note)
  const report = await writeReports(setup, engine, ran)
  await record(setup, engine, ran, report)
  await publish(setup, report, engine)
  gate(inputs.failOn, report.verdict)
}

/**
 * Step 5b, the data branch (`history-branch`, databranch.ts): a push to the default branch or a
 * scheduled or dispatched run adds its result to it; the report's note says so, and the
 * `history-dir` output names the branch's folder.
 */
async function record(s: Setup, engine: string, ran: Ran, report: Report): Promise<void> {
  const recorded = await recordResult(s.dataBranch, ran.data, {
    ctx: s.ctx,
    resultPath: ran.resultPath,
    invalid: ran.invalid,
    engine: async (args) => {
      const r = await invoke(engine, args, s.cwd, s.children)
      if (r.code !== EXIT.pass) throw new Error(engineFailure(args.slice(0, 2).join(' '), r))
    }
  })
  report.note += recorded.note
  report.historyDir = recorded.dir
}

/** What every step needs: the inputs, the workflow run, and where things are. */
interface Setup {
  inputs: Inputs
  ctx: RunContext
  api: GitHubApi
  workspace: string
  /** The working directory the engine runs in. */
  cwd: string
  /** The spec file, absolute. */
  spec: string
  /** This run's folder, made by the action: what is uploaded as the artifact. */
  out: string
  /** The `baseline` input's file, absolute (inside the workspace); unset for `auto` and `none`. */
  baselineFile?: string
  /** What the engine, the service and `build` get (child.ts). */
  children: Children
  /** The data branch (`history-branch`, databranch.ts); unset without one, and in paired mode. */
  dataBranch: DataBranch | undefined
}

/**
 * Step 1, inputs: reads and checks the inputs and the run's context, resolves the path inputs
 * inside the workspace (refusing any other), and makes this run's own folder `out` (a new one:
 * the action deletes no folder it did not make).
 */
function prepare(): Setup {
  const inputs = readInputs((name) => core.getInput(name))
  const ctx = readContext(github.context, process.env)
  const kids = children(process.env, inputs.token, inputs.passEnv)
  for (const secret of kids.secrets) core.setSecret(secret)
  const api = client(inputs.token, (line) => core.info(line))
  const workspace = real(process.env.GITHUB_WORKSPACE || process.cwd())
  const temp = process.env.RUNNER_TEMP || tmpdir()
  const roots: Root[] = [{ dir: workspace, label: 'the workspace' }]
  const cwd = confined('working-directory', inputs.workingDirectory, workspace, roots)
  const spec = confined('spec', inputs.spec, cwd, roots)
  if (!existsSync(spec)) {
    throw new Error(`spec not found: ${spec} (input \`spec\` is ${inputs.spec}, relative to the working directory ${cwd})`)
  }
  const baselineFile = inputs.baseline.kind === 'path' ? confined('baseline', inputs.baseline.path, cwd, roots) : undefined
  if (inputs.engine.kind === 'path') {
    const binRoots = [...roots, { dir: temp, label: 'RUNNER_TEMP' }]
    if (process.env.RUNNER_TOOL_CACHE) binRoots.push({ dir: process.env.RUNNER_TOOL_CACHE, label: 'the tool cache' })
    inputs.engine = { kind: 'path', path: confined('engine-path', inputs.engine.path, cwd, binRoots) }
  }
  mkdirSync(join(temp, 'loadgate'), { recursive: true })
  const out = mkdtempSync(join(temp, 'loadgate', `${inputs.artifactName}-`))
  return { inputs, ctx, api, workspace, cwd, spec, out, baselineFile, children: kids, dataBranch: openDataBranch(inputs, ctx, kids) }
}

/** Step 2, engine: the binary to run. */
async function getEngine(s: Setup): Promise<string> {
  // An action inside the workspace is this repository's own checkout (`uses: ./`): it gets the
  // engine built from that source, never a release of another commit.
  const root = actionDir()
  const local = inside(s.workspace, real(root))
  const engine = await acquireEngine(s.inputs.engine, {
    api: s.api,
    actionDir: root,
    actionRepository: local ? '' : s.ctx.actionRepository,
    workingDirectory: s.cwd,
    children: s.children
  })
  core.info(`Engine: ${engine.how}`)
  return engine.path
}

/**
 * What steps 3 and 4 leave: the file to report (a result, or an ab document), its baseline, and
 * on a branch the history window this run carries (`out/history/`, this result included).
 */
interface Ran {
  resultPath: string
  baseline: ResolvedBaseline
  history: string[]
  /** The measurement is invalid (the engine's exit code 5; a merged result's `health.valid`): the result is not in `history`. */
  invalid: boolean
  /** The data branch fetched (`history-branch`); unset without one, or when it could not be fetched. */
  data?: Checkout
}

/**
 * What steps 3 and 4 leave when nothing was measured (the engine could not carry out the run,
 * exit code 3) or merged: published, then the step fails.
 */
interface Stopped {
  stopped: Unmeasured
}

/**
 * Steps 3 and 4, stored mode: `loadgate run`, then the baseline an earlier run stored and, on a
 * branch, the history window carried on from the previous run. An SLO failure is not an error here.
 */
async function runStored(s: Setup, engine: string): Promise<Ran | Stopped> {
  const resultPath = join(s.out, 'result.json')
  const ran = await core.group(`loadgate run ${s.inputs.spec}`, () =>
    invoke(engine, ['run', s.spec, '--out', resultPath, ...startAtArgs(s.inputs.startAt), ...s.inputs.args], s.cwd, s.children)
  )
  if (ran.code === EXIT.notCarriedOut) return { stopped: notCarriedOut(relative(s.cwd, s.spec), 'run', ran) }
  const judged: number[] = [EXIT.pass, EXIT.sloFailed, EXIT.invalidMeasurement]
  if (!judged.includes(ran.code)) throw new Error(engineFailure('run', ran))
  return baselineAndHistory(s, resultPath, ran.code === EXIT.invalidMeasurement)
}

/**
 * Step 3, merge mode: the shards of this workflow run, downloaded and merged into one result
 * (merge.ts), which is then compared as in stored mode.
 */
async function runMerge(s: Setup, engine: string): Promise<Ran | Stopped> {
  const { inputs, ctx } = s
  const merged = await core.group(`Merge the shards of this run (artifacts ${inputs.artifactName}-shard-K-of-N)`, () =>
    mergeShards({
      api: s.api,
      origin: { token: inputs.token, owner: ctx.owner, repo: ctx.repo, runId: ctx.runId },
      engine,
      cwd: s.cwd,
      out: s.out,
      artifactName: inputs.artifactName,
      allowMissing: inputs.allowMissing,
      children: s.children
    })
  )
  if ('unmerged' in merged) return { stopped: merged.unmerged }
  return baselineAndHistory(s, merged.resultPath, invalidResult(merged.resultPath))
}

/**
 * Step 4, stored and merge modes: the baseline an earlier run stored and, on a branch, the
 * history window carried on from the previous run (the result, `invalid` or not, is this run's).
 */
async function baselineAndHistory(s: Setup, resultPath: string, invalid: boolean): Promise<Ran> {
  const data = await fetchData(s.dataBranch, join(process.env.RUNNER_TEMP || tmpdir(), 'loadgate'))
  const baseline = await core.group('Find the baseline', () => resolveBaseline(s, data, resultPath))
  if (!carriesHistory(s.ctx)) return { resultPath, baseline, history: [], invalid, data }
  const previous = await core.group('Find the history window to carry on', () => previousRun(s, baseline))
  // An invalid measurement is no sample of the branch's history: not added.
  return { resultPath, baseline, history: carryHistory(s.out, previous, resultPath, s.ctx.runId, !invalid), invalid, data }
}

/** Paired mode's first step: the pull request's base commit. */
async function pairedBase(s: Setup): Promise<PairedBase> {
  if (!s.ctx.pullRequest) {
    throw new Error(
      `mode: paired compares a pull request with its base branch, and a \`${s.ctx.eventName}\` event has none: ` +
        "run this step on `pull_request` only, or give other events `mode: stored` (e.g. `mode: ${{ github.event_name == 'pull_request' && 'paired' || 'stored' }}`)"
    )
  }
  return findBase(s.cwd, s.ctx.pullRequest.baseRef, (l) => core.info(l))
}

/**
 * Steps 3 and 4, paired mode: the base checked out into a second worktree (removed at the
 * end), `build` run in both checkouts, and `loadgate ab` with each side's `ROOT` and `PORT`;
 * its document holds both sides and the paired verdict. Exit codes as `compare`'s: an SLO
 * failure, a regression or an invalid measurement is for the verdict to say, not an error here.
 */
async function runPaired(s: Setup, engine: string, base: PairedBase): Promise<Ran | Stopped> {
  const abPath = join(s.out, 'ab.json')
  const ran = await withWorktree(base, process.env.RUNNER_TEMP || tmpdir(), async (worktree) => {
    if (s.inputs.build !== '') {
      await build(s.inputs.build, s.cwd, 'candidate', base.head, s.children.env)
      await build(s.inputs.build, sideDir(base.repo, s.cwd, worktree), 'baseline', base.commit, s.children.env)
    }
    const [baselinePort, candidatePort] = await freePorts(2)
    const args = abArgs({
      spec: s.spec,
      roots: { baseline: worktree, candidate: base.repo },
      ports: { baseline: baselinePort, candidate: candidatePort },
      out: abPath,
      args: s.inputs.args
    })
    return core.group(`loadgate ab ${s.inputs.spec}`, () => invoke(engine, args, s.cwd, s.children))
  })
  if (ran.code === EXIT.notCarriedOut) return { stopped: notCarriedOut(relative(s.cwd, s.spec), 'ab', ran) }
  const judged: number[] = [EXIT.pass, EXIT.sloFailed, EXIT.regression, EXIT.invalidMeasurement]
  if (!judged.includes(ran.code)) throw new Error(engineFailure('ab', ran))
  const note =
    `Paired run: this commit (${base.head.slice(0, 7)}) against ${base.commit.slice(0, 7)}, its merge base with ${base.branch}, ` +
    'both built and loaded at the same time on this runner.'
  return { resultPath: abPath, baseline: { note }, history: [], invalid: ran.code === EXIT.invalidMeasurement }
}

/** What the report step leaves: the engine's verdict, and the files to upload. */
interface Report {
  /** The engine's verdict; undefined when the run could not be carried out (nothing measured). */
  verdict: LoadgateVerdict | undefined
  /** The lines above the report: which baseline, or why none; what an invalid measurement means. */
  note: string
  /** The Markdown report: the engine's, or the action's when nothing was measured. */
  mdPath: string
  /** The outputs' paths; empty when there is no such file. */
  paths: ReportPaths
  /** Every file of the artifact. */
  files: string[]
  /** The short trend line above the report (links.ts); '' for none. */
  trend: string
  /** The data branch's checkout, for the `history-dir` output; unset when there is none with results. */
  historyDir?: string
}

/**
 * Step 5, report: the engine's Markdown, HTML and JSON verdict of the result (compared with the
 * baseline when there is one the engine accepts, judged against the level of the history
 * (the data branch, else the baseline artifact's window); with the trend of the history window on a branch), and the
 * verdict read back.
 */
async function writeReports(s: Setup, engine: string, ran: Ran): Promise<Report & { verdict: LoadgateVerdict }> {
  const { resultPath, baseline, history } = ran
  const paths: ReportPaths = {
    result: resultPath,
    markdown: join(s.out, 'report.md'),
    html: join(s.out, 'report.html'),
    junit: join(s.out, 'report.junit.xml')
  }
  const verdictPath = join(s.out, 'verdict.json')
  // The window's trend when this result is in it (an invalid one is not: reported alone).
  const results = history.length > 1 && !ran.invalid ? [join(s.out, 'history')] : [resultPath]
  const reports: Array<[string, string]> = [
    ['md', paths.markdown],
    ['html', paths.html],
    ['junit', paths.junit],
    ['json', verdictPath]
  ]
  // The spec as the repository names it: the JUnit report gives it as each case's `file`.
  const specPath = relative(s.workspace, s.spec)
  let note = baseline.note
  const ask = (b: Pick<ResolvedBaseline, 'path' | 'history'>) => report(engine, results, b, reports, { label: specPath, file: s.spec }, s)
  let refused = await core.group('loadgate report', () => ask(baseline))
  if (refused && baseline.history) {
    // A history the engine refuses (a result it cannot read) leaves the baseline itself usable.
    core.warning(`The baseline's history cannot be used: ${engineMessage(refused.stderr, 3)}`)
    note += ` Its history is not used (the engine says: ${engineMessage(refused.stderr, 1).replace(/^loadgate: error: /, '')}).`
    refused = await core.group('loadgate report (without the history)', () => ask({ path: baseline.path }))
  }
  if (refused && baseline.found) {
    // A baseline found in an earlier run that the engine refuses to compare with (another spec
    // name, another result version) is no baseline: the first run of a renamed spec passes.
    core.warning(`The baseline cannot be compared with this run: ${engineMessage(refused.stderr, 3)}`)
    const said = engineMessage(refused.stderr, 1).replace(/^loadgate: error: /, '')
    note = `Not compared: the baseline, ${baseline.found}, cannot be compared with this run (the engine says: ${said}).`
    refused = await core.group('loadgate report (without the baseline)', () => ask({}))
  }
  if (refused) throw new Error(engineFailure('report', refused))
  const verdict = readVerdict(readFileSync(verdictPath, 'utf8'), verdictPath)
  if (verdict.verdict === 'invalid_measurement') {
    note += `\n${invalidMeasurementNote(healthProblems(resultPath), s.inputs.failOn, carriesHistory(s.ctx) && s.inputs.mode !== 'paired')}`
  }
  const files = [resultPath, paths.markdown, paths.html, paths.junit, verdictPath, ...history]
  const trend = await branchTrend(s, engine, ran, verdict)
  return { verdict, note, mdPath: paths.markdown, paths, files, trend }
}

/**
 * The short trend above the report: on a pull request, of the base branch's last results (the
 * history window its baseline's artifact carries, reported by the engine on its own); on a
 * branch, of the window this run carries (the verdict's own trend). Empty without one.
 */
async function branchTrend(s: Setup, engine: string, ran: Ran, verdict: LoadgateVerdict): Promise<string> {
  const pr = s.ctx.pullRequest
  if (!pr) return verdict.trend ? trendLine(verdict.trend, s.ctx.refName) : ''
  const history = ran.baseline.window
  if (!history || readdirSync(history).filter((n) => n.endsWith('.json')).length < 2) return ''
  const file = join(s.out, 'base-trend.json')
  const r = await invoke(engine, ['report', history, '--format', 'json', '--output', file], s.cwd, s.children, true)
  if (r.code !== EXIT.pass) {
    core.info(`No trend of ${pr.baseRef}: ${engineMessage(r.stderr, 1)}`)
    return ''
  }
  const doc = readVerdict(readFileSync(file, 'utf8'), file)
  return doc.trend ? trendLine(doc.trend, pr.baseRef) : ''
}

/**
 * What the report step leaves when nothing was measured or merged: the action's own Markdown
 * saying so and what to do (the engine's error lines quoted, not the service's output), and the
 * engine's whole standard error as `engine.log` when it ran.
 */
function unmeasuredReport(s: Setup, u: Unmeasured): Report {
  const mdPath = join(s.out, 'report.md')
  const logPath = join(s.out, 'engine.log')
  writeFileSync(mdPath, u.markdown)
  if (u.log !== undefined) writeFileSync(logPath, u.log)
  return {
    verdict: undefined,
    note: u.note,
    mdPath,
    paths: { result: '', markdown: mdPath, html: '', junit: '' },
    files: u.log === undefined ? [mdPath] : [mdPath, logPath],
    trend: ''
  }
}

/**
 * Step 6, publish: first what cannot fail for GitHub's sake (the outputs, the job summary,
 * the annotations, all from the engine's report and verdict), then the artifacts and the
 * pull-request comment, each of which, when GitHub still refuses it after the client's retries,
 * is a warning naming the status and the permission: the step's result is the verdict's alone.
 */
async function publish(s: Setup, r: Report, engine: string): Promise<void> {
  const { inputs, ctx } = s
  const v = r.verdict
  if (v) core.info(headlineLine(v))
  setOutputs({ verdict: v, paths: r.paths, commentUrl: undefined, engine, historyDir: r.historyDir })
  const engineMd = readFileSync(r.mdPath, 'utf8')
  const page = (links: Links) => withNote(r.note, `${linksLine(links)}${r.trend ? `\n\n${r.trend}` : ''}\n\n${engineMd}`)
  const links: Links = { runUrl: ctx.runUrl, artifactName: inputs.artifactName, html: r.paths.html !== '' }
  await writeSummary(page(links))
  // An invalid measurement's SLO results mean nothing: no annotation claims one failed.
  if (v && v.verdict !== 'invalid_measurement') {
    annotateFailedSlos(v, relative(s.workspace, s.spec))
    annotateRegressions(v, relative(s.workspace, s.spec))
  }

  if (r.paths.html !== '') links.htmlId = await tryPublish('upload the HTML report', () => uploadHtml(s, r.paths.html))
  const mark = marker(`${ctx.workflowFile ?? ctx.workflowName}/${ctx.job}/${inputs.artifactName}`)
  const files = [...r.files]
  if (ctx.pullRequest) {
    // For a trusted workflow_run workflow that comments on pull requests from forks (docs/action.md).
    writeFileSync(join(s.out, 'comment.md'), commentBody(mark, page(links)))
    writeFileSync(join(s.out, 'pull-request.json'), `${JSON.stringify({ number: ctx.pullRequest.number })}\n`)
    files.push(join(s.out, 'comment.md'), join(s.out, 'pull-request.json'))
  }
  links.artifactId = await tryPublish(`upload the artifact ${inputs.artifactName}`, () => upload(inputs.artifactName, files, s.out))

  const commentUrl = await tryPublish('comment on the pull request', () => comment(s, mark, commentBody(mark, page(links)), v?.verdict !== 'pass'))
  if (commentUrl) core.setOutput('comment-url', commentUrl)
}

/**
 * The HTML report as an artifact of its own, not zipped (`<artifact-name>.html`), so that its
 * link opens it in the browser; its id.
 */
async function uploadHtml(s: Setup, html: string): Promise<number | undefined> {
  const dir = join(s.out, 'page')
  mkdirSync(dir)
  const file = join(dir, `${s.inputs.artifactName}.html`)
  copyFileSync(html, file)
  return uploadPage(file)
}

/**
 * `what`'s result; undefined, with a warning that names the HTTP status and what the token
 * needs, when GitHub refused it after the retries.
 */
async function tryPublish<T>(what: string, act: () => Promise<T>): Promise<T | undefined> {
  try {
    return await act()
  } catch (error) {
    const status = httpStatus(error) ?? (error as { statusCode?: number }).statusCode
    const message = error instanceof Error ? error.message : String(error)
    const need = what.startsWith('comment')
      ? 'the token needs `pull-requests: write` (a pull request from a fork gets a read-only token)'
      : "the upload uses the runner's own token, not `github-token`: check the repository's artifact storage quota and GitHub's status"
    const said = message.replace(/[.!\s]+$/, '')
    core.warning(`Could not ${what}${status ? ` (HTTP ${status})` : ''}: ${said}; ${need}. The verdict, the outputs and the job summary are unaffected.`)
    return undefined
  }
}

/** Creates or updates the sticky comment on a pull request, as the `comment` input says; returns its URL. */
async function comment(s: Setup, mark: string, body: string, failed: boolean): Promise<string | undefined> {
  const { inputs, ctx } = s
  if (!ctx.pullRequest || inputs.comment === 'never') return undefined
  const r = await upsertComment(s.api, {
    owner: ctx.owner,
    repo: ctx.repo,
    issueNumber: ctx.pullRequest.number,
    mark,
    body,
    create: inputs.comment === 'always' || failed
  })
  if (r.outcome === 'forbidden') {
    core.warning(
      `Could not comment on pull request #${ctx.pullRequest.number} (HTTP 403): the token needs \`pull-requests: write\`` +
        `${ctx.pullRequest.fromFork ? ' (a pull request from a fork gets a read-only token)' : ''}. ` +
        'The report is in the job summary; docs/action.md (pull requests from forks) shows the workflow_run pattern that comments from a trusted workflow.'
    )
  } else {
    core.info(`Pull request comment: ${r.outcome}${r.url ? ` (${r.url})` : ''}`)
  }
  return r.url
}

/** Last: fails the step for the engine's decisions that `fail-on` names. */
function gate(failOn: FailOn, v: LoadgateVerdict): void {
  const why = failures(failOn, v)
  if (why.length > 0) {
    core.setFailed(`loadgate: ${why.join('; ')} (fail-on: ${failOnText(failOn)})`)
  } else {
    core.info(`loadgate: ${v.summary}; the step passes (fail-on: ${failOnText(failOn)})`)
  }
}

/**
 * Writes each report, compared with `baseline.path` (judged against the level of
 * `baseline.history`) when given, naming the spec as the repository does (`spec.label`,
 * relative to the workspace) for the JUnit `file`, and giving the JSON verdict the spec file
 * itself (`spec.file`), whose lines the engine gives each SLO and rule; returns the failed
 * invocation when the engine refused the comparison (exit code 2 with a baseline), and throws
 * for any other failure.
 */
async function report(
  engine: string,
  results: string[],
  baseline: Pick<ResolvedBaseline, 'path' | 'history'>,
  reports: Array<[string, string]>,
  spec: { label: string; file: string },
  s: Setup
): Promise<Invocation | undefined> {
  const against = baselineArgs(baseline)
  for (const [format, file] of reports) {
    const named = format === 'junit' ? ['--spec', spec.label] : format === 'json' ? ['--spec', spec.file] : []
    const r = await invoke(engine, ['report', ...results, ...against, '--format', format, '--output', file, ...named], s.cwd, s.children)
    if (r.code === EXIT.invalid && baseline.path) return r
    if (r.code !== EXIT.pass) throw new Error(engineFailure(`report --format ${format}`, r))
  }
  return undefined
}

/**
 * The comparison's arguments of `loadgate report`: `--baseline FILE`, and `--baseline-history
 * DIR` beside it when the baseline's artifact carried a history window (the engine skips the
 * baseline's own copy in it).
 */
function baselineArgs(b: Pick<ResolvedBaseline, 'path' | 'history'>): string[] {
  if (!b.path) return []
  return ['--baseline', b.path, ...(b.history ? ['--baseline-history', b.history] : [])]
}

interface ResolvedBaseline {
  /** The baseline result file, when there is one. */
  path?: string
  /** The earlier run it was found in, for notes; unset when the `baseline` input named a file. */
  found?: string
  /** The run whose artifact it came from. */
  run?: WorkflowRun
  /** The folder the baseline artifact was downloaded to. */
  dir?: string
  /**
   * The baseline's history (`--baseline-history`): the data branch when there is one, else the
   * baseline artifact's `window`.
   */
  history?: string
  /** The baseline artifact's `history/`, when it holds results: the base branch's trend. */
  window?: string
  /** One line for the log and the top of the report. */
  note: string
}

/**
 * Step 4, baseline: the result to compare with, if any, downloaded from an earlier run (when no
 * such run has its artifact any more, the newest valid result of the same spec and branch on the
 * data branch `data`), and its history (`historyOf`). `current`: this run's result.
 */
async function resolveBaseline(s: Setup, data: Checkout | undefined, current: string): Promise<ResolvedBaseline> {
  const { inputs, cwd } = s
  const plan = planBaseline(inputs.baseline, s.ctx)
  if (plan.kind === 'none') return { note: `Not compared with a baseline: ${plan.reason}.` }
  if (plan.kind === 'path') {
    const path = s.baselineFile ?? resolve(cwd, plan.path)
    if (!existsSync(path)) throw new Error(`input \`baseline\`: no file at ${path} (use \`auto\`, \`none\` or the path of a result JSON)`)
    return { path, history: historyOf(s.dataBranch, data, undefined), note: `Baseline: ${plan.path}.${fromBranch(s.dataBranch, data)}` }
  }
  const got = await validBaseline(s, plan)
  const missing = `${plan.describe} with an artifact named \`${inputs.artifactName}\` was not found`
  if (got === undefined) {
    const stored = data?.exists ? newestResult(data.dir, specName(current), plan.branch) : undefined
    if (stored && s.dataBranch) {
      const found = `the newest result of ${plan.branch} on the branch \`${s.dataBranch.branch}\` (${stored.commit?.slice(0, 7) ?? stored.startedAt})`
      return { path: stored.path, found, history: historyOf(s.dataBranch, data, undefined), note: `Baseline: ${found}, as ${missing}.${fromBranch(s.dataBranch, data)}` }
    }
    return { note: `No baseline yet: ${missing}, so this run is not compared (not a failure).` }
  }
  const r = got.run
  const run = `[run #${r.run_number}](${r.html_url}) (${r.event}, ${r.head_sha.slice(0, 7)})`
  const history = join(got.dir, 'history')
  const window = existsSync(history) && readdirSync(history).some((name) => name.endsWith('.json')) ? history : undefined
  return {
    path: got.path,
    found: run,
    run: r,
    dir: got.dir,
    history: historyOf(s.dataBranch, data, window),
    window,
    note: `Baseline: ${run}, ${plan.describe}.${fromBranch(s.dataBranch, data)}`
  }
}

/**
 * The newest run that `plan` allows whose result is a valid measurement, downloaded: a run on
 * the branch whose measurement was invalid may still have succeeded (its `fail-on` did not name
 * `invalid-measurement`), and comparing with it could conclude nothing. At most
 * `MAX_INVALID_SKIPPED` such runs are passed over.
 */
async function validBaseline(s: Setup, plan: SearchPlan): Promise<Downloaded | undefined> {
  const skip = new Set<number>()
  for (;;) {
    const got = await downloadFrom(s, plan, 'baseline', undefined, skip)
    if (got === undefined || !invalidResult(got.path) || skip.size >= MAX_INVALID_SKIPPED) return got
    core.info(`Run #${got.run.run_number} (${got.run.html_url}) holds an invalid measurement: not a baseline; looking further back.`)
    skip.add(got.run.id)
    rmSync(got.dir, { recursive: true, force: true })
  }
}

/** How many runs with an invalid measurement the baseline search passes over. */
const MAX_INVALID_SKIPPED = 3

/**
 * Step 4 on a branch: the folder of the previous run's artifact, whose `history/` this run
 * carries on; the baseline's when that is the same run. Undefined when there is none (the
 * window starts with this result).
 */
async function previousRun(s: Setup, baseline: ResolvedBaseline): Promise<string | undefined> {
  const plan = planHistory(s.inputs.baseline, s.ctx)
  if (plan.kind === 'none') {
    core.info(`No history window carried on: ${plan.reason}.`)
    return undefined
  }
  const got = await downloadFrom(s, plan, 'previous', baseline)
  if (got === undefined) core.info(`No history window carried on: ${plan.describe} with an artifact named \`${s.inputs.artifactName}\` was not found.`)
  else core.info(`History window carried on from run #${got.run.run_number} (${got.run.html_url}), ${plan.describe}.`)
  return got?.dir
}

/** An earlier run's artifact, downloaded: the folder, and its result file. */
interface Downloaded {
  run: WorkflowRun
  dir: string
  path: string
}

/**
 * The newest run that `plan` allows (but those in `skip`) with an artifact named
 * `artifact-name`, downloaded into `out/<folder>` (or the folder `already` was downloaded to,
 * when it is the same run).
 */
async function downloadFrom(
  s: Setup,
  plan: SearchPlan,
  folder: string,
  already?: ResolvedBaseline,
  skip?: ReadonlySet<number>
): Promise<Downloaded | undefined> {
  const { inputs, ctx, api } = s
  let found
  try {
    found = await findBaselineArtifact(api, ctx, plan, inputs.artifactName, (l) => core.info(l), skip)
  } catch (error) {
    if (httpStatus(error) === 403 || httpStatus(error) === 404) {
      throw new Error(
        `cannot look up ${plan.describe}: ${(error as Error).message}. The token needs \`actions: read\` permission (docs/action.md, "Permissions").`,
        { cause: error }
      )
    }
    throw error
  }
  if (found === undefined) return undefined
  if (already?.dir && already.path && already.run?.id === found.run.id) return { run: found.run, dir: already.dir, path: already.path }
  const dir = join(s.out, folder)
  mkdirSync(dir, { recursive: true })
  const origin = { token: inputs.token, owner: ctx.owner, repo: ctx.repo, runId: found.run.id }
  const path = await downloadResult(found.artifactId, origin, dir, 'result.json')
  return { run: found.run, dir, path }
}
