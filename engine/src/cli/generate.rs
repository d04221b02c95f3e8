//! What the command line generates about itself: shell completions (clap_complete), manual
//! pages (clap_mangen) and the `loadgate version` text. The committed copies
//! (`completions/`, `docs/man/`) are checked against these functions by
//! `engine/tests/it/cli_generated.rs`.

use clap::CommandFactory;
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, roman};

use super::Cli;
use super::examples::HEADING;

/// The completion script of `loadgate` for `shell`, as `loadgate completions SHELL` prints it.
pub fn completion(shell: Shell) -> String {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "loadgate", &mut script);
    String::from_utf8(script).expect("clap_complete writes UTF-8")
}

/// The file name of `shell`'s committed completion script (in `completions/`): clap_complete's
/// (`loadgate.bash`, `_loadgate` for zsh, `loadgate.fish`, `_loadgate.ps1`, `loadgate.elv`).
pub fn completion_file(shell: Shell) -> String {
    clap_complete::Generator::file_name(&shell, "loadgate")
}

/// One manual page (section 1): its file name (`loadgate-history-show.1`) and its roff text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManPage {
    /// `loadgate.1`, `loadgate-run.1`, `loadgate-history-add.1`, …
    pub file_name: String,
    /// The page, as `man -l` reads it.
    pub roff: String,
}

/// No command of this name: `loadgate man` was given words that name no (sub)command.
#[derive(Debug, thiserror::Error)]
#[error("no command `loadgate {0}`: `loadgate --help` lists the commands")]
pub struct NoSuchCommand(String);

/// The whole command line, built (every subcommand knows its full name), without clap's
/// `help` subcommand: the source of the manual pages.
fn built() -> clap::Command {
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    command
}

/// The manual page of `loadgate WORDS...` (`[]`: of loadgate itself; `["history", "show"]`:
/// `loadgate-history-show(1)`), as `loadgate man WORDS...` prints it.
pub fn man_page(words: &[String]) -> Result<ManPage, NoSuchCommand> {
    let mut command = built();
    for word in words {
        command = command
            .find_subcommand(word)
            .filter(|sub| !sub.is_hide_set())
            .cloned()
            .ok_or_else(|| NoSuchCommand(words.join(" ")))?;
    }
    Ok(page(command))
}

/// Every manual page: loadgate's, then each command's and subcommand's, depth first.
pub fn man_pages() -> Vec<ManPage> {
    fn walk(command: clap::Command, pages: &mut Vec<ManPage>) {
        let subcommands: Vec<clap::Command> = command
            .get_subcommands()
            .filter(|sub| !sub.is_hide_set())
            .cloned()
            .collect();
        pages.push(page(command));
        for sub in subcommands {
            walk(sub, pages);
        }
    }
    let mut pages = Vec::new();
    walk(built(), &mut pages);
    pages
}

/// The page of one built command: clap_mangen's sections, with the examples of its `--help`
/// as an EXAMPLES section of unfilled lines (before VERSION, where there is one), instead of
/// clap_mangen's EXTRA section, which would run them together as one paragraph.
fn page(command: clap::Command) -> ManPage {
    let examples = command
        .get_after_help()
        .map(ToString::to_string)
        .unwrap_or_default();
    // Every page names loadgate's version as its source (clap_mangen's default: the
    // subcommand's own name and version, `show `).
    let man = Man::new(command.after_help(None::<&'static str>))
        .source(format!("loadgate {}", env!("CARGO_PKG_VERSION")))
        .manual("loadgate manual");
    let mut out = Vec::new();
    man.render(&mut out).expect("rendering into memory");
    let mut roff = String::from_utf8(out).expect("clap_mangen writes UTF-8");
    let section = examples_section(&examples);
    match roff.find("\n.SH VERSION\n") {
        Some(at) => roff.insert_str(at + 1, &section),
        None => roff.push_str(&section),
    }
    ManPage {
        file_name: man.get_filename(),
        roff,
    }
}

/// `.SH EXAMPLES` and the lines after the `Examples:` heading, unfilled (`.nf`), each escaped
/// as roff text; empty when there are none.
fn examples_section(help: &str) -> String {
    let Some(text) = help.strip_prefix(HEADING) else {
        return String::new();
    };
    let mut roff = Roff::new();
    roff.control("SH", ["EXAMPLES"]).control("nf", []);
    for line in text.trim_matches('\n').lines() {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    // Without the preamble that every rendering starts with: the page has it already.
    let preamble = Roff::new().render();
    let rendered = roff.render();
    rendered
        .strip_prefix(&preamble)
        .unwrap_or(&rendered)
        .to_string()
}

/// What `loadgate version` prints: `--version`'s line, then the commit, target and compiler
/// of the build (`unknown` when the build could not tell), for a bug report.
pub fn version() -> String {
    format!(
        "loadgate {}\ncommit: {}\ntarget: {}\nrustc: {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("LOADGATE_BUILD_COMMIT"),
        env!("LOADGATE_BUILD_TARGET"),
        env!("LOADGATE_BUILD_RUSTC"),
    )
}
