//! The committed completion scripts (`completions/`) and manual pages (`docs/man/`) are what
//! the binary generates (`loadgate completions SHELL`, `loadgate man`), and the shells accept
//! the scripts: bash and fish complete loadgate's commands with them, zsh parses its own.
//!
//! bash, zsh and fish missing is an error, not a skip: CI installs them (`apt-get install zsh
//! fish`). `LOADGATE_REGENERATE=1` rewrites the committed files instead of comparing them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use loadgate::cli::{Shell, completion, completion_file, man_page, man_pages};

const REGENERATE: &str =
    "LOADGATE_REGENERATE=1 cargo test -p loadgate --test it -- cli_generated_files";

const SHELLS: [Shell; 5] = [
    Shell::Bash,
    Shell::Zsh,
    Shell::Fish,
    Shell::PowerShell,
    Shell::Elvish,
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every generated file: its path under the repository root and its text.
fn generated() -> Vec<(PathBuf, String)> {
    let completions = SHELLS.iter().map(|&shell| {
        (
            Path::new("completions").join(completion_file(shell)),
            completion(shell),
        )
    });
    let pages = man_pages()
        .into_iter()
        .map(|page| (Path::new("docs/man").join(page.file_name), page.roff));
    completions.chain(pages).collect()
}

/// The files of a folder, by their paths under the repository root.
fn committed(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(root().join(dir))
        .map(|entries| {
            entries
                .map(|e| Path::new(dir).join(e.unwrap().file_name()))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn cli_generated_files_are_current() {
    let files = generated();
    if std::env::var_os("LOADGATE_REGENERATE").is_some() {
        for dir in ["completions", "docs/man"] {
            fs::create_dir_all(root().join(dir)).unwrap();
            for stale in committed(dir)
                .iter()
                .filter(|f| !files.iter().any(|(p, _)| p == *f))
            {
                fs::remove_file(root().join(stale)).unwrap();
            }
        }
        for (path, text) in &files {
            fs::write(root().join(path), text).unwrap();
        }
        return;
    }
    let mut expected: Vec<PathBuf> = files.iter().map(|(path, _)| path.clone()).collect();
    expected.sort();
    let mut found = [committed("completions"), committed("docs/man")].concat();
    found.sort();
    assert_eq!(
        found, expected,
        "the generated files differ from the committed ones: run `{REGENERATE}`"
    );
    for (path, text) in &files {
        let on_disk = fs::read_to_string(root().join(path)).unwrap();
        assert!(
            on_disk == *text,
            "{} is stale: run `{REGENERATE}`",
            path.display()
        );
    }
}

/// The binary prints what the library generates.
#[test]
fn cli_generated_by_the_binary() {
    let print = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_loadgate"))
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, fish, _) = print(&["completions", "fish"]);
    assert_eq!((code, fish), (Some(0), completion(Shell::Fish)));
    let words = ["history".to_string(), "show".to_string()];
    let (code, page, _) = print(&["man", "history", "show"]);
    assert_eq!(
        (code, page.as_str()),
        (Some(0), man_page(&words).unwrap().roff.as_str())
    );
    assert!(page.starts_with(".ie \\n(.g .ds Aq \\(aq\n"), "{page}");
    assert!(page.contains("\n.TH loadgate-history-show 1 "), "{page}");
    assert!(page.contains("\n.SH EXAMPLES\n.nf\n"), "{page}");
    let (code, _, stderr) = print(&["man", "history", "nope"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("no command `loadgate history nope`"),
        "{stderr}"
    );
}

/// Runs a shell on a script; its stdout, or a panic with its stderr.
fn shell(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| {
            panic!("{program} is needed for this test: `apt-get install zsh fish` (CI does): {e}")
        });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} {args:?}: {stderr}");
    assert!(stderr.is_empty(), "{program} {args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cli_generated_bash_completion_completes() {
    shell("bash", &["-n", "completions/loadgate.bash"]);
    let complete = |words: &str, current: usize| {
        let script = format!(
            "source completions/loadgate.bash; COMP_WORDS=({words}); COMP_CWORD={current}; \
             COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
             _loadgate loadgate \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        shell("bash", &["-c", &script])
    };
    assert_eq!(complete("loadgate hist", 1), "history\n");
    let shells = complete("loadgate completions ''", 2);
    assert_eq!(shells, "-h\n--help\nbash\nelvish\nfish\npowershell\nzsh\n");
    let flags = complete("loadgate history show --for", 3);
    assert_eq!(flags, "--format\n");
}

#[test]
fn cli_generated_fish_completion_completes() {
    shell("fish", &["--no-execute", "completions/loadgate.fish"]);
    let complete = |line: &str| {
        let script = format!("source completions/loadgate.fish; complete -C '{line}'");
        shell("fish", &["--no-config", "-c", &script])
    };
    let commands = complete("loadgate hist");
    assert!(commands.starts_with("history\t"), "{commands}");
    let formats = complete("loadgate history show --format ");
    let names: Vec<&str> = formats
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(names, ["json", "markdown", "text"], "{formats}");
}

#[test]
fn cli_generated_zsh_completion_parses() {
    shell("zsh", &["-n", "completions/_loadgate"]);
    let script = shell(
        "zsh",
        &[
            "-f",
            "-c",
            "autoload -U compinit && compinit -u -D && source completions/_loadgate && whence -w _loadgate",
        ],
    );
    assert_eq!(script, "_loadgate: function\n");
}
