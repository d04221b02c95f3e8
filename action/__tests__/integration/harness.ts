/**
 * Runs the bundled action (action/dist/index.js) the way the runner does: a fresh Node process
 * with the action's inputs as INPUT_* variables (hyphens kept, defaults from action.yml), the
 * GitHub variables, an event payload file, and files for the job summary and the outputs, all
 * set before the bundle is imported.
 */
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

export const ACTION_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)))
const BUNDLE = join(ACTION_ROOT, 'action', 'dist', 'index.js')

/**
 * The real engine: LOADGATE_BIN, else the `fallback` profile's build in this checkout (what the
 * action builds from source; scripts/test builds it). The tests never substitute anything for it.
 */
export function engineBinary(): string {
  const bin = process.env.LOADGATE_BIN ?? join(ACTION_ROOT, 'target', 'fallback', 'loadgate')
  if (!existsSync(bin)) {
    throw new Error(`no loadgate binary at ${bin}: build it first with \`cargo build -p loadgate --profile fallback\` (or set LOADGATE_BIN)`)
  }
  return bin
}

/**
 * The real engine inside the workspace `ws` (`.engine/loadgate`, linked or copied once), as
 * `engine-path` must name a binary in the workspace (or the runner's temp or tool folders).
 */
export function engineIn(ws: string): string {
  const path = join(ws, '.engine', 'loadgate')
  if (existsSync(path)) return path
  mkdirSync(dirname(path), { recursive: true })
  try {
    linkSync(engineBinary(), path)
  } catch {
    copyFileSync(engineBinary(), path)
  }
  return path
}

/** Whether the engine has the `report` command the action calls. */
export function engineHasReport(bin: string): Promise<boolean> {
  return new Promise((done) => {
    const child = spawn(bin, ['report', '--help'], { stdio: 'ignore' })
    child.on('exit', (code) => done(code === 0))
    child.on('error', () => done(false))
  })
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer()
    s.on('error', fail)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => done(port))
    })
  })
}

/** A JWT shaped like ACTIONS_RUNTIME_TOKEN (unsigned: @actions/artifact only decodes it). */
function runtimeToken(runId: number): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
  return `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ scp: `Actions.Results:run-${runId}:job-${runId}` })}.imitation`
}

/** Each input's default as the runner passes it: from action.yml, expressions evaluated. */
function defaultInputs(token: string): Record<string, string> {
  const action = parse(readFileSync(join(ACTION_ROOT, 'action.yml'), 'utf8'))
  const out: Record<string, string> = {}
  for (const [name, def] of Object.entries<{ default?: string }>(action.inputs)) {
    if (def.default === undefined) continue
    out[name] = String(def.default).replace('${{ github.token }}', token)
  }
  return out
}

export interface Event {
  name: 'push' | 'pull_request' | 'schedule' | 'workflow_dispatch'
  runId: number
  /** pull_request: the PR number */
  pr?: number
  baseRef?: string
  /** pull_request: the head's repository (another one for a fork) */
  headRepo?: string
  /** push/schedule: the branch */
  branch?: string
}

export interface RunOptions {
  api: string
  workspace: string
  event: Event
  inputs: Record<string, string>
  env?: Record<string, string>
  toolCache?: string
}

export interface ActionRun {
  code: number
  stdout: string
  stderr: string
  outputs: Record<string, string>
  summary: string
  /** `::error ...::message` lines */
  errors: string[]
  warnings: string[]
}

export const TOKEN = 'ghs_standintoken'

export async function runAction(o: RunOptions): Promise<ActionRun> {
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-action-run-'))
  const runnerTemp = join(dir, 'runner-temp')
  mkdirSync(runnerTemp)
  const toolCache = o.toolCache ?? join(dir, 'tool-cache')
  mkdirSync(toolCache, { recursive: true })
  const summaryFile = join(dir, 'step-summary.md')
  const outputFile = join(dir, 'output.txt')
  writeFileSync(summaryFile, '')
  writeFileSync(outputFile, '')

  const e = o.event
  const payload =
    e.name === 'pull_request'
      ? {
          number: e.pr,
          pull_request: {
            number: e.pr,
            base: { ref: e.baseRef ?? 'main', repo: { full_name: 'octo/shop' } },
            head: { ref: 'feature', repo: { full_name: e.headRepo ?? 'octo/shop' } }
          },
          repository: { full_name: 'octo/shop', default_branch: 'main' }
        }
      : { repository: { full_name: 'octo/shop', default_branch: 'main' } }
  const eventPath = join(dir, 'event.json')
  writeFileSync(eventPath, JSON.stringify(payload))
  const ref = e.name === 'pull_request' ? `refs/pull/${e.pr}/merge` : `refs/heads/${e.branch ?? 'main'}`

  const inputs = { ...defaultInputs(TOKEN), ...o.inputs }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_REPOSITORY: 'octo/shop',
    GITHUB_REPOSITORY_OWNER: 'octo',
    GITHUB_EVENT_NAME: e.name,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REF: ref,
    GITHUB_REF_NAME: e.name === 'pull_request' ? `${e.pr}/merge` : (e.branch ?? 'main'),
    GITHUB_SHA: 'f'.repeat(40),
    GITHUB_RUN_ID: String(e.runId),
    GITHUB_RUN_NUMBER: String(e.runId),
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_WORKFLOW: 'perf',
    GITHUB_WORKFLOW_REF: `octo/shop/.github/workflows/perf.yml@${ref}`,
    GITHUB_JOB: 'gate',
    GITHUB_ACTOR: 'alice',
    GITHUB_ACTION: '__run',
    GITHUB_ACTION_REPOSITORY: '',
    GITHUB_API_URL: o.api,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_GRAPHQL_URL: `${o.api}/graphql`,
    GITHUB_WORKSPACE: o.workspace,
    GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_OUTPUT: outputFile,
    RUNNER_TEMP: runnerTemp,
    RUNNER_TOOL_CACHE: toolCache,
    RUNNER_OS: 'Linux',
    RUNNER_ARCH: 'X64',
    ACTIONS_RUNTIME_TOKEN: runtimeToken(e.runId),
    ACTIONS_RESULTS_URL: `${o.api}/`,
    ...o.env
  }
  if (e.name === 'pull_request') env.GITHUB_BASE_REF = e.baseRef ?? 'main'
  for (const [name, value] of Object.entries(inputs)) env[`INPUT_${name.toUpperCase()}`] = value

  const child = spawn(process.execPath, [BUNDLE], { cwd: o.workspace, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const code = await new Promise<number>((done) => child.on('close', (c) => done(c ?? -1)))

  return {
    code,
    stdout,
    stderr,
    outputs: parseOutputs(readFileSync(outputFile, 'utf8')),
    summary: readFileSync(summaryFile, 'utf8'),
    errors: stdout.split('\n').filter((l) => l.startsWith('::error')),
    warnings: stdout.split('\n').filter((l) => l.startsWith('::warning'))
  }
}

/** GITHUB_OUTPUT's `name<<DELIMITER\nvalue\nDELIMITER` records. */
function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const m = lines[i].match(/^([^<]+)<<(.+)$/)
    if (!m) continue
    const value: string[] = []
    while (++i < lines.length && lines[i] !== m[2]) value.push(lines[i])
    out[m[1]] = value.join('\n')
  }
  return out
}

/** A spec that starts the built-in target itself on `${LG_PORT}` and loads it briefly (4 s by default:
 * too short for a two-run regression verdict, which needs 20 complete seconds in each run; the tests
 * that need a verdict give a longer `duration`). */
export function spec(o: { name?: string; delay: string; slo: string; duration?: string }): string {
  return `version: 1
name: ${o.name ?? 'integration'}
service:
  command: ["\${LOADGATE}", "serve", "--listen", "127.0.0.1:\${LG_PORT}", "--threads", "1"]
  ready_url: http://127.0.0.1:\${LG_PORT}/health
  ready_timeout: 10s
defaults:
  base_url: http://127.0.0.1:\${LG_PORT}
  timeout: 2s
targets:
  - name: home
    path: /?size=256&delay=${o.delay}
load:
  connections: 4
  duration: ${o.duration ?? '4s'}
slo:
  latency: ["${o.slo}"]
  errors: ["rate < 1%"]
# Loose rules: the test machine is small and shared, so two runs of the same build may differ a
# lot (throughput most of all: no rule on it); the 1ms -> 40ms regression the tests provoke is
# far beyond these.
regression:
  latency: ["p(95) +100% floor 10ms"]
  errors: ["rate +10% floor 1%"]
  requests: []
`
}

/** The file names in a zip, read from its central directory. */
export function zipEntries(zip: Buffer): string[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  if (eocd < 0) throw new Error('not a zip: no end of central directory record')
  const count = zip.readUInt16LE(eocd + 10)
  let at = zip.readUInt32LE(eocd + 16)
  const names: string[] = []
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`bad central directory entry at ${at}`)
    const nameLen = zip.readUInt16LE(at + 28)
    const extraLen = zip.readUInt16LE(at + 30)
    const commentLen = zip.readUInt16LE(at + 32)
    names.push(zip.toString('utf8', at + 46, at + 46 + nameLen))
    at += 46 + nameLen + extraLen + commentLen
  }
  return names
}
