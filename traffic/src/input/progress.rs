//! The progress bar of a long run: drawn with `indicatif` when the engine's `progress`
//! feature is on (the `rpcscan` binary turns it on), nothing at all when it is off (the
//! Python package: no terminal of its own).

#[cfg(feature = "progress")]
use std::io::{self, IsTerminal};

#[cfg(feature = "progress")]
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Input;

/// Inputs at least this large get a progress bar (when stderr is a terminal).
#[cfg(feature = "progress")]
const PROGRESS_THRESHOLD: u64 = 256 * 1024 * 1024;

/// A progress bar on stderr, only for a terminal, a large input of known size, and when
/// the output does not go to the same screen as it is produced.
#[cfg(feature = "progress")]
pub(super) struct Progress {
    bar: Option<ProgressBar>,
}

/// No progress bar without the `progress` feature.
#[cfg(not(feature = "progress"))]
pub(super) struct Progress;

#[cfg(not(feature = "progress"))]
impl Progress {
    pub(super) fn new(_inputs: &[Input], _allowed: bool) -> Progress {
        Progress
    }

    pub(super) fn inc(&self, _n: u64) {}

    pub(super) fn finish(&self) {}
}

#[cfg(feature = "progress")]
impl Progress {
    pub(super) fn new(inputs: &[Input], allowed: bool) -> Progress {
        if !allowed || !io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let total: u64 = inputs
            .iter()
            .filter_map(|input| match input {
                Input::Path(path) => std::fs::metadata(path).ok(),
                // A followed file never ends: no bar.
                Input::Stdin | Input::Bytes(_) | Input::Follow(_) | Input::Error { .. } => None,
            })
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        if total < PROGRESS_THRESHOLD {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style);
        }
        Progress { bar: Some(bar) }
    }

    pub(super) fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
