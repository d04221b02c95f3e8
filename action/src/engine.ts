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

/** The oldest glibc the release's `*-linux-gnu` binaries run on: the newest glibc symbol version they link (`objdump -T`). */
export const GNU_MIN_GLIBC = '2.34'

/** The release targets a runner can run, best first, and why, for the log. */
export interface TargetChoice {
  /** Rust target triples, best first; empty when the release builds none this runner runs. */
  targets: string[]
  /** Why these targets (or why none), e.g. `linux-x64 with glibc 2.31, older than ...`. */
  why: string
}

/**
 * The release targets for a runner: its `process.platform`, `process.arch` and the glibc
 * version it runs against (`undefined` without glibc: musl, as on Alpine, or not Linux).
 *
 * Linux with glibc 2.34 or newer: the gnu build, else the static musl build; older glibc or
 * none: the musl build only. macOS x64 and arm64 their own builds. Windows x64 its build, and
 * Windows arm64 the x64 build too: Windows 11 on Arm runs x64 programs under emulation, and
 * the release builds no arm64 Windows binary. Anything else: none (the action builds from source).
 */
export function releaseTargets(platform: string, arch: string, glibc: string | undefined): TargetChoice {
  const runner = `${platform}-${arch}`
  const cpu: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64' }
  if (platform === 'linux' && cpu[arch] !== undefined) {
    const gnu = `${cpu[arch]}-unknown-linux-gnu`
    const musl = `${cpu[arch]}-unknown-linux-musl`
    if (glibc === undefined) {
      return { targets: [musl], why: `${runner} without glibc, as on Alpine (musl): the static musl build only` }
    }
    if (!atLeast(glibc, GNU_MIN_GLIBC)) {
      return { targets: [musl], why: `${runner} with glibc ${glibc}, older than the ${GNU_MIN_GLIBC} the gnu build needs: the static musl build only` }
    }
    return { targets: [gnu, musl], why: `${runner} with glibc ${glibc}: the gnu build, which needs glibc ${GNU_MIN_GLIBC} or newer, else the static musl build` }
  }
  if (platform === 'darwin' && cpu[arch] !== undefined) {
    return { targets: [`${cpu[arch]}-apple-darwin`], why: runner }
  }
  if (platform === 'win32' && arch === 'x64') return { targets: ['x86_64-pc-windows-msvc'], why: runner }
  if (platform === 'win32' && arch === 'arm64') {
    return { targets: ['x86_64-pc-windows-msvc'], why: `${runner}: the x64 build, which Windows on Arm runs under emulation, as no arm64 Windows build is released` }
  }
  return { targets: [], why: `no release binary is built for ${runner}` }
}

/** Whether dotted version `v` (`2.31`) is at least `min` (`2.34`), numerically part by part. */
function atLeast(v: string, min: string): boolean {
  const a = v.split('.').map(Number)
  const b = min.split('.').map(Number)
  for (let i = 0; i < b.length; i++) {
    const x = a[i] ?? 0
    if (Number.isNaN(x)) return false
    if (x !== b[i]) return x > b[i]
  }
  return true
}

/**
 * The glibc version this process runs against (`2.39`), from Node's diagnostic report; the
 * engine runs against the same one. `undefined` on a musl Node (Alpine) and off Linux.
 */
export function runtimeGlibc(): string | undefined {
  if (process.platform !== 'linux') return undefined
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } }
  return report.header?.glibcVersionRuntime
}

/** The first of `targets` whose archive and checksum are both among a release's `assets` (names). */
export function pickAsset(targets: string[], assets: readonly string[]): { target: string; asset: string } | undefined {
  const target = targets.find((t) => assets.includes(assetName(t)) && assets.includes(`${assetName(t)}.sha256`))
  return target === undefined ? undefined : { target, asset: assetName(target) }
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
  const choice = releaseTargets(process.platform, process.arch, runtimeGlibc())

  // The tool cache keys each binary by its target: a container job sharing the runner's tool
  // cache (musl, or an older glibc) never finds the host's gnu build.
  for (const target of choice.targets) {
    const cached = tc.find('loadgate', version, target)
    if (cached !== '') {
      return { path: join(cached, EXE), how: `release ${version} for ${target} from the tool cache (${cached}), chosen for ${choice.why}` }
    }
  }

  let why: string
  if (choice.targets.length === 0) {
    why = choice.why
  } else if (env.actionRepository === '') {
    why = 'the action is used from a local path (uses: ./), which has no release to download'
  } else {
    const got = await downloadRelease(env, version, choice)
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
async function downloadRelease(env: EngineEnv, version: string, choice: TargetChoice): Promise<Acquired | string> {
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
  const names = release.assets.map((a) => a.name)
  const pick = pickAsset(choice.targets, names)
  if (pick === undefined) {
    const wanted = choice.targets.map(assetName).join(' or ')
    const archives = names.filter((n) => !n.endsWith('.sha256'))
    const has = archives.length === 0 ? 'no assets' : archives.join(', ')
    return `release ${tag} of ${env.actionRepository} has no ${wanted} with its .sha256 (for ${choice.why}); it has ${has}`
  }
  const { target, asset: name } = pick
  const asset = release.assets.find((a) => a.name === name)!
  const sum = release.assets.find((a) => a.name === `${name}.sha256`)!
  const passed = choice.targets.slice(0, choice.targets.indexOf(target)).map(assetName)
  const chosen = `chosen for ${choice.why}${passed.length > 0 ? `; the release has no ${passed.join(' or ')} with its .sha256` : ''}`
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
  const cachedDir = await tc.cacheDir(binDir, 'loadgate', version, target)
  return { path: join(cachedDir, EXE), how: `release ${tag} asset ${name} (downloaded, sha256 verified, cached), ${chosen}` }
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
 * target folder is the cache. The binary is where cargo says it wrote it, so that
 * `CARGO_TARGET_DIR` (or `build.target-dir`) in the runner's environment moves it, not breaks it.
 */
async function buildFromSource(actionDir: string, children: Children): Promise<Acquired> {
  const cargo = await io.which('cargo', false)
  if (cargo === '') {
    throw new Error(
      'cannot build the engine: cargo is not on PATH. Install Rust (e.g. dtolnay/rust-toolchain) before this step, or give a prebuilt binary with engine-path'
    )
  }
  let path: string | undefined
  const code = await core.group('Build the loadgate engine (cargo build --profile fallback)', () =>
    exec.exec(cargo, ['build', '--profile', 'fallback', '--locked', '-p', 'loadgate', '--message-format=json-render-diagnostics'], {
      cwd: actionDir,
      env: children.env,
      ignoreReturnCode: true,
      // cargo's JSON messages (its standard output) stay out of the log; its progress and
      // diagnostics (standard error) go in.
      silent: true,
      listeners: {
        stdline: (line) => (path = builtExecutable(line) ?? path),
        errline: (line) => core.info(line)
      }
    })
  )
  if (code !== 0) throw new Error(`cargo build --profile fallback failed with exit code ${code} (its output is in the group above)`)
  if (path === undefined) throw new Error('cargo build --profile fallback succeeded but named no loadgate executable')
  return { path, how: `built from the action's source in ${actionDir} (cargo build --profile fallback)` }
}

/** The `loadgate` executable a line of `cargo build --message-format=json` names, if it does. */
export function builtExecutable(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined
  try {
    const m = JSON.parse(line) as { reason?: string; target?: { name?: string; kind?: string[] }; executable?: string | null }
    const bin = m.reason === 'compiler-artifact' && m.target?.name === 'loadgate' && m.target.kind?.includes('bin') === true
    return bin && typeof m.executable === 'string' ? m.executable : undefined
  } catch {
    return undefined
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
