//! The examples at the end of every command's help, and `loadgate version`: each command's
//! `--help` (and `-h`) ends with an `Examples:` section whose command lines parse as loadgate's
//! command line, use that command, and name only files of `examples/` that exist.

use std::path::Path;
use std::process::Command as Process;

use clap::{CommandFactory, Parser};
use loadgate::cli::Cli;

/// Every command as its words (`[]`, `["run"]`, `["history", "show"]`) with its clap command,
/// clap's own `help` subcommand left out.
fn commands() -> Vec<(Vec<String>, clap::Command)> {
    fn walk(
        words: Vec<String>,
        command: clap::Command,
        all: &mut Vec<(Vec<String>, clap::Command)>,
    ) {
        for sub in command
            .get_subcommands()
            .filter(|sub| sub.get_name() != "help")
        {
            let mut path = words.clone();
            path.push(sub.get_name().to_string());
            walk(path, sub.clone(), all);
        }
        all.push((words, command));
    }
    let mut all = Vec::new();
    walk(Vec::new(), Cli::command(), &mut all);
    all
}

/// The lines after `Examples:` in a rendered help, when it has that section.
fn example_lines(help: &str) -> Option<Vec<String>> {
    let (_, examples) = help.split_once("\nExamples:\n")?;
    Some(examples.lines().map(str::to_string).collect())
}

/// The `loadgate ...` commands of an example line, as words: the line split like a shell
/// splits it, at `|`, `&`, `&&`, `||` and `;`, each command up to its first redirection.
fn loadgate_commands(line: &str) -> Vec<Vec<String>> {
    let words = shell_words::split(line.trim()).expect("an example line splits like a shell's");
    words
        .split(|w| ["|", "&", "&&", "||", ";"].contains(&w.as_str()))
        .map(|command| {
            let end = command
                .iter()
                .position(|w| [">", ">>", "<"].contains(&w.as_str()))
                .unwrap_or(command.len());
            command[..end].to_vec()
        })
        .filter(|command| command.first().map(String::as_str) == Some("loadgate"))
        .collect()
}

#[test]
fn cli_help_of_every_command_ends_with_runnable_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let all = commands();
    assert!(all.len() >= 19, "{} commands", all.len());
    for (words, mut command) in all {
        let name = format!("loadgate {}", words.join(" "));
        let long = command.render_long_help().to_string();
        let short = command.render_help().to_string();
        let lines =
            example_lines(&long).unwrap_or_else(|| panic!("{name} --help: no Examples:\n{long}"));
        assert_eq!(example_lines(&short).as_ref(), Some(&lines), "{name} -h");
        let commands: Vec<Vec<String>> = lines.iter().flat_map(|l| loadgate_commands(l)).collect();
        assert!(
            commands.iter().any(|c| c[1..].starts_with(&words)),
            "{name}: no example runs it: {lines:#?}"
        );
        for line in &lines {
            assert!(
                line.is_empty()
                    || line.starts_with("  # ")
                    || (line.starts_with("  ") && !line.starts_with("   ")),
                "{name}: an example line is a comment or a command indented by 2: {line:?}"
            );
            if line.starts_with("  #") {
                continue;
            }
            for word in line
                .split_whitespace()
                .filter(|w| w.starts_with("examples/"))
            {
                assert!(root.join(word).exists(), "{name}: {word} does not exist");
            }
        }
        for example in commands {
            // `loadgate help COMMAND` parses as a request for that help.
            match Cli::try_parse_from(&example) {
                Ok(_) => {}
                Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {}
                Err(error) => panic!("{name}: `{}` does not parse:\n{error}", example.join(" ")),
            }
        }
    }
}

/// The binary prints the examples too (`after_help` reaches the help that users see).
#[test]
fn cli_help_printed_by_the_binary_ends_with_examples() {
    let out = Process::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["history", "add", "--help"])
        .output()
        .expect("loadgate runs");
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    let examples = example_lines(&help).unwrap_or_else(|| panic!("{help}"));
    assert!(
        examples
            .iter()
            .any(|l| l.starts_with("  loadgate history add history/ result.json")),
        "{help}"
    );
}

/// `loadgate version`: `--version`'s line, then the commit, target and compiler of the build.
#[test]
fn cli_version_says_what_a_bug_report_needs() {
    let run = |arg: &str| {
        let out = Process::new(env!("CARGO_BIN_EXE_loadgate"))
            .arg(arg)
            .output()
            .expect("loadgate runs");
        assert_eq!(out.status.code(), Some(0), "{arg}");
        String::from_utf8(out.stdout).unwrap()
    };
    let short = run("--version");
    assert_eq!(short, format!("loadgate {}\n", env!("CARGO_PKG_VERSION")));
    let long = run("version");
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(lines.len(), 4, "{long}");
    assert_eq!(format!("{}\n", lines[0]), short);
    let commit = lines[1].strip_prefix("commit: ").expect(&long);
    let sha = commit.strip_suffix(" (modified)").unwrap_or(commit);
    assert!(
        sha == "unknown" || sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
        "{long}"
    );
    // A build in a git checkout knows its commit (`git` is on every machine that builds here).
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.git")
        .exists();
    assert!(!checkout || sha != "unknown", "{long}");
    let target = lines[2].strip_prefix("target: ").expect(&long);
    assert!(
        target.starts_with(std::env::consts::ARCH) && target.contains(std::env::consts::OS),
        "{long}"
    );
    assert!(lines[3].starts_with("rustc: rustc 1."), "{long}");
    assert_eq!(long, loadgate::cli::version());
}
