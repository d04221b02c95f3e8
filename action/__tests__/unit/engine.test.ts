import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { assetName, builtExecutable, engineMessage, parseChecksum, pickAsset, releaseTargets, runtimeGlibc, sourceVersion } from '../../src/engine.js'

describe('release binaries', () => {
  // Every runner the action names (docs/action.md, "Getting the engine"), with the glibc Node
  // reports there (undefined: musl, as on Alpine, or not Linux), and the targets it gets, best first.
  const runners: [string, string, string | undefined, string[]][] = [
    ['linux', 'x64', '2.39', ['x86_64-unknown-linux-gnu', 'x86_64-unknown-linux-musl']],
    ['linux', 'x64', '2.34', ['x86_64-unknown-linux-gnu', 'x86_64-unknown-linux-musl']],
    ['linux', 'x64', '2.31', ['x86_64-unknown-linux-musl']],
    ['linux', 'x64', '2.17', ['x86_64-unknown-linux-musl']],
    ['linux', 'x64', undefined, ['x86_64-unknown-linux-musl']],
    ['linux', 'arm64', '2.39', ['aarch64-unknown-linux-gnu', 'aarch64-unknown-linux-musl']],
    ['linux', 'arm64', '2.28', ['aarch64-unknown-linux-musl']],
    ['linux', 'arm64', undefined, ['aarch64-unknown-linux-musl']],
    ['darwin', 'x64', undefined, ['x86_64-apple-darwin']],
    ['darwin', 'arm64', undefined, ['aarch64-apple-darwin']],
    ['win32', 'x64', undefined, ['x86_64-pc-windows-msvc']],
    // Windows 11 on Arm runs x64 programs under emulation; no arm64 Windows build is released.
    ['win32', 'arm64', undefined, ['x86_64-pc-windows-msvc']],
    ['win32', 'ia32', undefined, []],
    ['freebsd', 'x64', undefined, []],
    ['linux', 's390x', '2.39', []],
    ['linux', 'ppc64', '2.39', []],
    ['linux', 'arm', '2.36', []],
    ['linux', 'riscv64', undefined, []],
    ['aix', 'ppc64', undefined, []],
    ['openbsd', 'arm64', undefined, []]
  ]
  it.each(runners)('a %s-%s runner with glibc %s gets the builds it runs, best first', (platform, arch, glibc, targets) => {
    expect(releaseTargets(platform, arch, glibc).targets).toEqual(targets)
  })

  it('says why each runner gets what it gets', () => {
    expect(releaseTargets('linux', 'x64', '2.39').why).toBe(
      'linux-x64 with glibc 2.39: the gnu build, which needs glibc 2.34 or newer, else the static musl build'
    )
    expect(releaseTargets('linux', 'arm64', '2.31').why).toBe(
      'linux-arm64 with glibc 2.31, older than the 2.34 the gnu build needs: the static musl build only'
    )
    expect(releaseTargets('linux', 'x64', undefined).why).toBe('linux-x64 without glibc, as on Alpine (musl): the static musl build only')
    expect(releaseTargets('darwin', 'arm64', undefined).why).toBe('darwin-arm64')
    expect(releaseTargets('win32', 'arm64', undefined).why).toMatch(/^win32-arm64: the x64 build, which Windows on Arm runs under emulation/)
    expect(releaseTargets('linux', 's390x', '2.39').why).toBe('no release binary is built for linux-s390x')
    expect(releaseTargets('freebsd', 'x64', undefined).why).toBe('no release binary is built for freebsd-x64')
  })

  it('compares glibc versions by number, not as text', () => {
    expect(releaseTargets('linux', 'x64', '2.4').targets).toEqual(['x86_64-unknown-linux-musl'])
    expect(releaseTargets('linux', 'x64', '2.100').targets[0]).toBe('x86_64-unknown-linux-gnu')
    expect(releaseTargets('linux', 'x64', '3.0').targets[0]).toBe('x86_64-unknown-linux-gnu')
    expect(releaseTargets('linux', 'x64', '2.34.1').targets[0]).toBe('x86_64-unknown-linux-gnu')
    expect(releaseTargets('linux', 'x64', 'unknown').targets).toEqual(['x86_64-unknown-linux-musl'])
  })

  it("reads this process's glibc from Node's report: the version getconf names, none without glibc", () => {
    let getconf: string | undefined
    try {
      // `glibc 2.36` on glibc; fails on musl (Alpine), which has no such variable.
      getconf = execFileSync('getconf', ['GNU_LIBC_VERSION'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    } catch {
      getconf = undefined
    }
    const expected = process.platform === 'linux' && getconf?.startsWith('glibc ') ? getconf.slice('glibc '.length) : undefined
    expect(runtimeGlibc()).toBe(expected)
  })

  it("names each target's asset as the release workflow does", () => {
    expect(assetName('x86_64-unknown-linux-gnu')).toBe('loadgate-x86_64-unknown-linux-gnu.tar.gz')
    expect(assetName('aarch64-unknown-linux-musl')).toBe('loadgate-aarch64-unknown-linux-musl.tar.gz')
    expect(assetName('x86_64-pc-windows-msvc')).toBe('loadgate-x86_64-pc-windows-msvc.zip')
  })

  it('picks the first target whose archive and checksum the release has, never a debug-info asset', () => {
    const release = (...targets: string[]) =>
      targets.flatMap((t) => [assetName(t), `${assetName(t)}.sha256`, `loadgate-${t}.debug.tar.gz`, `loadgate-${t}.debug.tar.gz.sha256`])
    const linux = releaseTargets('linux', 'x64', '2.39').targets
    const all = release('x86_64-unknown-linux-gnu', 'x86_64-unknown-linux-musl', 'aarch64-unknown-linux-gnu', 'x86_64-apple-darwin')
    expect(pickAsset(linux, all)).toEqual({ target: 'x86_64-unknown-linux-gnu', asset: 'loadgate-x86_64-unknown-linux-gnu.tar.gz' })
    expect(pickAsset(linux, release('x86_64-unknown-linux-musl'))).toEqual({
      target: 'x86_64-unknown-linux-musl',
      asset: 'loadgate-x86_64-unknown-linux-musl.tar.gz'
    })
    // An old glibc never gets the gnu build, even when the release has it.
    expect(pickAsset(releaseTargets('linux', 'x64', '2.31').targets, all)?.target).toBe('x86_64-unknown-linux-musl')
    expect(pickAsset(releaseTargets('win32', 'arm64', undefined).targets, release('x86_64-pc-windows-msvc'))?.asset).toBe(
      'loadgate-x86_64-pc-windows-msvc.zip'
    )
    // Only debug info, an archive without its checksum, another platform, nothing: no pick.
    expect(pickAsset(linux, ['loadgate-x86_64-unknown-linux-gnu.debug.tar.gz', 'loadgate-x86_64-unknown-linux-gnu.debug.tar.gz.sha256'])).toBeUndefined()
    expect(pickAsset(linux, ['loadgate-x86_64-unknown-linux-gnu.tar.gz'])).toBeUndefined()
    expect(pickAsset(linux, release('aarch64-apple-darwin'))).toBeUndefined()
    expect(pickAsset(['x86_64-pc-windows-msvc'], ['loadgate-x86_64-pc-windows-msvc.debug.zip', 'loadgate-x86_64-pc-windows-msvc.debug.zip.sha256'])).toBeUndefined()
    expect(pickAsset([], all)).toBeUndefined()
  })

  // Every target some runner takes (the table above, which covers each branch of releaseTargets).
  const taken = new Set(runners.flatMap(([, , , targets]) => targets))
  const root = fileURLToPath(new URL('../../..', import.meta.url))

  it('docs/action.md lists exactly the targets the runners take', () => {
    const docs = readFileSync(join(root, 'docs', 'action.md'), 'utf8')
    const section = docs.slice(docs.indexOf('## Getting the engine'), docs.indexOf('\n## ', docs.indexOf('## Getting the engine') + 1))
    const listed = new Set([...section.matchAll(/`((?:x86_64|aarch64)-[a-z0-9_-]+)`/g)].map((m) => m[1]))
    expect(listed).toEqual(taken)
  })

  it('the release workflow builds exactly the targets the runners take', () => {
    const workflow = readFileSync(join(root, '.github', 'workflows', 'release.yml'), 'utf8')
    const built = [...workflow.matchAll(/^\s*- \{ target: ([^,\s]+),/gm)].map((m) => m[1])
    expect(new Set(built)).toEqual(taken)
  })

  it('reads sha256sum output', () => {
    const hex = 'ab'.repeat(32)
    expect(parseChecksum(`${hex}  loadgate-x86_64-unknown-linux-gnu.tar.gz\n`)).toBe(hex)
    expect(parseChecksum(hex.toUpperCase())).toBe(hex)
    expect(() => parseChecksum('<html>Not Found</html>')).toThrow(/not a SHA-256 checksum file/)
  })

  it("reads the action's own engine version from engine/Cargo.toml", () => {
    expect(sourceVersion(root)).toMatch(/^\d+\.\d+\.\d+/)
  })
})

describe('builtExecutable', () => {
  it("finds the engine binary in cargo's JSON messages, wherever the target folder is", () => {
    const artifact = (name: string, kind: string, executable: string | null) =>
      JSON.stringify({ reason: 'compiler-artifact', target: { name, kind: [kind] }, executable, filenames: [] })
    expect(builtExecutable(artifact('loadgate', 'bin', '/cache/cargo-target/fallback/loadgate'))).toBe('/cache/cargo-target/fallback/loadgate')
    expect(builtExecutable(artifact('loadgate', 'lib', null))).toBeUndefined()
    expect(builtExecutable(artifact('regex', 'lib', null))).toBeUndefined()
    expect(builtExecutable(JSON.stringify({ reason: 'build-finished', success: true }))).toBeUndefined()
    expect(builtExecutable('   Compiling loadgate v0.1.0')).toBeUndefined()
    expect(builtExecutable('{not json')).toBeUndefined()
  })
})

describe('engineMessage', () => {
  it("keeps the last lines of the engine's own message, from its error line on", () => {
    const stderr = Array.from({ length: 30 }, (_, i) => `loadgate: line ${i}`).join('\n') + '\n'
    expect(engineMessage(stderr, 2)).toBe('loadgate: line 28\nloadgate: line 29')
    const error = 'loadgate: error: the spec is invalid:\nspec.yaml:3:5: load.connections: 0 is less than 1\n'
    expect(engineMessage(`loadgate: validating\n${error}`)).toBe(error.trimEnd())
  })

  it("never quotes the service's output, which shares the engine's standard error", () => {
    const stderr = 'GITHUB_TOKEN=ghs_secret\nloadgate: starting service `./server`\nINPUT_GITHUB-TOKEN=ghs_secret\n'
    expect(engineMessage(stderr)).toBe('loadgate: starting service `./server`')
    expect(engineMessage('a service crashed\n')).toBe('')
  })
})
