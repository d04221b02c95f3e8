//! History: results kept in a folder over many runs (`loadgate history add|list|show`), read
//! back in time order, and followed as series — one metric of one scope over the comparable
//! results of one spec — whose change points and drift the nightly report names.
//!
//! - `store.rs`: the folder's layout, [`add`] (written whole, idempotent), [`read`] and
//!   [`entries`] (any folder of result files, recursively);
//! - `series.rs`: [`series`], the series of a set of results with their change points
//!   (E-Divisive means, `stats::changepoint`) and the drift of their current segment
//!   (`stats::trend`);
//! - `changes.rs`: [`changes`], the change-point report of `loadgate history show`: change
//!   points of one spec and runner type at the same result gathered into one event, the new
//!   ones (within the last N results) first.
//!
//! Docs: docs/history.md.

mod changes;
mod series;
mod store;

pub(crate) use changes::{
    Change, ChangeEvent, ChangeReport, Commit, DriftChange, GroupChanges, changes,
};
pub(crate) use series::{Point, Series, SeriesMetric, series};
pub(crate) use store::{Entry, add, entries, read};
