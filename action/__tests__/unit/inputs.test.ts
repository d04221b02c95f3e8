import { describe, expect, it } from 'vitest'
import { InputError, readInputs, splitArgs } from '../../src/inputs.js'

/** A `core.getInput` over a table; unset inputs are '' as on the runner. */
function get(values: Record<string, string>) {
  return (name: string) => values[name] ?? ''
}

const minimal = { spec: 'perf/api.yaml', 'github-token': 't0ken' }

describe('readInputs', () => {
  it('pass-env: names separated by commas or new lines; anything else is refused', () => {
    expect(readInputs(get({ ...minimal, 'pass-env': 'DATABASE_URL, GITHUB_TOKEN\nINPUT_GITHUB-TOKEN' })).passEnv).toEqual([
      'DATABASE_URL',
      'GITHUB_TOKEN',
      'INPUT_GITHUB-TOKEN'
    ])
    expect(() => readInputs(get({ ...minimal, 'pass-env': 'A=1' }))).toThrow('input `pass-env` holds `A=1`, which is not a variable name')
  })

  it('applies every default', () => {
    expect(readInputs(get(minimal))).toEqual({
      spec: 'perf/api.yaml',
      workingDirectory: '.',
      mode: 'stored',
      build: '',
      baseline: { kind: 'auto' },
      artifactName: 'loadgate',
      token: 't0ken',
      comment: 'always',
      failOn: ['slo', 'regression', 'invalid-measurement'],
      engine: { kind: 'release', version: undefined },
      args: [],
      shard: undefined,
      startAt: '',
      allowMissing: false,
      passEnv: [],
      historyBranch: ''
    })
  })

  it('history-branch: a branch name git allows, not for a shard', () => {
    expect(readInputs(get({ ...minimal, 'history-branch': ' loadgate-history ' })).historyBranch).toBe('loadgate-history')
    expect(readInputs(get({ ...minimal, 'history-branch': 'perf/history_2' })).historyBranch).toBe('perf/history_2')
    for (const bad of ['a b', 'a..b', '-x', 'x/', 'x.lock', 'a:b', 'a~1', 'a^', 'a?', 'a*', 'a[b', 'a\\b', 'x@{1}', '.hidden', 'a/.b', 'a//b', '@', 'x.', 'tab\there']) {
      expect(() => readInputs(get({ ...minimal, 'history-branch': bad })), bad).toThrow('input `history-branch` is `')
    }
    expect(() => readInputs(get({ ...minimal, 'history-branch': 'loadgate-history', shard: '1/2' }))).toThrow(
      'input `history-branch` is for the step that judges the whole run: give it to the merge step'
    )
  })

  it('requires a spec and a token', () => {
    expect(() => readInputs(get({ 'github-token': 't' }))).toThrow(/input `spec` is required/)
    expect(() => readInputs(get({ spec: 'a.yaml' }))).toThrow(/input `github-token` is empty/)
  })

  it.each([
    ['auto', { kind: 'auto' }],
    ['none', { kind: 'none' }],
    ['baselines/main.json', { kind: 'path', path: 'baselines/main.json' }],
    ['  none  ', { kind: 'none' }]
  ])('baseline %j', (value, expected) => {
    expect(readInputs(get({ ...minimal, baseline: value })).baseline).toEqual(expected)
  })

  it.each([
    ['comment', 'sometimes', /input `comment` is `sometimes`; use one of `always`, `on-failure`, `never`/],
    ['fail-on', 'latency', /input `fail-on` is `latency`; use `none` or a list of `slo`, `regression`, `invalid-measurement` \(e.g. `slo, regression`\)/],
    ['fail-on', 'slo, none', /input `fail-on` is `slo, none`; use `none` or a list of/]
  ])('rejects %s: %s with the allowed values', (name, value, message) => {
    expect(() => readInputs(get({ ...minimal, [name]: value }))).toThrow(message)
  })

  it('accepts every documented comment and fail-on value', () => {
    for (const c of ['always', 'on-failure', 'never']) {
      expect(readInputs(get({ ...minimal, comment: c })).comment).toBe(c)
    }
    const failOn = (f: string) => readInputs(get({ ...minimal, 'fail-on': f })).failOn
    expect(failOn('slo')).toEqual(['slo'])
    expect(failOn('invalid-measurement,regression')).toEqual(['regression', 'invalid-measurement'])
    expect(failOn(' slo  regression ')).toEqual(['slo', 'regression'])
    expect(failOn('none')).toEqual([])
    expect(failOn('')).toEqual(['slo', 'regression', 'invalid-measurement'])
  })

  it('reads the engine from a path or a version, not both', () => {
    expect(readInputs(get({ ...minimal, 'engine-path': 'bin/loadgate' })).engine).toEqual({
      kind: 'path',
      path: 'bin/loadgate'
    })
    expect(readInputs(get({ ...minimal, 'engine-version': 'v0.3.1' })).engine).toEqual({
      kind: 'release',
      version: '0.3.1'
    })
    expect(() => readInputs(get({ ...minimal, 'engine-version': 'latest' }))).toThrow(/release version such as `0.1.0`/)
    expect(() => readInputs(get({ ...minimal, 'engine-path': 'x', 'engine-version': '0.1.0' }))).toThrow(
      /exclude each other/
    )
  })

  it('rejects artifact names the artifact service refuses', () => {
    expect(() => readInputs(get({ ...minimal, 'artifact-name': 'perf/main' }))).toThrow(InputError)
    expect(readInputs(get({ ...minimal, 'artifact-name': 'perf-main' })).artifactName).toBe('perf-main')
    // The name is also a folder's: `.` and `..` would name the folder above.
    for (const dots of ['.', '..', '...']) {
      expect(() => readInputs(get({ ...minimal, 'artifact-name': dots })), dots).toThrow(`input \`artifact-name\` is \`${dots}\`: a name made of dots only`)
    }
    expect(() => readInputs(get({ ...minimal, 'artifact-name': 'a\\b' }))).toThrow('contains `\\`')
    expect(readInputs(get({ ...minimal, 'artifact-name': 'v1.2' })).artifactName).toBe('v1.2')
  })

  it('splits args and refuses the flags the action sets', () => {
    expect(readInputs(get({ ...minimal, args: '--quiet' })).args).toEqual(['--quiet'])
    expect(() => readInputs(get({ ...minimal, args: '--out x.json' }))).toThrow(/`--out`, which the action sets itself/)
    expect(() => readInputs(get({ ...minimal, args: '--baseline=b.json' }))).toThrow(/`--baseline`/)
  })
})

describe('mode and build', () => {
  const paired = { ...minimal, mode: 'paired' }

  it('reads paired mode with its build command, kept whole for bash', () => {
    const i = readInputs(get({ ...paired, build: '  cargo build --release && echo "built $PWD"  ' }))
    expect(i.mode).toBe('paired')
    expect(i.build).toBe('cargo build --release && echo "built $PWD"')
    expect(i.baseline).toEqual({ kind: 'auto' })
  })

  it('rejects another mode with the allowed values', () => {
    expect(() => readInputs(get({ ...minimal, mode: 'ab' }))).toThrow('input `mode` is `ab`; use one of `stored`, `paired`, `merge`')
  })

  it('refuses a build in stored mode, where nothing would run it', () => {
    expect(() => readInputs(get({ ...minimal, build: 'make' }))).toThrow(/input `build` is only run in `mode: paired`/)
  })

  it.each(['none', 'baselines/main.json'])('refuses baseline %j in paired mode', (baseline) => {
    expect(() => readInputs(get({ ...paired, baseline }))).toThrow(
      new RegExp(`input \`baseline\` is \`${baseline}\`, but \`mode: paired\` compares with the pull request's base`)
    )
  })

  it('passes --baseline and --candidate values through in paired mode, except ROOT and PORT', () => {
    expect(readInputs(get({ ...paired, args: '--quiet --baseline MODE=old --candidate=MODE=new' })).args).toEqual([
      '--quiet',
      '--baseline',
      'MODE=old',
      '--candidate=MODE=new'
    ])
    for (const args of ['--baseline ROOT=/x', '--candidate PORT=1', '--candidate=ROOT=/y']) {
      expect(() => readInputs(get({ ...paired, args })), args).toThrow(/the action sets `ROOT` and `PORT` for each side itself/)
    }
    expect(() => readInputs(get({ ...paired, args: '--out ab.json' }))).toThrow(/`--out`, which the action sets itself/)
  })
})

describe('shard, start-at and mode: merge', () => {
  it.each([
    ['2/4', { index: 2, count: 4 }],
    [' 1 / 1 ', { index: 1, count: 1 }],
    ['4/4', { index: 4, count: 4 }],
    ['1024/1024', { index: 1024, count: 1024 }]
  ])('reads shard %j as K of N', (shard, expected) => {
    expect(readInputs(get({ ...minimal, shard })).shard).toEqual(expected)
  })

  it.each([
    ['4', /input `shard` is `4`; give K\/N, e.g. `2\/4` \(shard 2 of 4\)/],
    ['a/b', /input `shard` is `a\/b`; give K\/N/],
    ['1/2/3', /give K\/N/],
    ['-1/4', /give K\/N/],
    ['0/4', /input `shard` is `0\/4`: the shard index K must be 1 to 4/],
    ['5/4', /the shard index K must be 1 to 4/],
    ['1/0', /input `shard` is `1\/0`: the shard count N must be 1 to 1024/],
    ['1/1025', /the shard count N must be 1 to 1024/]
  ])('refuses shard %j with what it takes', (shard, message) => {
    expect(() => readInputs(get({ ...minimal, shard }))).toThrow(message)
  })

  it('refuses a shard in paired or merge mode, and with a baseline other than auto', () => {
    expect(() => readInputs(get({ ...minimal, mode: 'paired', shard: '1/2' }))).toThrow(/`mode: paired` does not take it \(a paired run is not sharded\)/)
    expect(() => readInputs(get({ ...minimal, mode: 'merge', shard: '1/2' }))).toThrow(
      /`mode: merge` does not take it \(the merge step downloads the shards of this run: leave `shard` unset in it\)/
    )
    expect(() => readInputs(get({ ...minimal, shard: '1/2', baseline: 'none' }))).toThrow(/a shard is not compared: give `baseline` to the merge step/)
    expect(readInputs(get({ ...minimal, shard: '1/2', baseline: 'auto' })).shard).toEqual({ index: 1, count: 2 })
  })

  it('takes start-at as one word, in stored mode only', () => {
    expect(readInputs(get({ ...minimal, shard: '1/2', 'start-at': ' 2026-11-24T10:00:00Z ' })).startAt).toBe('2026-11-24T10:00:00Z')
    expect(readInputs(get({ ...minimal, 'start-at': '+30s' })).startAt).toBe('+30s')
    expect(() => readInputs(get({ ...minimal, 'start-at': 'in 30 s' }))).toThrow(/input `start-at` is `in 30 s`; give one time: RFC 3339/)
    expect(() => readInputs(get({ ...minimal, mode: 'merge', 'start-at': '+30s' }))).toThrow(/`mode: merge` does not take it/)
    expect(() => readInputs(get({ ...minimal, mode: 'paired', 'start-at': '+30s' }))).toThrow(/`mode: paired` does not take it/)
  })

  it('refuses --shard and --start-at in args: they are inputs', () => {
    expect(() => readInputs(get({ ...minimal, args: '--shard 1/2' }))).toThrow(/`--shard`, which the action sets itself: use the `shard` input/)
    expect(() => readInputs(get({ ...minimal, args: '--start-at=+30s' }))).toThrow(/use the `start-at` input/)
  })

  it('reads mode: merge with allow-missing, and refuses what it does not take', () => {
    const merge = { ...minimal, mode: 'merge' }
    expect(readInputs(get(merge))).toMatchObject({ mode: 'merge', allowMissing: false, shard: undefined })
    expect(readInputs(get({ ...merge, 'allow-missing': 'true' })).allowMissing).toBe(true)
    expect(readInputs(get({ ...merge, 'allow-missing': 'false' })).allowMissing).toBe(false)
    expect(() => readInputs(get({ ...merge, 'allow-missing': 'yes' }))).toThrow('input `allow-missing` is `yes`; use one of `false`, `true`')
    expect(() => readInputs(get({ ...minimal, 'allow-missing': 'true' }))).toThrow(/input `allow-missing` is for `mode: merge`/)
    expect(() => readInputs(get({ ...merge, args: '--quiet' }))).toThrow(/`mode: merge` runs no load/)
    expect(() => readInputs(get({ ...merge, build: 'make' }))).toThrow(/in `mode: merge`, build in a step before this one/)
  })
})

describe('splitArgs', () => {
  it.each([
    ['', []],
    ['  ', []],
    ['--quiet', ['--quiet']],
    ['a  b\tc\nd', ['a', 'b', 'c', 'd']],
    [`--name 'two words' "and \\"three\\"" x\\ y`, ['--name', 'two words', 'and "three"', 'x y']],
    [`''`, ['']],
    [`a"b"'c'`, ['abc']],
    [`'$HOME' "a*" *.json`, ['$HOME', 'a*', '*.json']]
  ])('%j', (raw, words) => {
    expect(splitArgs(raw)).toEqual(words)
  })

  it('refuses what only a shell would give a meaning: variables, operators, comments', () => {
    expect(() => splitArgs('--tag $GITHUB_SHA')).toThrow(/uses `\$GITHUB_SHA`, but no shell runs to expand it: use `\$\{\{ env.GITHUB_SHA \}\}`/)
    expect(() => splitArgs('--tag "${SHA}"')).toThrow(/uses `\$SHA`/)
    expect(() => splitArgs('--quiet | tee x')).toThrow(/holds the shell operator `\|`, but no shell runs it/)
    expect(() => splitArgs('--quiet # why')).toThrow(/holds a comment \(`# why`\)/)
  })
})
