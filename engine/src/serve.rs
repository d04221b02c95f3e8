//! `loadgate serve`: the built-in test target (hyper), shaped by query parameters.

use crate::cli::ServeArgs;

/// Serves until the process is stopped.
pub fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let _ = args;
    todo!("helper: built-in target")
}
