//! `loadgate history add|list|show`: the history store (`history`) and its reports
//! (`report::changes`).

use crate::compare::gate::Outcome;
use crate::options::{HistoryOptions, HistoryQuery};
use crate::{history, report};

/// `loadgate history`: adds a result and prints the stored file's path, lists the results, or
/// writes the change-point report. Passes whatever the report finds.
pub(crate) fn history(options: &HistoryOptions) -> anyhow::Result<Outcome> {
    match options {
        HistoryOptions::Add {
            dir,
            result,
            source,
        } => {
            let stored = history::add(dir, result, source)?;
            println!("{}", stored.display());
        }
        HistoryOptions::List(query) => {
            let entries = entries(query)?;
            print!("{}", report::changes::list(&entries));
        }
        HistoryOptions::Show {
            query,
            recent,
            format,
            output,
        } => {
            let results: Vec<_> = entries(query)?.into_iter().map(|e| e.result).collect();
            let series = history::series(&results, query.branch.as_deref());
            let changes = history::changes(&series, *recent);
            let text = report::changes::render(&changes, *format)?;
            report::output(&text, output.as_deref())?;
        }
    }
    Ok(Outcome::Passed)
}

/// The entries of the query's folders and files, of its spec and branch when given.
fn entries(query: &HistoryQuery) -> anyhow::Result<Vec<history::Entry>> {
    let mut entries = history::entries(&query.dirs)?;
    entries.retain(|e| {
        query.spec.as_ref().is_none_or(|s| *s == e.result.spec.name)
            && query
                .branch
                .as_ref()
                .is_none_or(|b| e.result.source.as_ref().and_then(|s| s.branch.as_ref()) == Some(b))
    });
    Ok(entries)
}
