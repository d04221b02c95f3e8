//! The flags of `loadgate history add|list|show` and their options
//! (`crate::options::HistoryOptions`).

use std::path::PathBuf;

use super::examples::{self, examples};
use crate::options::{HistoryOptions, HistoryQuery};
use crate::report::changes::ChangeFormat;
use crate::result::SourceInfo;

/// `loadgate history COMMAND`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct HistoryArgs {
    #[command(subcommand)]
    pub(crate) command: HistoryCommand,
}

/// What `loadgate history` does.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum HistoryCommand {
    /// Add a result file to the history folder DIR and print the stored file's path
    /// (`DIR/<spec>/<started_at>-<commit>-<hash>.json`); adding it again is a no-op.
    #[command(after_help = examples(examples::HISTORY_ADD))]
    Add {
        /// The history folder (created when missing).
        dir: PathBuf,
        /// The result file (JSON) of `loadgate run --out`.
        result: PathBuf,
        /// The measured code's branch, instead of the one the result records.
        #[arg(long, value_name = "B")]
        branch: Option<String>,
        /// The measured code's commit (full SHA), instead of the one the result records.
        #[arg(long, value_name = "SHA")]
        commit: Option<String>,
        /// A web page of the commit, instead of the one the result records.
        #[arg(long, value_name = "URL")]
        commit_url: Option<String>,
    },
    /// List the results of a history (or of any folders and files of results), in time
    /// order: time, spec, branch, commit, runner type, file.
    #[command(after_help = examples(examples::HISTORY_LIST))]
    List {
        #[command(flatten)]
        query: QueryFlags,
    },
    /// The change-point report: per spec and runner type, each change point in the series of
    /// p50, p95, p99, throughput and error rate per scope (when, the commit range, by how much
    /// with its 95% interval), new ones first, and the significant drifts. Exit 0 whatever it
    /// finds.
    #[command(after_help = examples(examples::HISTORY_SHOW))]
    Show {
        #[command(flatten)]
        query: QueryFlags,
        /// A change point is new when it is within the last N results of its spec and runner
        /// type.
        #[arg(long, value_name = "N", default_value_t = 5)]
        recent: usize,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: ChangeFormat,
        /// Write the report here instead of stdout (whole or not at all).
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Which results `list` and `show` read.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct QueryFlags {
    /// The history folder (or other folders and files of results, read recursively; files
    /// that are not results are skipped with a warning).
    #[arg(required = true, value_name = "DIR")]
    pub(crate) dirs: Vec<PathBuf>,
    /// Only the results of the spec of this name.
    #[arg(long, value_name = "NAME")]
    pub(crate) spec: Option<String>,
    /// Only the results of this branch.
    #[arg(long, value_name = "B")]
    pub(crate) branch: Option<String>,
}

impl From<QueryFlags> for HistoryQuery {
    fn from(flags: QueryFlags) -> Self {
        HistoryQuery {
            dirs: flags.dirs,
            spec: flags.spec,
            branch: flags.branch,
        }
    }
}

impl From<HistoryArgs> for HistoryOptions {
    fn from(args: HistoryArgs) -> Self {
        match args.command {
            HistoryCommand::Add {
                dir,
                result,
                branch,
                commit,
                commit_url,
            } => HistoryOptions::Add {
                dir,
                result,
                source: SourceInfo {
                    branch,
                    commit,
                    commit_url,
                },
            },
            HistoryCommand::List { query } => HistoryOptions::List(query.into()),
            HistoryCommand::Show {
                query,
                recent,
                format,
                output,
            } => HistoryOptions::Show {
                query: query.into(),
                recent,
                format,
                output,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `loadgate history …` as its own command line: `History` alone, without the rest of the
    /// CLI (which lives above this file).
    #[derive(Debug, Parser)]
    #[command(name = "loadgate")]
    enum Top {
        History(HistoryArgs),
    }

    fn parse(line: &[&str]) -> Result<HistoryArgs, clap::Error> {
        let Top::History(args) = Top::try_parse_from(std::iter::once(&"loadgate").chain(line))?;
        Ok(args)
    }

    fn options(line: &[&str]) -> HistoryOptions {
        parse(line).unwrap().into()
    }

    #[test]
    fn history_flags_make_their_options() {
        let HistoryOptions::Add {
            dir,
            result,
            source,
        } = options(&[
            "history", "add", "h", "r.json", "--commit", "abc", "--branch", "main",
        ])
        else {
            panic!("not add");
        };
        assert_eq!((dir, result), ("h".into(), "r.json".into()));
        assert_eq!(source.commit.as_deref(), Some("abc"));
        assert_eq!(source.branch.as_deref(), Some("main"));
        assert_eq!(source.commit_url, None);

        let HistoryOptions::Show {
            query,
            recent,
            format,
            output,
        } = options(&["history", "show", "a", "b", "--format", "md", "-o", "x.md"])
        else {
            panic!("not show");
        };
        assert_eq!(query.dirs, [PathBuf::from("a"), PathBuf::from("b")]);
        assert_eq!((recent, format), (5, ChangeFormat::Markdown));
        assert_eq!(output, Some("x.md".into()));

        let HistoryOptions::List(query) = options(&["history", "list", "h", "--spec", "shop"])
        else {
            panic!("not list");
        };
        assert_eq!(query.spec.as_deref(), Some("shop"));
        assert!(parse(&["history", "list"]).is_err());
    }
}
