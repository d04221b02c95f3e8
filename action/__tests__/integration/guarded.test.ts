/**
 * The bundled action, run as the runner runs it against the stand-in for GitHub and the real
 * engine, where a pull request's code or GitHub itself misbehaves: what the service sees of
 * the workflow's secrets, path inputs that lead out of the workspace, and the API failing for
 * a while (a 502, a 403, a secondary rate limit) or for good.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { StandIn } from './standin.js'
import { engineIn, freePort, runAction, spec, TOKEN, type ActionRun, type Event } from './harness.js'

const MARK = '<!-- loadgate-comment: perf.yml/gate/loadgate -->'

let api: StandIn
let ws: string
let port: number
let envOut: string

/**
 * A service that writes its whole environment to `$ENV_OUT` (a test's folder, passed by the
 * workflow's environment), then serves; or prints it to its standard error and exits, as a
 * service that fails to start may.
 */
const SERVER = '#!/bin/sh\nenv > "$ENV_OUT"\nexec "$1" serve --listen "$2" --threads 1\n'
const FAILING = '#!/bin/sh\necho "the service starts with:"\nenv >&2\nexit 1\n'

function serviceSpec(script: string, name: string): string {
  return spec({ name, delay: '1ms', slo: 'p(95) < 1s', duration: '2s' }).replace(
    /command: \[.*\]/,
    `command: ["${script}", "\${LOADGATE}", "127.0.0.1:\${LG_PORT}"]`
  )
}

beforeAll(async () => {
  api = new StandIn()
  await api.start()
  ws = mkdtempSync(join(tmpdir(), 'loadgate-guarded-ws-'))
  mkdirSync(join(ws, 'perf'))
  writeFileSync(join(ws, 'perf', 'server.sh'), SERVER, { mode: 0o755 })
  writeFileSync(join(ws, 'perf', 'failing.sh'), FAILING, { mode: 0o755 })
  writeFileSync(join(ws, 'perf', 'env.yaml'), serviceSpec(join(ws, 'perf', 'server.sh'), 'env'))
  writeFileSync(join(ws, 'perf', 'nostart.yaml'), serviceSpec(join(ws, 'perf', 'failing.sh'), 'nostart'))
  writeFileSync(join(ws, 'perf', 'fast.yaml'), spec({ delay: '1ms', slo: 'p(95) < 1s', duration: '2s' }))
  writeFileSync(join(ws, 'perf', 'strict.yaml'), spec({ delay: '5ms', slo: 'p(95) < 1ms', duration: '2s' }))
  port = await freePort()
  envOut = join(mkdtempSync(join(tmpdir(), 'loadgate-env-out-')), 'service.env')
})

afterAll(async () => {
  await api?.stop()
})

function run(event: Event, inputs: Record<string, string>, env: Record<string, string> = {}): Promise<ActionRun> {
  return runAction({
    api: api.url,
    workspace: ws,
    event,
    inputs: { 'engine-path': engineIn(ws), ...inputs },
    env: { LG_PORT: String(port), ENV_OUT: envOut, ...env }
  })
}

const pr = (runId: number, number: number): Event => ({ name: 'pull_request', runId, pr: number, baseRef: 'main' })

/** What a workflow may put in the step's environment besides the runner's own: the token under its usual names. */
const WORKFLOW_ENV = { GITHUB_TOKEN: TOKEN, GH_TOKEN: TOKEN, DATABASE_URL: 'postgres://db.test/app' }

/** The variables a file of `env` output sets, by name. */
function envFile(path: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1)
  }
  return out
}

describe("the pull request's code sees no secret of the workflow", () => {
  it('the service gets neither the inputs, the token, ACTIONS_* nor the file commands; the rest passes', async () => {
    const r = await run(pr(100, 1), { spec: 'perf/env.yaml' }, WORKFLOW_ENV)
    expect(r.code, r.stdout).toBe(0)
    const seen = envFile(envOut)
    const names = Object.keys(seen)
    expect(names.filter((n) => /^(INPUT_|ACTIONS_)/.test(n))).toEqual([])
    for (const n of ['GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY']) {
      expect(names, n).not.toContain(n)
    }
    expect(readFileSync(envOut, 'utf8')).not.toContain(TOKEN)
    expect(seen).toMatchObject({ DATABASE_URL: 'postgres://db.test/app', GITHUB_REPOSITORY: 'octo/shop', LG_PORT: String(port) })
    expect(seen.PATH).toBeTruthy()
  })

  it('pass-env lets a name through; a service that prints it and fails to start leaves it masked in engine.log and out of every message', async () => {
    const passed = await run(pr(101, 2), { spec: 'perf/env.yaml', 'pass-env': 'GITHUB_TOKEN' }, WORKFLOW_ENV)
    expect(passed.code, passed.stdout).toBe(0)
    expect(envFile(envOut)).toMatchObject({ GITHUB_TOKEN: TOKEN })
    expect(Object.keys(envFile(envOut))).not.toContain('GH_TOKEN')

    const r = await run(pr(102, 3), { spec: 'perf/nostart.yaml', 'pass-env': 'GITHUB_TOKEN' }, WORKFLOW_ENV)
    expect(r.code).toBe(1) // nothing measured
    expect(r.outputs).toMatchObject({ verdict: 'fail' })
    const log = readFileSync(join(dirname(r.outputs['report-markdown']), 'engine.log'), 'utf8')
    expect(log).toContain('the service starts with:') // the service's output is kept, for the artifact
    expect(log).toContain('GITHUB_TOKEN=***')
    expect(log).not.toContain(TOKEN)
    const comment = (api.comments.get(3) ?? []).find((c) => c.body.startsWith(MARK))!
    for (const said of [r.errors.join('\n'), r.warnings.join('\n'), r.summary, comment.body]) {
      expect(said).not.toContain(TOKEN)
      expect(said).not.toContain('the service starts with')
    }
    expect(r.errors.join('\n')).toContain('loadgate: error: ')
  })
})

describe('path inputs stay in the workspace, and nothing the action did not make is deleted', () => {
  /** A RUNNER_TEMP holding another action's files and an earlier loadgate step's folder. */
  function runnerTemp(): string {
    const temp = mkdtempSync(join(tmpdir(), 'loadgate-runner-temp-'))
    mkdirSync(join(temp, 'file_commands'))
    writeFileSync(join(temp, 'file_commands', 'set_output'), '')
    writeFileSync(join(temp, 'other-action.txt'), 'keep')
    mkdirSync(join(temp, 'loadgate', 'loadgate'), { recursive: true })
    writeFileSync(join(temp, 'loadgate', 'keep.txt'), 'keep')
    writeFileSync(join(temp, 'loadgate', 'loadgate', 'earlier.txt'), 'keep')
    return temp
  }
  const kept = (temp: string) =>
    ['file_commands/set_output', 'other-action.txt', 'loadgate/keep.txt', 'loadgate/loadgate/earlier.txt'].filter((f) => existsSync(join(temp, f)))

  it('artifact-name `..`, `.` and `a/b` are refused before anything runs or is deleted', async () => {
    for (const name of ['..', '.', 'a/b']) {
      const temp = runnerTemp()
      const r = await run({ name: 'push', runId: 200, branch: 'main' }, { spec: 'perf/fast.yaml', 'artifact-name': name }, { RUNNER_TEMP: temp })
      expect(r.code, name).toBe(1)
      expect(r.errors, name).toEqual([expect.stringMatching(/^::error::input `artifact-name` /)])
      expect(kept(temp), name).toHaveLength(4)
      expect(r.stdout, name).not.toContain('::group::loadgate run')
      expect(r.outputs, name).toEqual({})
    }
  })

  it('a spec, working directory, baseline or engine outside the workspace is refused, naming the input, before the engine runs', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ spec: '../../../../../../etc/passwd' }, 'spec'],
      [{ spec: '/etc/passwd' }, 'spec'],
      [{ spec: 'fast.yaml', 'working-directory': '..' }, 'working-directory'],
      [{ spec: 'perf/fast.yaml', baseline: '/etc/passwd' }, 'baseline'],
      [{ spec: 'perf/fast.yaml', 'engine-path': '/bin/sh' }, 'engine-path']
    ]
    for (const [inputs, name] of cases) {
      const r = await run({ name: 'push', runId: 201, branch: 'main' }, inputs)
      expect(r.code, name).toBe(1)
      expect(r.errors, name).toEqual([expect.stringMatching(new RegExp(`^::error::input \`${name}\` is \`[^\`]+\`, which leads to .*, outside the workspace`))])
      expect(r.stdout, name).not.toContain('::group::loadgate run')
      expect(r.stdout, name).not.toContain('root:') // nothing of /etc/passwd quoted
    }
  })

  it("a run makes a folder of its own and leaves the others in RUNNER_TEMP as they were", async () => {
    const temp = runnerTemp()
    const r = await run({ name: 'push', runId: 202, branch: 'main' }, { spec: 'perf/fast.yaml' }, { RUNNER_TEMP: temp })
    expect(r.code, r.stdout).toBe(0)
    expect(kept(temp)).toHaveLength(4)
    expect(dirname(r.outputs.result)).toMatch(new RegExp(`^${temp}/loadgate/loadgate-[A-Za-z0-9]{6}$`))
  })
})

describe("GitHub's passing failures are retried; lasting ones are warnings, and the verdict alone decides the step", () => {
  /** The calls since `from` to the pull request's comments. */
  const commentCalls = (from: number, number: number) => api.calls(from).filter((c) => c.includes(`/issues/${number}/comments`))

  it('a 502 on listing the comments, then a 200: the comment is made, outputs and summary set', async () => {
    api.fail({ method: 'GET', path: /\/issues\/10\/comments$/, status: 502, message: 'Server Error', times: 1 })
    const from = api.requests.length
    const r = await run(pr(300, 10), { spec: 'perf/fast.yaml' })
    expect(r.code, r.stdout).toBe(0)
    expect(commentCalls(from, 10)).toEqual([
      'GET /repos/octo/shop/issues/10/comments',
      'GET /repos/octo/shop/issues/10/comments',
      'POST /repos/octo/shop/issues/10/comments'
    ])
    expect(r.outputs).toMatchObject({ verdict: 'pass', 'comment-url': expect.stringContaining('#issuecomment-') })
    expect(r.summary).toContain('[Workflow run](https://github.com/octo/shop/actions/runs/300)')
    expect(r.warnings).toEqual([])
  })

  it('a 429 of the secondary rate limit with retry-after: waited for, then the comment is made', async () => {
    api.fail({
      method: 'POST',
      path: /\/issues\/11\/comments$/,
      status: 429,
      message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
      headers: { 'retry-after': '1' },
      times: 1
    })
    const from = api.requests.length
    const r = await run(pr(301, 11), { spec: 'perf/fast.yaml' })
    expect(r.code, r.stdout).toBe(0)
    expect(commentCalls(from, 11).filter((c) => c.startsWith('POST'))).toHaveLength(2)
    expect(r.stdout).toContain("GitHub's secondary rate limit on POST /repos/{owner}/{repo}/issues/{issue_number}/comments: retrying after 1 s")
    expect(r.outputs).toMatchObject({ verdict: 'pass', 'comment-url': expect.stringContaining('#issuecomment-') })
  })

  it('a 403 on the comments is a warning naming the permission; the step passes or fails as the verdict says', async () => {
    api.fail({ method: 'GET', path: /\/issues\/12\/comments$/, status: 403, message: 'Resource not accessible by integration', times: 2 })
    const passing = await run(pr(302, 12), { spec: 'perf/fast.yaml' })
    expect(passing.code, passing.stdout).toBe(0)
    expect(passing.warnings).toEqual([expect.stringMatching(/^::warning::Could not comment on pull request #12 \(HTTP 403\): the token needs `pull-requests: write`/)])
    expect(passing.outputs).toMatchObject({ verdict: 'pass', 'comment-url': '' })
    expect(passing.summary).toContain('[Workflow run]')

    const failing = await run(pr(303, 12), { spec: 'perf/strict.yaml' })
    expect(failing.code).toBe(1)
    expect(failing.warnings).toHaveLength(1)
    expect(failing.outputs).toMatchObject({ verdict: 'fail', slo: 'fail' })
    expect(failing.errors.at(-1)).toBe('::error::loadgate: 1 SLO threshold failed (fail-on: slo, regression, invalid-measurement)')
  })

  it('a comment and an artifact that still fail after the retries (502, 403) are warnings; outputs and summary are set', async () => {
    api.fail({ method: 'POST', path: /\/issues\/13\/comments$/, status: 502, message: 'Server Error', times: 10 })
    api.fail({ method: 'POST', path: /CreateArtifact$/, status: 403, message: 'artifact storage quota has been hit', times: 2 })
    const from = api.requests.length
    const r = await run(pr(304, 13), { spec: 'perf/fast.yaml' })
    expect(r.code, r.stdout).toBe(0)
    // @octokit/plugin-retry: the request and 3 retries.
    expect(commentCalls(from, 13).filter((c) => c.startsWith('POST'))).toHaveLength(4)
    expect(r.warnings).toEqual([
      expect.stringMatching(/^::warning::Could not upload the HTML report.*403/),
      expect.stringMatching(/^::warning::Could not upload the artifact loadgate.*403/),
      expect.stringMatching(/^::warning::Could not comment on the pull request \(HTTP 502\): Server Error.*the token needs `pull-requests: write`/)
    ])
    expect(r.outputs).toMatchObject({ verdict: 'pass', slo: 'pass', 'comment-url': '' })
    expect(Number(r.outputs.rps)).toBeGreaterThan(0)
    expect(r.summary).toContain(readFileSync(r.outputs['report-markdown'], 'utf8'))
  })
})
