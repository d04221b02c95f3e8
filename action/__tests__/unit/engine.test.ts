import { describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { assetName, engineMessage, parseChecksum, releaseTarget, sourceVersion } from '../../src/engine.js'

describe('release binaries', () => {
  it('maps each runner the release workflow builds for to its target and asset', () => {
    expect(releaseTarget('linux', 'x64')).toBe('x86_64-unknown-linux-gnu')
    expect(releaseTarget('linux', 'arm64')).toBe('aarch64-unknown-linux-gnu')
    expect(releaseTarget('darwin', 'arm64')).toBe('aarch64-apple-darwin')
    expect(releaseTarget('darwin', 'x64')).toBe('x86_64-apple-darwin')
    expect(releaseTarget('win32', 'x64')).toBe('x86_64-pc-windows-msvc')
    expect(releaseTarget('freebsd', 'x64')).toBeUndefined()
    expect(assetName('x86_64-unknown-linux-gnu')).toBe('loadgate-x86_64-unknown-linux-gnu.tar.gz')
    expect(assetName('x86_64-pc-windows-msvc')).toBe('loadgate-x86_64-pc-windows-msvc.zip')
  })

  it('reads sha256sum output', () => {
    const hex = 'ab'.repeat(32)
    expect(parseChecksum(`${hex}  loadgate-x86_64-unknown-linux-gnu.tar.gz\n`)).toBe(hex)
    expect(parseChecksum(hex.toUpperCase())).toBe(hex)
    expect(() => parseChecksum('<html>Not Found</html>')).toThrow(/not a SHA-256 checksum file/)
  })

  it("reads the action's own engine version from engine/Cargo.toml", () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url))
    expect(sourceVersion(root)).toMatch(/^\d+\.\d+\.\d+/)
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
