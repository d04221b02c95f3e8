import { describe, expect, it } from 'vitest'
import { InputError, readInputs, splitArgs } from '../../src/inputs.js'

/** A `core.getInput` over a table; unset inputs are '' as on the runner. */
function get(values: Record<string, string>) {
  return (name: string) => values[name] ?? ''
}

const minimal = { spec: 'perf/api.yaml', 'github-token': 't0ken' }

describe('readInputs', () => {
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
      args: []
    })
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
    expect(() => readInputs(get({ ...minimal, mode: 'ab' }))).toThrow('input `mode` is `ab`; use one of `stored`, `paired`')
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
