/**
 * mode: paired's planning: the `loadgate ab` command line, and the base commit, its worktree and
 * the builds, on real git repositories made for each test.
 */
import { describe, expect, it, vi } from 'vitest'
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { abArgs, build, findBase, freePorts, sideDir, withWorktree } from '../../src/paired.js'
import { checkout, git, origin } from '../fixtures/git.js'

/** The environment a build gets: PATH and HOME only, as child.ts would leave far more. */
const ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }

vi.mock('@actions/core', () => import('../fixtures/core.js'))

describe('abArgs', () => {
  it('gives each side its ROOT and PORT, then --out, then the args input', () => {
    expect(
      abArgs({
        spec: '/ws/perf/api.yaml',
        roots: { baseline: '/tmp/loadgate-base-1', candidate: '/ws' },
        ports: { baseline: 40001, candidate: 40002 },
        out: '/tmp/out/ab.json',
        args: ['--quiet', '--candidate', 'MODE=new']
      })
    ).toEqual([
      'ab',
      '/ws/perf/api.yaml',
      '--baseline',
      'ROOT=/tmp/loadgate-base-1',
      '--baseline',
      'PORT=40001',
      '--candidate',
      'ROOT=/ws',
      '--candidate',
      'PORT=40002',
      '--out',
      '/tmp/out/ab.json',
      '--quiet',
      '--candidate',
      'MODE=new'
    ])
  })

  it('refuses one port for both sides', () => {
    const c = { spec: 's', roots: { baseline: '/b', candidate: '/c' }, ports: { baseline: 9, candidate: 9 }, out: 'o', args: [] }
    expect(() => abArgs(c)).toThrow('both sides got port 9')
  })
})

describe('sideDir', () => {
  it('is the working directory at the same place in the baseline checkout', () => {
    expect(sideDir('/ws', '/ws', '/tmp/base')).toBe('/tmp/base')
    expect(sideDir('/ws', '/ws/services/api', '/tmp/base')).toBe('/tmp/base/services/api')
    expect(() => sideDir('/ws', '/elsewhere', '/tmp/base')).toThrow('the working directory /elsewhere is not inside the git checkout /ws')
  })
})

describe('freePorts', () => {
  it('gives distinct ports that can be bound', async () => {
    const ports = await freePorts(2)
    expect(ports).toHaveLength(2)
    expect(ports[0]).not.toBe(ports[1])
    for (const p of ports) expect(p).toBeGreaterThan(0)
    // Released: binding them again works.
    expect(await freePorts(0)).toEqual([])
  })
})

describe('findBase', () => {
  const repo = origin({ base: { 'app.txt': 'v1\n' }, head: { 'app.txt': 'v2\n' } })

  it('is the merge base of HEAD with origin/BRANCH, not the branch tip', async () => {
    const ws = checkout(repo)
    const log: string[] = []
    const base = await findBase(join(ws), 'main', (l) => log.push(l))
    expect(base).toEqual({ repo: ws, head: repo.commits.head, commit: repo.commits.base, branch: 'main' })
    // A whole checkout already has origin/main: nothing fetched.
    expect(log).toEqual([`Baseline: ${repo.commits.base.slice(0, 7)}, the merge base of HEAD (${repo.commits.head.slice(0, 7)}) with main`])
  })

  it('finds the repository from a working directory inside it', async () => {
    const ws = checkout(repo)
    mkdirSync(join(ws, 'sub'))
    expect((await findBase(join(ws, 'sub'), 'main', () => {})).repo).toBe(ws)
  })

  it('fetches the base branch and the missing history into a shallow checkout', async () => {
    const ws = checkout(repo, 1)
    expect(git(ws, 'rev-parse', '--is-shallow-repository')).toBe('true')
    const log: string[] = []
    const base = await findBase(ws, 'main', (l) => log.push(l))
    expect(base.commit).toBe(repo.commits.base)
    expect(log[0]).toBe('Fetching main from origin, and the history this shallow checkout lacks (--unshallow)')
    expect(git(ws, 'rev-parse', '--is-shallow-repository')).toBe('false')
  })

  it('says what is missing when the base branch cannot be fetched', async () => {
    const ws = checkout(repo, 1)
    await expect(findBase(ws, 'release-9', () => {})).rejects.toThrow(
      /^mode: paired: cannot fetch the base branch release-9 from origin \(git says: .*release-9.*\); check out with actions\/checkout's `fetch-depth: 0`/
    )
  })

  it('says what is missing when HEAD and the branch share no history', async () => {
    const ws = checkout(repo)
    // An unrelated history under the base branch's name.
    git(ws, 'checkout', '-q', '--orphan', 'other')
    git(ws, 'commit', '-q', '-m', 'unrelated')
    git(ws, 'update-ref', 'refs/remotes/origin/main', 'HEAD')
    git(ws, 'checkout', '-q', 'feature')
    await expect(findBase(ws, 'main', () => {})).rejects.toThrow(
      `mode: paired: HEAD (${repo.commits.head.slice(0, 7)}) and main have no merge base in this checkout: the history between them is missing; check out with actions/checkout's \`fetch-depth: 0\``
    )
  })

  it('says so outside a git checkout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loadgate-not-git-'))
    await expect(findBase(dir, 'main', () => {})).rejects.toThrow(`mode: paired needs a git checkout, but ${dir} is not in a git work tree`)
  })
})

describe('withWorktree', () => {
  const repo = origin({ base: { 'app.txt': 'v1\n' }, head: { 'app.txt': 'v2\n' } })

  it('checks the base out beside the workspace and removes it afterwards', async () => {
    const ws = checkout(repo)
    const base = await findBase(ws, 'main', () => {})
    const parent = mkdtempSync(join(tmpdir(), 'loadgate-temp-'))
    const seen = await withWorktree(base, parent, async (dir) => {
      expect(dir.startsWith(join(parent, 'loadgate-base-'))).toBe(true)
      expect(git(dir, 'rev-parse', 'HEAD')).toBe(repo.commits.base)
      expect(git(ws, 'worktree', 'list')).toContain(dir)
      return { dir, app: readFileSync(join(dir, 'app.txt'), 'utf8') }
    })
    expect(seen.app).toBe('v1\n')
    expect(readFileSync(join(ws, 'app.txt'), 'utf8')).toBe('v2\n') // the workspace is untouched
    expect(existsSync(seen.dir)).toBe(false)
    expect(git(ws, 'worktree', 'list').split('\n')).toHaveLength(1)
  })

  it('removes it when the work inside fails, built files and all', async () => {
    const ws = checkout(repo)
    const base = await findBase(ws, 'main', () => {})
    let inside = ''
    await expect(
      withWorktree(base, tmpdir(), async (dir) => {
        inside = dir
        await build('mkdir -p target && echo built > target/out', dir, 'baseline', base.commit, ENV)
        expect(readFileSync(join(dir, 'target', 'out'), 'utf8')).toBe('built\n')
        throw new Error('the run failed')
      })
    ).rejects.toThrow('the run failed')
    expect(existsSync(inside)).toBe(false)
    expect(git(ws, 'worktree', 'list').split('\n')).toHaveLength(1)
  })
})

describe('build', () => {
  it('runs the command with bash in the side folder, and fails with the exit code', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loadgate-build-'))
    await build('echo "$PWD" > where && [[ -n "$BASH_VERSION" ]]', dir, 'candidate', 'abcdef123', ENV)
    expect(readFileSync(join(dir, 'where'), 'utf8')).toBe(`${dir}\n`)
    // -o pipefail: a failure inside a pipe fails the build, as in a workflow's run step.
    await expect(build('false | cat', dir, 'baseline', 'abcdef123', ENV)).rejects.toThrow(
      `input \`build\` failed for the baseline (abcdef1) with exit code 1; its output is in the group "Build the baseline (abcdef1) in ${dir}"`
    )
    await expect(build('true', join(dir, 'nope'), 'baseline', 'abcdef123', ENV)).rejects.toThrow(
      `mode: paired: the working directory ${join(dir, 'nope')} does not exist in the baseline's checkout (abcdef1)`
    )
  })
})
