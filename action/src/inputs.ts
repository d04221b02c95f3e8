/**
 * The action's inputs, read by one function and validated once (every default applied, every
 * string parsed), so that the rest of the action never sees a raw input string.
 *
 * Each input is documented in action.yml and in docs/action.md ("Inputs"); keep the three in step.
 */
import { parse } from 'shell-quote'

/** Where the baseline result comes from. */
export type BaselineSource =
  /** Pull requests: the newest successful run of this workflow on the base branch; schedules: the
   *  previous scheduled run; other events: none. */
  | { kind: 'auto' }
  /** A result JSON file (relative to the working directory). */
  | { kind: 'path'; path: string }
  | { kind: 'none' }

/**
 * What the run is compared with: `stored`, a result an earlier run stored (`baseline`);
 * `paired`, the pull request's base, checked out beside the workspace, built, and loaded at the
 * same time as the workspace (`loadgate ab`); `merge`, no run: the shards' results of this
 * workflow run (`shard` steps in earlier jobs) merged into one, then compared as `stored`.
 */
export type Mode = 'stored' | 'paired' | 'merge'

/** Shard `index` of `count` (`K/N`, 1-based), as `loadgate run --shard K/N` takes it. */
export interface Shard {
  /** K: which shard, from 1 to `count`. */
  index: number
  /** N: how many shards the run is spread over, 1 to `MAX_SHARDS`. */
  count: number
}

/** The most shards a run may be spread over (the engine's `plan::MAX_SHARDS`). */
export const MAX_SHARDS = 1024

export type CommentWhen = 'always' | 'on-failure' | 'never'
/**
 * The engine's decisions that can fail the step: an SLO threshold failed (`slo`), a regression
 * rule regressed (`regression`), the measurement is invalid (`invalid-measurement`: the engine's
 * `invalid_measurement` verdict, exit code 5).
 */
export const DECISIONS = ['slo', 'regression', 'invalid-measurement'] as const
export type Decision = (typeof DECISIONS)[number]

/** The decisions that fail the step, in `DECISIONS` order; empty for `none`. */
export type FailOn = Decision[]

/** How to get the engine binary. */
export type EngineSource =
  /** A prebuilt binary at this path (relative to the working directory). */
  | { kind: 'path'; path: string }
  /** The release binary of this version; `undefined`: the version of the action itself. */
  | { kind: 'release'; version: string | undefined }

export interface Inputs {
  /** The spec file, relative to `workingDirectory`. */
  spec: string
  /** Absolute or relative to the workspace; where the engine runs. */
  workingDirectory: string
  mode: Mode
  /** Paired mode: the shell command (bash) run in both checkouts before the run; '' for none. */
  build: string
  /** Stored mode: where the baseline result comes from (always `auto` in paired mode, unused). */
  baseline: BaselineSource
  artifactName: string
  token: string
  comment: CommentWhen
  failOn: FailOn
  engine: EngineSource
  /** Extra arguments for `loadgate run` (`loadgate ab` in paired mode), already split into words. */
  args: string[]
  /** Stored mode: run this shard of the load only (`--shard K/N`), upload it, compare nothing. */
  shard: Shard | undefined
  /** Stored mode: when the load starts (`--start-at`: RFC 3339 or `+30s`); '' for at once. */
  startAt: string
  /** Merge mode: merge even when shards are missing (`loadgate merge --allow-missing`). */
  allowMissing: boolean
  /**
   * Variables the engine, the service and `build` get although the action withholds them
   * from its child processes (child.ts): `GITHUB_TOKEN`, an `ACTIONS_*`, an input.
   */
  passEnv: string[]
  /**
   * The data branch (databranch.ts): pushes to the default branch and scheduled and dispatched
   * runs add their result to it; every run in `mode: stored` or `merge` reads it as the
   * baseline's history. '' for none (the artifact's history window only).
   */
  historyBranch: string
}

/** Reads one input by its name in action.yml; `core.getInput` in the action. */
export type GetInput = (name: string) => string

/** An input that is present but wrong: the message says what is allowed. */
export class InputError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'InputError'
  }
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[], fallback: T): T {
  const v = value.trim()
  if (v === '') return fallback
  if ((allowed as readonly string[]).includes(v)) return v as T
  throw new InputError(
    `input \`${name}\` is \`${v}\`; use one of ${allowed.map((a) => `\`${a}\``).join(', ')}`
  )
}

/** Reads and validates every input. Throws an `InputError` naming the input and what it accepts. */
export function readInputs(get: GetInput): Inputs {
  const spec = get('spec').trim()
  if (spec === '') {
    throw new InputError('input `spec` is required: the path of the loadgate spec (YAML) to run')
  }

  const token = get('github-token').trim()
  if (token === '') {
    throw new InputError('input `github-token` is empty: leave it unset for the workflow token, or give a token')
  }

  const baselineRaw = get('baseline').trim()
  let baseline: BaselineSource
  if (baselineRaw === '' || baselineRaw === 'auto') baseline = { kind: 'auto' }
  else if (baselineRaw === 'none') baseline = { kind: 'none' }
  else baseline = { kind: 'path', path: baselineRaw }

  const mode = oneOf('mode', get('mode'), ['stored', 'paired', 'merge'] as const, 'stored')
  const build = get('build').trim()
  if (mode !== 'paired' && build !== '') {
    throw new InputError(
      `input \`build\` is only run in \`mode: paired\` (in both checkouts); in \`mode: ${mode}\`, build in a step before this one`
    )
  }
  if (mode === 'paired' && baseline.kind !== 'auto') {
    throw new InputError(
      `input \`baseline\` is \`${baselineRaw}\`, but \`mode: paired\` compares with the pull request's base, built and run beside it: leave \`baseline\` unset, or use \`mode: stored\``
    )
  }

  const shard = shardInput(get('shard'), mode, baselineRaw)
  const startAt = get('start-at').trim()
  if (startAt !== '' && mode !== 'stored') {
    throw new InputError(`input \`start-at\` is for a run in \`mode: stored\` (a shard's start); \`mode: ${mode}\` does not take it`)
  }
  if (/\s/.test(startAt)) {
    throw new InputError(`input \`start-at\` is \`${startAt}\`; give one time: RFC 3339 (e.g. \`2026-11-24T10:00:00Z\`) or \`+30s\` from now`)
  }
  const allowMissing = oneOf('allow-missing', get('allow-missing'), ['false', 'true'] as const, 'false') === 'true'
  if (allowMissing && mode !== 'merge') {
    throw new InputError('input `allow-missing` is for `mode: merge` (merge the shards present when some are missing); leave it unset here')
  }

  const artifactName = get('artifact-name').trim() || 'loadgate'
  // The artifact service refuses these characters; say so before running the load. The name
  // is also a folder's (under RUNNER_TEMP): no separator, and not `.` or `..`.
  const bad = artifactName.match(/["':<>|*?\\/\r\n]/)
  if (bad) {
    throw new InputError(
      `input \`artifact-name\` (\`${artifactName}\`) contains \`${bad[0]}\`, which artifact names cannot contain`
    )
  }
  if (/^\.+$/.test(artifactName)) {
    throw new InputError(`input \`artifact-name\` is \`${artifactName}\`: a name made of dots only names no artifact; use letters, e.g. \`loadgate\``)
  }

  const enginePath = get('engine-path').trim()
  const engineVersion = get('engine-version').trim()
  let engine: EngineSource
  if (enginePath !== '' && engineVersion !== '') {
    throw new InputError(
      'inputs `engine-path` and `engine-version` exclude each other: give a prebuilt binary or a release version, not both'
    )
  } else if (enginePath !== '') {
    engine = { kind: 'path', path: enginePath }
  } else if (engineVersion !== '') {
    const version = engineVersion.replace(/^v/, '')
    if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
      throw new InputError(
        `input \`engine-version\` is \`${engineVersion}\`; use a release version such as \`0.1.0\` (or leave it empty for the action's own version)`
      )
    }
    engine = { kind: 'release', version }
  } else {
    engine = { kind: 'release', version: undefined }
  }

  const historyBranch = historyBranchInput(get('history-branch'), shard)

  return {
    spec,
    workingDirectory: get('working-directory').trim() || '.',
    mode,
    build,
    baseline,
    artifactName,
    token,
    comment: oneOf('comment', get('comment'), ['always', 'on-failure', 'never'] as const, 'always'),
    failOn: failOn(get('fail-on')),
    engine,
    args: engineArgs(get('args'), mode),
    shard,
    startAt,
    allowMissing,
    passEnv: passEnvNames(get('pass-env')),
    historyBranch
  }
}

/**
 * `history-branch`: a branch name as git allows it (`git check-ref-format --branch`), or '' for
 * none. Not for a shard, whose result is not judged alone: the merge step adds the merged one.
 */
function historyBranchInput(raw: string, shard: Shard | undefined): string {
  const v = raw.trim()
  if (v === '') return ''
  const bad =
    [...v].some((c) => c <= ' ' || c === '\u007f') ||
    /[~^:?*[\\]/.test(v) ||
    v.includes('..') ||
    v.includes('@{') ||
    v.includes('//') ||
    v === '@' ||
    /^[-/.]/.test(v) ||
    /(^|\/)\./.test(v) ||
    /([/.]|\.lock)$/.test(v)
  if (bad) {
    throw new InputError(
      `input \`history-branch\` is \`${v}\`, which is not a branch name git allows: use letters, digits, \`-\`, \`_\` and \`/\`, e.g. \`loadgate-history\``
    )
  }
  if (shard) {
    throw new InputError('input `history-branch` is for the step that judges the whole run: give it to the merge step (`mode: merge`), not to a shard')
  }
  return v
}

/**
 * `pass-env`: variable names separated by commas or white space (new lines); each made of
 * letters, digits, `_` and `-`, not starting with a digit.
 */
function passEnvNames(raw: string): string[] {
  const names = raw.split(/[\s,]+/).filter((n) => n !== '')
  for (const n of names) {
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(n)) {
      throw new InputError(
        `input \`pass-env\` holds \`${n}\`, which is not a variable name: give names separated by commas or new lines, e.g. \`DATABASE_URL, GITHUB_TOKEN\``
      )
    }
  }
  return names
}

/**
 * `shard`: `K/N` with 1 ≤ K ≤ N ≤ `MAX_SHARDS`, or '' for none. A shard is neither paired nor
 * merged, and is not compared (the merge step compares the merged result): only `mode: stored`
 * with `baseline: auto` takes it.
 */
function shardInput(raw: string, mode: Mode, baseline: string): Shard | undefined {
  const v = raw.trim()
  if (v === '') return undefined
  const m = v.match(/^(\d+)\s*\/\s*(\d+)$/)
  if (!m) throw new InputError(`input \`shard\` is \`${v}\`; give K/N, e.g. \`2/4\` (shard 2 of 4), or \`\${{ matrix.shard }}/4\` in a matrix job`)
  const [index, count] = [Number(m[1]), Number(m[2])]
  if (count < 1 || count > MAX_SHARDS) throw new InputError(`input \`shard\` is \`${v}\`: the shard count N must be 1 to ${MAX_SHARDS}`)
  if (index < 1 || index > count) throw new InputError(`input \`shard\` is \`${v}\`: the shard index K must be 1 to ${count}`)
  if (mode !== 'stored') {
    throw new InputError(
      `input \`shard\` runs one shard of the load and uploads it; \`mode: ${mode}\` does not take it (${
        mode === 'merge' ? 'the merge step downloads the shards of this run: leave `shard` unset in it' : 'a paired run is not sharded'
      })`
    )
  }
  if (baseline !== '' && baseline !== 'auto') {
    throw new InputError(
      `input \`baseline\` is \`${baseline}\`, but a shard is not compared: give \`baseline\` to the merge step (\`mode: merge\`), which compares the merged result`
    )
  }
  return { index, count }
}

/**
 * `fail-on`: a list of decisions separated by commas or spaces, or `none`; empty: all three.
 */
function failOn(raw: string): FailOn {
  const words = raw.split(/[\s,]+/).filter((w) => w !== '')
  if (words.length === 0) return [...DECISIONS]
  if (words.length === 1 && words[0] === 'none') return []
  for (const w of words) {
    if (!(DECISIONS as readonly string[]).includes(w)) {
      throw new InputError(
        `input \`fail-on\` is \`${raw.trim()}\`; use \`none\` or a list of ${DECISIONS.map((d) => `\`${d}\``).join(', ')} (e.g. \`slo, regression\`)`
      )
    }
  }
  return DECISIONS.filter((d) => words.includes(d))
}

/** `fail-on` as the messages show it: `slo, regression`, or `none`. */
export function failOnText(f: FailOn): string {
  return f.length === 0 ? 'none' : f.join(', ')
}

/**
 * The `${NAME}`s that the action gives each side in paired mode: `ROOT`, the side's checkout
 * (absolute), and `PORT`, a free loopback port of its own.
 */
export const PAIRED_NAMES = ['ROOT', 'PORT'] as const

/**
 * Extra arguments, minus the ones the action itself passes: `--out`, `--shard` and
 * `--start-at` always; `--baseline` in stored mode; in paired mode, a side's value of a name in
 * `PAIRED_NAMES`; none at all in merge mode, which runs no load.
 */
function engineArgs(raw: string, mode: Mode): string[] {
  const args = splitArgs(raw)
  if (mode === 'merge' && args.length > 0) {
    throw new InputError('input `args` is for `loadgate run`; `mode: merge` runs no load (`loadgate merge` takes the shards of this run): leave `args` unset in it')
  }
  for (const [i, a] of args.entries()) {
    const [flag, ...rest] = a.split('=')
    if (flag === '--out') {
      throw new InputError('input `args` contains `--out`, which the action sets itself: read the path from the `result` output')
    }
    if (flag === '--shard' || flag === '--start-at') {
      throw new InputError(`input \`args\` contains \`${flag}\`, which the action sets itself: use the \`${flag.slice(2)}\` input`)
    }
    if (mode === 'stored' && flag === '--baseline') {
      throw new InputError('input `args` contains `--baseline`, which the action sets itself: use the `baseline` input')
    }
    if (mode === 'paired' && (flag === '--baseline' || flag === '--candidate')) {
      const value = rest.length > 0 ? rest.join('=') : (args[i + 1] ?? '')
      const name = value.split('=')[0]
      if ((PAIRED_NAMES as readonly string[]).includes(name)) {
        throw new InputError(
          `input \`args\` gives \`${flag} ${name}=...\`, but in \`mode: paired\` the action sets ${PAIRED_NAMES.map((n) => `\`${n}\``).join(' and ')} for each side itself`
        )
      }
    }
  }
  return args
}

/**
 * Splits extra engine arguments into words as a POSIX shell would for words, quotes (`'...'`,
 * `"..."`) and backslash escapes (shell-quote's `parse`), expanding nothing: a glob stays the
 * word it is; a `$NAME` outside single quotes, a shell operator (`|`, `;`, `>`, ...) or a `#`
 * comment is refused, since no shell runs to give it a meaning.
 */
export function splitArgs(raw: string): string[] {
  const words = parse(raw, (name) => {
    throw new InputError(
      `input \`args\` uses \`$${name}\`, but no shell runs to expand it: use \`\${{ env.${name} }}\` in the workflow, or '$${name}' in single quotes to pass it as it is`
    )
  })
  return words.map((w) => {
    if (typeof w === 'string') return w
    if ('op' in w && w.op === 'glob') return w.pattern
    const what = 'comment' in w ? `a comment (\`#${w.comment}\`)` : `the shell operator \`${w.op}\``
    throw new InputError(`input \`args\` holds ${what}, but no shell runs it: quote it to pass it to the engine as a word`)
  })
}
