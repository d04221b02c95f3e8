import { describe, expect, it } from 'vitest'
import { failures, formatMeasured, readRegression, readResult, verdict } from '../../src/verdict.js'

const result = {
  result_version: 1,
  spec: { name: 'api' },
  passed: false,
  total: { rps: 1234.5, error_rate: 0.002, latency_us: { p95: 900, p99: 2100 } },
  slo: [
    { scope: 'total', metric: 'latency', threshold: 'p(95) < 200ms', unit: 'us', limit: 200000, measured: 900, passed: true },
    { scope: 'search', metric: 'errors', threshold: 'rate < 0.1%', unit: 'ratio', limit: 0.001, measured: 0.002, passed: false }
  ]
}

describe('readResult', () => {
  it('reads the verdict, the failed SLOs and the headline', () => {
    const r = readResult(JSON.stringify(result), 'result.json')
    expect(r.sloPassed).toBe(false)
    expect(r.failedSlos).toEqual([
      { scope: 'search', metric: 'errors', threshold: 'rate < 0.1%', measured: 0.002, limit: 0.001, unit: 'ratio' }
    ])
    expect(r.headline).toEqual({ rps: 1234.5, p95Us: 900, p99Us: 2100, errorRate: 0.002 })
  })

  it('refuses what is not a result', () => {
    expect(() => readResult('{', 'r.json')).toThrow(/r.json is not JSON/)
    expect(() => readResult('{"result_version": 2, "total": {}}', 'r.json')).toThrow(/not a loadgate result/)
  })
})

describe('readRegression', () => {
  const rules = (...v: string[]) => JSON.stringify({ rules: v.map((verdict) => ({ verdict })) })
  it.each([
    [rules('unchanged', 'regressed', 'inconclusive'), 'regressed'],
    [rules('unchanged', 'inconclusive', 'improved'), 'inconclusive'],
    [rules('unchanged', 'improved'), 'improved'],
    [rules('unchanged'), 'unchanged'],
    [rules(), 'unchanged'],
    [JSON.stringify({ comparison: { rules: [{ verdict: 'regressed' }] } }), 'regressed']
  ])('%s -> %s', (json, state) => {
    expect(readRegression(json, 'v.json')).toBe(state)
  })

  it('refuses a file without rules', () => {
    expect(() => readRegression('{}', 'v.json')).toThrow(/has no `rules` list/)
  })
})

describe('policy', () => {
  const r = readResult(JSON.stringify(result), 'result.json')
  const ok = readResult(JSON.stringify({ ...result, passed: true, slo: [] }), 'result.json')

  it('fails on what fail-on names, and only that', () => {
    const both = verdict(r, 'regressed')
    expect(both.overall).toBe('fail')
    expect(failures('both', both, r)).toEqual(['1 SLO threshold failed', 'a regression against the baseline was found'])
    expect(failures('slo', both, r)).toEqual(['1 SLO threshold failed'])
    expect(failures('regression', both, r)).toEqual(['a regression against the baseline was found'])
    expect(failures('none', both, r)).toEqual([])
  })

  it('never fails for no baseline, an inconclusive comparison or an improvement', () => {
    for (const state of ['no-baseline', 'inconclusive', 'improved', 'unchanged'] as const) {
      const v = verdict(ok, state)
      expect(v.overall).toBe('pass')
      expect(failures('both', v, ok)).toEqual([])
    }
  })
})

describe('formatMeasured', () => {
  it.each([
    [1500, 'us', '1.50ms'],
    [900, 'us', '900us'],
    [0.002, 'ratio', '0.200%'],
    [512.34, '1/s', '512.3/s'],
    [12, 'count', '12'],
    [null, 'us', 'not measured (no responses)']
  ])('%s %s -> %s', (value, unit, text) => {
    expect(formatMeasured(value, unit)).toBe(text)
  })
})
