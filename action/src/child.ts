/**
 * What the action's child processes see. The engine, the service it starts, the paired mode's
 * `build` command, git and cargo run code of the pull request, so they get the action's
 * environment less what would let that code act as the workflow: the action's inputs
 * (`INPUT_*`, the token among them), the runner's `ACTIONS_*` (the artifact and cache
 * services' token, the OIDC request token), `GITHUB_TOKEN`, any variable holding the token's
 * value, and the runner's file commands (`GITHUB_ENV`, `GITHUB_PATH`, `GITHUB_OUTPUT`,
 * `GITHUB_STATE`, `GITHUB_STEP_SUMMARY`), through which a process could change later steps.
 * The `pass-env` input lets named variables through all the same.
 *
 * What a child prints is shown in the step's log (the runner masks registered secrets there)
 * and kept whole only in the artifact's `engine.log`, with the secrets the action knows masked;
 * annotations and comments quote only the engine's own `loadgate:` lines.
 */

/** The runner's file commands: files whose content changes this or later steps. */
const FILE_COMMANDS = ['GITHUB_ENV', 'GITHUB_PATH', 'GITHUB_OUTPUT', 'GITHUB_STATE', 'GITHUB_STEP_SUMMARY']

type Env = Record<string, string | undefined>

/**
 * The environment for child processes: `env` without the action's inputs, `ACTIONS_*`,
 * `GITHUB_TOKEN`, the file commands and any variable whose value is one of `secrets`, but
 * with every name in `passEnv` kept as it is.
 */
export function childEnv(env: Env, passEnv: readonly string[], secrets: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (passEnv.includes(name) || !withheld(name, value, secrets)) out[name] = value
  }
  return out
}

function withheld(name: string, value: string, secrets: readonly string[]): boolean {
  const upper = name.toUpperCase()
  return (
    upper.startsWith('INPUT_') ||
    upper.startsWith('ACTIONS_') ||
    upper === 'GITHUB_TOKEN' ||
    FILE_COMMANDS.includes(upper) ||
    secrets.includes(value)
  )
}

/**
 * The secrets the action knows: the token it was given, `GITHUB_TOKEN`, and the runner's
 * `ACTIONS_*` tokens. Values shorter than 8 characters are left out (masking `1` would hide
 * every digit of a log).
 */
export function knownSecrets(env: Env, token: string): string[] {
  const values = [token, env.GITHUB_TOKEN]
  for (const [name, value] of Object.entries(env)) {
    if (/^ACTIONS_.*TOKEN/i.test(name)) values.push(value)
  }
  return [...new Set(values.filter((v): v is string => v !== undefined && v.length >= 8))]
}

/** `text` with each of `secrets` replaced by `***`, as the runner masks its log. */
export function mask(text: string, secrets: readonly string[]): string {
  let out = text
  for (const s of secrets) out = out.split(s).join('***')
  return out
}

/** What every child process of the action gets, and what is masked in what they print. */
export interface Children {
  /** The environment (`childEnv`). */
  env: Record<string, string>
  /** The secrets the action knows (`knownSecrets`), masked in `engine.log` and messages. */
  secrets: string[]
}

/** The children's environment and secrets from the action's environment, its token and `pass-env`. */
export function children(env: Env, token: string, passEnv: readonly string[]): Children {
  const secrets = knownSecrets(env, token)
  return { env: childEnv(env, passEnv, secrets), secrets }
}
