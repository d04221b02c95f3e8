/** What the action's child processes see (child.ts), and where path inputs may lead (workspace.ts). */
import { describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { childEnv, children, knownSecrets, mask } from '../../src/child.js'
import { confined } from '../../src/workspace.js'

const TOKEN = 'ghs_0123456789abcdef'

const runner = {
  PATH: '/usr/bin',
  HOME: '/home/runner',
  DATABASE_URL: 'postgres://db',
  GITHUB_TOKEN: TOKEN,
  GH_TOKEN: TOKEN,
  'INPUT_GITHUB-TOKEN': TOKEN,
  INPUT_SPEC: 'perf/api.yaml',
  ACTIONS_RUNTIME_TOKEN: 'eyJhbGciOiJub25lIn0.runtime',
  ACTIONS_RESULTS_URL: 'https://results.test/',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidc-request-token',
  GITHUB_ENV: '/runner/file_commands/set_env',
  GITHUB_OUTPUT: '/runner/file_commands/set_output',
  GITHUB_REPOSITORY: 'octo/shop',
  GITHUB_SHA: 'f'.repeat(40)
}

describe('childEnv', () => {
  it('withholds the inputs, ACTIONS_*, GITHUB_TOKEN, the token under any name and the file commands; passes the rest', () => {
    const env = childEnv(runner, [], knownSecrets(runner, TOKEN))
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/runner',
      DATABASE_URL: 'postgres://db',
      GITHUB_REPOSITORY: 'octo/shop',
      GITHUB_SHA: 'f'.repeat(40)
    })
  })

  it('lets the names pass-env gives through', () => {
    const env = childEnv(runner, ['GITHUB_TOKEN', 'ACTIONS_RESULTS_URL'], knownSecrets(runner, TOKEN))
    expect(env).toMatchObject({ GITHUB_TOKEN: TOKEN, ACTIONS_RESULTS_URL: 'https://results.test/' })
    expect(env).not.toHaveProperty('GH_TOKEN')
  })
})

describe('knownSecrets and mask', () => {
  it("masks the token and the runner's tokens, not short or ordinary values", () => {
    const { secrets } = children(runner, TOKEN, [])
    expect(secrets.sort()).toEqual([TOKEN, 'eyJhbGciOiJub25lIn0.runtime', 'oidc-request-token'].sort())
    expect(mask(`token=${TOKEN} runtime=eyJhbGciOiJub25lIn0.runtime url=https://results.test/`, secrets)).toBe(
      'token=*** runtime=*** url=https://results.test/'
    )
    expect(knownSecrets({}, 'short')).toEqual([])
  })
})

describe('confined', () => {
  const ws = mkdtempSync(join(tmpdir(), 'loadgate-confined-'))
  mkdirSync(join(ws, 'perf'))
  writeFileSync(join(ws, 'perf', 'api.yaml'), '')
  const outside = mkdtempSync(join(tmpdir(), 'loadgate-outside-'))
  writeFileSync(join(outside, 'secret.yaml'), '')
  symlinkSync(join(outside, 'secret.yaml'), join(ws, 'perf', 'link.yaml'))
  const roots = [{ dir: ws, label: 'the workspace' }]

  it('resolves a path inside the workspace', () => {
    expect(confined('spec', 'perf/api.yaml', ws, roots)).toBe(join(ws, 'perf', 'api.yaml'))
    expect(confined('working-directory', '.', ws, roots)).toBe(ws)
  })

  it('refuses `..`, an absolute path and a link that lead outside, naming the input', () => {
    expect(() => confined('spec', '../../etc/passwd', join(ws, 'perf'), roots)).toThrow(/^input `spec` is `..\/..\/etc\/passwd`, which leads to \/.*etc\/passwd, outside the workspace/)
    expect(() => confined('baseline', '/etc/passwd', ws, roots)).toThrow(/^input `baseline` is `\/etc\/passwd`/)
    expect(() => confined('spec', 'perf/link.yaml', ws, roots)).toThrow(/^input `spec` is `perf\/link.yaml`, which leads to .*secret.yaml, outside the workspace/)
  })
})
