import { describe, expect, it } from 'vitest'
import { failedSlos, failures, readVerdict, regressionState, warnedSlos } from '../../src/verdict.js'
import { compared, slo, verdictDoc } from '../fixtures/verdict.js'

describe('readVerdict', () => {
  it('reads the document the engine wrote, as it is', () => {
    const doc = compared(['unchanged'])
    expect(readVerdict(JSON.stringify(doc), 'verdict.json')).toEqual(doc)
  })

  it('refuses what is not a verdict document of version 1', () => {
    expect(() => readVerdict('{', 'v.json')).toThrow(/v.json is not JSON/)
    expect(() => readVerdict('null', 'v.json')).toThrow(/v.json is not a loadgate verdict of verdict_version 1 \(verdict_version: undefined\)/)
    // A result file is not a verdict.
    expect(() => readVerdict('{"result_version": 1, "total": {}}', 'v.json')).toThrow(/not a loadgate verdict/)
    expect(() => readVerdict(JSON.stringify({ ...verdictDoc(), verdict_version: 2 }), 'v.json')).toThrow(/\(verdict_version: 2\)/)
  })

  it("says so when the engine is older than the action (no formatted values)", () => {
    const doc = verdictDoc()
    const old = { ...doc, current: { ...doc.current, loadgate_version: '0.0.9', headline: { ...doc.current.headline, display: undefined } } }
    expect(() => readVerdict(JSON.stringify(old), 'v.json')).toThrow(
      "v.json has no formatted headline (current.headline.display): the engine (loadgate 0.0.9) is older than this action; leave `engine-version` empty to use the action's own version"
    )
  })
})

describe('regressionState', () => {
  it.each([
    [['unchanged', 'regressed', 'inconclusive'], 'regressed'],
    [['unchanged', 'inconclusive', 'improved'], 'inconclusive'],
    [['unchanged', 'improved'], 'improved'],
    [['unchanged'], 'unchanged'],
    [[], 'unchanged']
  ] as const)('rules %j -> %s', (states, state) => {
    expect(regressionState(compared([...states]))).toBe(state)
  })

  it('is no-baseline when the engine compared with none', () => {
    expect(regressionState(verdictDoc())).toBe('no-baseline')
  })

  it("takes `regressed` from the engine's decision, not from counting rules", () => {
    expect(regressionState(compared(['unchanged'], { regressed: true }))).toBe('regressed')
    expect(regressionState(compared(['regressed'], { regressed: false }))).toBe('unchanged')
  })
})

describe('failures (the fail-on policy)', () => {
  const sloFailed = verdictDoc({ verdict: 'slo_failed', exit_code: 1, slo_passed: false, slo: [slo(false), slo(true)] })
  // The engine's overall verdict is slo_failed (it wins over regressed); `regressed` still says so.
  const both = compared(['regressed'], { verdict: 'slo_failed', exit_code: 1, slo_passed: false, slo: [slo(false)] })

  it('fails on what fail-on names, and only that', () => {
    expect(failures(['slo', 'regression'], both)).toEqual(['1 SLO threshold failed', 'a regression against the baseline was found'])
    expect(failures(['slo'], both)).toEqual(['1 SLO threshold failed'])
    expect(failures(['regression', 'invalid-measurement'], both)).toEqual(['a regression against the baseline was found'])
    expect(failures([], both)).toEqual([])
    expect(failures(['regression'], sloFailed)).toEqual([])
  })

  it("counts the engine's failed thresholds", () => {
    const two = verdictDoc({ verdict: 'slo_failed', slo_passed: false, slo: [slo(false), slo(true), slo(false)] })
    expect(failedSlos(two)).toHaveLength(2)
    expect(failures(['slo'], two)).toEqual(['2 SLO thresholds failed'])
  })

  it('never fails for no baseline, an inconclusive comparison or an improvement', () => {
    for (const v of [verdictDoc(), compared(['inconclusive']), compared(['improved', 'unchanged'])]) {
      expect(failures(['slo', 'regression', 'invalid-measurement'], v)).toEqual([])
    }
  })

  it('fails on an interrupted run whatever fail-on says', () => {
    const interrupted = verdictDoc({ verdict: 'interrupted', exit_code: 3 })
    for (const failOn of [[], ['slo'], ['slo', 'regression', 'invalid-measurement']] as const) {
      expect(failures([...failOn], interrupted)).toEqual(['the run was interrupted before its end (exit code 3): it is not judged'])
    }
  })

  it('fails on an invalid measurement with invalid-measurement only, and then on nothing else', () => {
    const invalid = compared(['regressed'], { verdict: 'invalid_measurement', exit_code: 5, regressed: true, slo_passed: false, slo: [slo(false)] })
    expect(failures(['slo', 'regression', 'invalid-measurement'], invalid)).toEqual([
      expect.stringMatching(/^the engine's verdict is invalid_measurement \(exit code 5\)/)
    ])
    // An invalid measurement's SLOs and rules mean nothing: they fail nothing either.
    expect(failures(['slo', 'regression'], invalid)).toEqual([])
    expect(failures([], invalid)).toEqual([])
  })
})

describe('warnings (`severity: warn`)', () => {
  it('counts a failed warn SLO as a warning, not as a failure', () => {
    const doc = verdictDoc({ slo: [slo(false, { severity: 'warn' }), slo(false), slo(true, { severity: 'warn' })] })
    expect(failedSlos(doc)).toHaveLength(1)
    expect(warnedSlos(doc)).toHaveLength(1)
    expect(warnedSlos(doc)[0].severity).toBe('warn')
    // Only a warning failed: the engine's slo_passed is true, and nothing fails the step.
    const warnedOnly = verdictDoc({ slo_passed: true, slo: [slo(false, { severity: 'warn' })] })
    expect(failedSlos(warnedOnly)).toEqual([])
    expect(failures(['slo', 'regression'], warnedOnly)).toEqual([])
  })
})
