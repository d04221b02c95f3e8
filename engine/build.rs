//! Records what `loadgate version` prints besides the version: the target triple, the compiler
//! and the commit the binary was built from. Each is `unknown` when it cannot be found (no git,
//! not a git checkout): the build never fails for them.
//!
//! The commit is, in order: `LOADGATE_COMMIT` (a release workflow sets it), the `sha1` that
//! `cargo package` records in `.cargo_vcs_info.json`, or `git rev-parse HEAD` with `(modified)`
//! when files of this package differ from it. The script runs again when the package's sources
//! change (they rebuild the crate anyway), not on every commit.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=Cargo.toml");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-env-changed=LOADGATE_COMMIT");
    let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let target = env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    let rustc = env::var("RUSTC")
        .ok()
        .and_then(|rustc| output(Command::new(rustc).arg("--version")))
        .unwrap_or_else(|| "unknown".into());
    let commit = env::var("LOADGATE_COMMIT")
        .ok()
        .filter(|commit| !commit.trim().is_empty())
        .or_else(|| packaged_commit(Path::new(&dir)))
        .or_else(|| git_commit(Path::new(&dir)))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=LOADGATE_BUILD_TARGET={target}");
    println!("cargo:rustc-env=LOADGATE_BUILD_RUSTC={rustc}");
    println!("cargo:rustc-env=LOADGATE_BUILD_COMMIT={commit}");
}

/// The trimmed stdout of a command that ran and exited 0, when not empty.
fn output(command: &mut Command) -> Option<String> {
    let out = command.output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// The commit of a packaged crate: `"sha1": "..."` in `.cargo_vcs_info.json`.
fn packaged_commit(dir: &Path) -> Option<String> {
    let info = std::fs::read_to_string(dir.join(".cargo_vcs_info.json")).ok()?;
    let rest = &info[info.find("\"sha1\"")? + "\"sha1\"".len()..];
    let sha1 = rest.split('"').nth(1)?;
    (!sha1.is_empty()).then(|| sha1.to_string())
}

/// `git rev-parse HEAD` in `dir`, with ` (modified)` when tracked files under `dir` differ.
fn git_commit(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| output(Command::new("git").arg("-C").arg(dir).args(args));
    let commit = git(&["rev-parse", "HEAD"])?;
    let changed = git(&["status", "--porcelain", "--untracked-files=no", "--", "."]).is_some();
    Some(if changed {
        format!("{commit} (modified)")
    } else {
        commit
    })
}
