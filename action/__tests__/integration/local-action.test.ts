/**
 * The action under GitHub's own harness for JavaScript actions, `@github/local-action` (7.x):
 * `src/main.ts` as the entry (the harness stubs `@actions/core`, `@actions/github` and
 * `@actions/artifact` of the TypeScript source, not the bundle), its inputs from a dotenv file,
 * `GITHUB_API_URL` pointing at the stand-in for GitHub, and the real engine. It checks end to end
 * what the home-made runner (harness.ts) checks: the sticky comment made then updated, the
 * outputs, the job summary, the artifacts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { StandIn } from './standin.js'
import { ACTION_ROOT, engineIn, freePort, spec } from './harness.js'

const ACTION_DIR = join(ACTION_ROOT, 'action')
const LOCAL_ACTION = join(ACTION_DIR, 'node_modules', '@github', 'local-action', 'bin', 'local-action.js')
const MARK = '<!-- loadgate-comment: perf.yml/gate/loadgate -->'

let api: StandIn
let ws: string
let port: number
/**
 * The action folder local-action is given: a copy of action.yml in a folder inside action/, so
 * that local-action, walking up from it, finds action/package.json and its node_modules (it
 * wants both beside the action's metadata, which this repository keeps at its root).
 */
let shim: string

beforeAll(async () => {
  api = new StandIn()
  await api.start()
  ws = mkdtempSync(join(tmpdir(), 'loadgate-local-action-ws-'))
  mkdirSync(join(ws, 'perf'))
  writeFileSync(join(ws, 'perf', 'fast.yaml'), spec({ delay: '1ms', slo: 'p(95) < 1s', duration: '2s' }))
  port = await freePort()
  shim = mkdtempSync(join(ACTION_DIR, '.local-action-'))
  copyFileSync(join(ACTION_ROOT, 'action.yml'), join(shim, 'action.yml'))
})

afterAll(async () => {
  await api?.stop()
  if (shim) rmSync(shim, { recursive: true, force: true })
})

interface LocalRun {
  code: number
  stdout: string
  summary: string
  artifacts: string[]
}

/** `local-action run` of src/main.ts for pull request `pr` in run `runId`. */
async function localAction(runId: number, pr: number): Promise<LocalRun> {
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-local-action-'))
  const event = join(dir, 'event.json')
  writeFileSync(
    event,
    JSON.stringify({
      number: pr,
      pull_request: { number: pr, base: { ref: 'main' }, head: { ref: 'feature', repo: { full_name: 'octo/shop' } } },
      repository: { full_name: 'octo/shop', default_branch: 'main' }
    })
  )
  const summary = join(dir, 'summary.md')
  writeFileSync(summary, '')
  const artifacts = join(dir, 'artifacts')
  mkdirSync(artifacts)
  mkdirSync(join(dir, 'temp'))
  const vars: Record<string, string> = {
    'INPUT_SPEC': 'perf/fast.yaml',
    'INPUT_ENGINE-PATH': engineIn(ws),
    'INPUT_GITHUB-TOKEN': 'ghs_localactiontoken',
    GITHUB_REPOSITORY: 'octo/shop',
    GITHUB_REPOSITORY_OWNER: 'octo',
    GITHUB_EVENT_NAME: 'pull_request',
    GITHUB_EVENT_PATH: event,
    GITHUB_REF: `refs/pull/${pr}/merge`,
    GITHUB_REF_NAME: `${pr}/merge`,
    GITHUB_BASE_REF: 'main',
    GITHUB_SHA: 'e'.repeat(40),
    GITHUB_RUN_ID: String(runId),
    GITHUB_RUN_NUMBER: String(runId),
    GITHUB_WORKFLOW: 'perf',
    GITHUB_WORKFLOW_REF: `octo/shop/.github/workflows/perf.yml@refs/pull/${pr}/merge`,
    GITHUB_JOB: 'gate',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: api.url,
    GITHUB_WORKSPACE: ws,
    GITHUB_STEP_SUMMARY: summary,
    RUNNER_TEMP: join(dir, 'temp'),
    // The harness keeps artifacts here (its @actions/artifact stub); the action uploads when
    // the runner's artifact service is named.
    LOCAL_ACTION_ARTIFACT_PATH: artifacts,
    LOCAL_ACTION_WORKSPACE: ws,
    ACTIONS_RUNTIME_TOKEN: 'local-action-runtime-token',
    ACTIONS_RESULTS_URL: `${api.url}/`,
    LG_PORT: String(port)
  }
  const envFile = join(dir, '.env')
  writeFileSync(envFile, Object.entries(vars).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join('\n') + '\n')
  // local-action reads GITHUB_API_URL when its @actions/github stub is loaded, before the
  // dotenv file: it is in the process's environment too. npm (beside node) runs its tsx.
  const env = { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? dir, GITHUB_API_URL: api.url }
  const child = spawn(process.execPath, [LOCAL_ACTION, 'run', shim, '../src/main.ts', envFile], {
    cwd: ACTION_DIR,
    env,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stdout += d))
  const code = await new Promise<number>((done) => child.on('close', (c) => done(c ?? -1)))
  return { code, stdout, summary: readFileSync(summary, 'utf8'), artifacts: readdirSync(artifacts) }
}

/** The outputs as local-action logs them (`::set-output name=NAME::VALUE`), the last of each name. */
function outputs(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/::set-output name=([a-z0-9-]+)::(.*)/g)].map((m) => [m[1], m[2]]))
}

describe('the action under @github/local-action, src/main.ts as the entry', () => {
  it('runs a pull request end to end against the stand-in: comment created then updated, outputs, summary, artifacts', async () => {
    const first = await localAction(900, 90)
    expect(first.code, first.stdout).toBe(0)
    expect(outputs(first.stdout)).toMatchObject({ verdict: 'pass', slo: 'pass', regression: 'no-baseline' })
    expect(Number(outputs(first.stdout).rps)).toBeGreaterThan(0)
    const ours = (api.comments.get(90) ?? []).filter((c) => c.body.startsWith(MARK))
    expect(ours).toHaveLength(1)
    expect(outputs(first.stdout)['comment-url']).toBe(`https://github.com/octo/shop/pull/90#issuecomment-${ours[0].id}`)
    expect(first.summary).toContain('[Workflow run](https://github.com/octo/shop/actions/runs/900)')
    expect(first.summary).toContain('## ') // the engine's report below
    expect(first.artifacts, first.stdout).toEqual(expect.arrayContaining(['loadgate.zip', 'loadgate.html.zip']))

    const second = await localAction(901, 90)
    expect(second.code, second.stdout).toBe(0)
    expect(second.stdout).toContain('Pull request comment: updated')
    expect((api.comments.get(90) ?? []).filter((c) => c.body.startsWith(MARK))).toHaveLength(1)
  })
})
