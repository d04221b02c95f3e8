//! Reports: one renderer per format. Each reads only the result artifact.

pub mod console;
pub mod progress;
