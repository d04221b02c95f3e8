//! Where a run's code came from and what machine it ran on, beyond what the standard library
//! tells: the branch and commit (GitHub Actions' variables, else `git`), the CPU's model name.

use std::path::Path;
use std::process::Command;

use super::SourceInfo;

/// The measured code's branch, commit and commit page: GitHub Actions' variables when set
/// (`GITHUB_HEAD_REF` on a pull request, else `GITHUB_REF_NAME`; `GITHUB_SHA`;
/// `GITHUB_SERVER_URL`/`GITHUB_REPOSITORY`), else `git` in the working directory; `None`
/// when neither tells a branch or a commit. Never fails: a missing `git` is no source.
pub(crate) fn detect() -> Option<SourceInfo> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let github = var("GITHUB_SHA").map(|sha| {
        let url = var("GITHUB_SERVER_URL")
            .zip(var("GITHUB_REPOSITORY"))
            .map(|(server, repo)| format!("{server}/{repo}/commit/{sha}"));
        SourceInfo {
            branch: var("GITHUB_HEAD_REF").or_else(|| var("GITHUB_REF_NAME")),
            commit: Some(sha),
            commit_url: url,
        }
    });
    github.or_else(|| from_git(Path::new(".")))
}

/// The branch and commit that `git` tells of the checkout at `dir`; `None` outside one.
fn from_git(dir: &Path) -> Option<SourceInfo> {
    let source = SourceInfo {
        branch: git(dir, &["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD"),
        commit: git(dir, &["rev-parse", "HEAD"]),
        commit_url: None,
    };
    (source.branch.is_some() || source.commit.is_some()).then_some(source)
}

/// The trimmed output of `git ARGS` in `dir`, `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (output.status.success() && !text.is_empty()).then(|| text.to_string())
}

/// The CPU's model name: the first `model name` of `/proc/cpuinfo` (Linux; on aarch64 the
/// field may be missing); `None` elsewhere.
pub(crate) fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == "model name").then(|| value.trim().to_string())
        })
        .filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_tells_the_commit() {
        // A temporary repository with one commit on branch `trunk`: what `git` says of it is
        // the source (GitHub's variables unset for the child, as `detect` reads them first).
        let dir = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let status = Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.com")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.com")
                .status()
                .expect("git runs");
            assert!(status.success(), "git {args:?}");
        };
        run(&["init", "-q", "-b", "trunk"]);
        run(&["commit", "-q", "--allow-empty", "-m", "one"]);
        let source = from_git(dir.path()).expect("a source");
        assert_eq!(source.branch.as_deref(), Some("trunk"));
        let commit = source.commit.expect("a commit");
        assert_eq!(commit.len(), 40, "{commit}");
        assert!(commit.chars().all(|c| c.is_ascii_hexdigit()), "{commit}");
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(from_git(outside.path()), None, "no repository, no source");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn linux_names_its_cpu() {
        if std::env::consts::ARCH == "x86_64" {
            let model = cpu_model().expect("x86_64 Linux has a model name");
            assert!(!model.contains(':'), "{model}");
        }
    }
}
