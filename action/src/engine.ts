/**
 * The loadgate engine: getting the binary (a given path, else the release binary matching the
 * action's version from the tool cache or the release, else a build from the action's own
 * source), and calling it.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import * as core from '@actions/core'
import * as exec from '@actions/exec'
import * as io from '@actions/io'
import * as tc from '@actions/tool-cache'
import type { EngineSource } from './inputs.js'
import type { GitHubApi } from './github.js'
import { httpStatus } from './github.js'
import { mask, type Children } from './child.js'

const EXE = process.platform === 'win32' ? 'loadgate.exe' : 'loadgate'

/** The Rust target triple of the release binary for this runner, or undefined when none is built. */
export function releaseTarget(platform: string, arch: string): string | undefined {
  const targets: Record<string, string> = {
    'linux-x64': 'x86_64-unknown-linux-gnu',
    'linux-arm64': 'aarch64-unknown-linux-gnu',
    'darwin-x64': 'x86_64-apple-darwin',
    'darwin-arm64': 'aarch64-apple-darwin',
    'win32-x64': 'x86_64-pc-windows-msvc'
  }
  return targets[`${platform}-${arch}`]
}

/** The release asset for a target; the release workflow names them the same way. */
export function assetName(target: string): string {
  return `loadgate-${target}${target.includes('windows') ? '.zip' : '.tar.gz'}`
}

/** The SHA-256 in a `sha256sum`-style checksum file (`HEX  NAME` or just `HEX`). */
export function parseChecksum(text: string): string {
  const hex = text.trim().split(/\s+/)[0]?.toLowerCase() ?? ''
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`not a SHA-256 checksum file: ${text.slice(0, 80)}`)
  return hex
}

/** The version of the engine crate in the action's own source (`engine/Cargo.toml`). */
export function sourceVersion(actionDir: string): string {
  const toml = readFileSync(join(actionDir, 'engine', 'Cargo.toml'), 'utf8')
  const m = toml.match(/^\s*version\s*=\s*"([^"]+)"/m)
  if (!m) throw new Error(`no version in ${join(actionDir, 'engine', 'Cargo.toml')}`)
  return m[1]
}

export interface EngineEnv {
  api: GitHubApi
  /** The root of the action's own checkout (holds action.yml, engine/, Cargo.toml). */
  actionDir: string
  /** `owner/name` of the action's repository; empty for `uses: ./`, which has no release to fetch. */
  actionRepository: string
  workingDirectory: string
  /** What `cargo build` gets (it runs the action's own source's build scripts). */
  children: Children
}

/** Where the engine came from, for the log. */
export interface Acquired {
  path: string
  how: string
}

export async function acquireEngine(source: EngineSource, env: EngineEnv): Promise<Acquired> {
  if (source.kind === 'path') {
    // Resolved and confined to the workspace (or the runner's temp and tool folders) by main.ts.
    const path = resolve(env.workingDirectory, source.path)
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new Error(`input \`engine-path\`: no file at ${path}`)
    }
    return { path, how: `the prebuilt binary at ${path} (input engine-path)` }
  }

  const explicit = source.version !== undefined
  const version = source.version ?? sourceVersion(env.actionDir)
  const target = releaseTarget(process.platform, process.arch)

  const cached = tc.find('loadgate', version)
  if (cached !== '') {
    return { path: join(cached, EXE), how: `release ${version} from the tool cache (${cached})` }
  }

  let why: string
  if (target === undefined) {
    why = `no release binary is built for ${process.platform}-${process.arch}`
  } else if (env.actionRepository === '') {
    why = 'the action is used from a local path (uses: ./), which has no release to download'
  } else {
    const got = await downloadRelease(env, version, target)
    if (typeof got !== 'string') return got
    why = got
  }
  if (explicit) {
    throw new Error(`input \`engine-version\` is ${version}, but ${why}; leave it empty to build the engine from the action's source`)
  }
  core.info(`No release binary: ${why}. Building the engine from the action's source.`)
  return buildFromSource(env.actionDir, env.children)
}

/** The downloaded, verified and cached binary, or why there is none (a string). */
async function downloadRelease(env: EngineEnv, version: string, target: string): Promise<Acquired | string> {
  const [owner, repo] = env.actionRepository.split('/')
  const tag = `v${version}`
  let release
  try {
    release = (await env.api.rest.repos.getReleaseByTag({ owner, repo, tag })).data
  } catch (error) {
    const status = httpStatus(error)
    if (status === 404) return `${env.actionRepository} has no release ${tag}`
    if (status === 403) return `the token may not read the releases of ${env.actionRepository} (${(error as Error).message})`
    throw error
  }
  const name = assetName(target)
  const asset = release.assets.find((a) => a.name === name)
  const sum = release.assets.find((a) => a.name === `${name}.sha256`)
  if (!asset || !sum) return `release ${tag} of ${env.actionRepository} has no ${name} with its ${name}.sha256`

  core.info(`Downloading ${asset.browser_download_url}`)
  const archive = await tc.downloadTool(asset.browser_download_url)
  const expected = parseChecksum(readFileSync(await tc.downloadTool(sum.browser_download_url), 'utf8'))
  const actual = createHash('sha256').update(readFileSync(archive)).digest('hex')
  if (actual !== expected) {
    // Never fall back to something else here: a mismatch means the download cannot be trusted.
    throw new Error(`checksum mismatch for ${name} of release ${tag}: expected ${expected}, got ${actual}`)
  }
  core.info(`Checksum verified: sha256 ${actual}`)
  const dir = name.endsWith('.zip') ? await tc.extractZip(archive) : await tc.extractTar(archive)
  const binDir = findBinaryDir(dir)
  if (binDir === undefined) throw new Error(`${name} of release ${tag} holds no ${EXE}`)
  const cachedDir = await tc.cacheDir(binDir, 'loadgate', version)
  return { path: join(cachedDir, EXE), how: `release ${tag} for ${target} (downloaded, sha256 verified, cached)` }
}

/** The folder in `dir` (or one level below) that holds the binary. */
function findBinaryDir(dir: string): string | undefined {
  const isFile = (p: string) => existsSync(p) && statSync(p).isFile()
  if (isFile(join(dir, EXE))) return dir
  return readdirSync(dir)
    .map((entry) => join(dir, entry))
    .find((sub) => isFile(join(sub, EXE)))
}

/**
 * `cargo build --profile fallback` in the action's directory (the release profile without
 * whole-program optimisation: a 3.5x faster rebuild; Cargo.toml says what it costs); cargo's
 * target folder is the cache.
 */
async function buildFromSource(actionDir: string, children: Children): Promise<Acquired> {
  const cargo = await io.which('cargo', false)
  if (cargo === '') {
    throw new Error(
      'cannot build the engine: cargo is not on PATH. Install Rust (e.g. dtolnay/rust-toolchain) before this step, or give a prebuilt binary with engine-path'
    )
  }
  const code = await core.group('Build the loadgate engine (cargo build --profile fallback)', () =>
    exec.exec(cargo, ['build', '--profile', 'fallback', '--locked', '-p', 'loadgate'], {
      cwd: actionDir,
      env: children.env,
      ignoreReturnCode: true
    })
  )
  if (code !== 0) throw new Error(`cargo build --profile fallback failed with exit code ${code} (its output is in the group above)`)
  return {
    path: join(actionDir, 'target', 'fallback', EXE),
    how: `built from the action's source in ${actionDir} (cargo build --profile fallback)`
  }
}

/** The engine's exit codes (README, "Exit codes"). */
export const EXIT = {
  pass: 0,
  sloFailed: 1,
  invalid: 2,
  notCarriedOut: 3,
  regression: 4,
  invalidMeasurement: 5
} as const

export interface Invocation {
  /**
   * The exit code; -1 when the engine was killed by a signal (a crash).
   */
  code: number
  /**
   * The engine's standard error, the secrets the action knows masked: its own `loadgate:`
   * lines and, in between, the service's output (for `engine.log` only: see `engineMessage`).
   */
  stderr: string
}

/**
 * Runs `loadgate ARGS` in `cwd` with the children's environment (child.ts), streaming its
 * output into the log (where the runner masks registered secrets).
 */
export async function invoke(engine: string, args: string[], cwd: string, children: Children, quiet = false): Promise<Invocation> {
  let stderr = ''
  // @actions/exec resolves with null when the process was killed by a signal.
  const code: number | null = await exec.exec(engine, args, {
    cwd,
    env: children.env,
    ignoreReturnCode: true,
    silent: quiet,
    listeners: {
      stderr: (data: Buffer) => {
        stderr += data.toString()
      }
    }
  })
  return { code: code ?? -1, stderr: mask(stderr, children.secrets) }
}

/**
 * The engine's own message in its standard error, at most its last `lines` lines: from its
 * last `loadgate: error:` line to the end (an error may span lines), else its `loadgate:`
 * lines. Never the service's output, which shares the engine's standard error and may print
 * anything (its environment, a secret): that is kept for the step log and `engine.log` only.
 */
export function engineMessage(stderr: string, lines = 20): string {
  const all = stderr.trimEnd().split('\n')
  const error = all.findLastIndex((l) => l.startsWith('loadgate: error:'))
  const own = error >= 0 ? all.slice(error) : all.filter((l) => l.startsWith('loadgate:'))
  return own.slice(-lines).join('\n')
}

/** What the engine said when it did not produce a verdict. */
export function engineFailure(what: string, r: Invocation): string {
  const meaning: Record<number, string> = {
    [EXIT.invalid]: 'the spec or the command line is invalid',
    [EXIT.notCarriedOut]: 'the run could not be carried out',
    [EXIT.regression]: 'a regression was found',
    [EXIT.invalidMeasurement]: 'the measurement is invalid'
  }
  const m =
    r.code === -1 ? 'the engine crashed: it was killed by a signal' : `${meaning[r.code] ?? 'the engine failed unexpectedly'} (exit code ${r.code})`
  const said = engineMessage(r.stderr)
  const where = "the engine's whole output is in the step log and in engine.log in the artifact"
  return `loadgate ${what}: ${m}${said ? `:\n${said}` : ` (${where})`}`
}
