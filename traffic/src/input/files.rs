//! Operands to inputs: a folder stands for the log files in it, and the files of one
//! rotated log (`x.log.2.gz`, `x.log.1`, `x.log`; or `x2.log`, `x1.log`, `x.log`) are read as
//! one stream, oldest first.
//!
//! A folder's files are those whose name matches one of the globs ([`DEFAULT_GLOBS`]
//! unless the product gives its own: `rpcscan --glob`), not hidden (no leading `.`), regular
//! files (or links to them), not in subfolders. Files are then grouped into streams by
//! name: `NAME.N` (a number after the name, before any `.gz` / `.zst`) and, when `NAME.EXT`
//! is there too, `NAMEN.EXT`, are the rotated files of `NAME` / `NAME.EXT`. A stream's files
//! are put in time order by the first timestamp each one holds (the log lines' own, read
//! through the same extraction as the scan: `--line-format` group `ts`, `--ts-field`, proxy
//! and gateway logs), when every one of them has one; otherwise in rotation order, oldest
//! first: the highest number first, the unnumbered file last (logrotate's and
//! electron-log's numbering). A stream takes the place of its first file among the
//! operands; other operands keep their order.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::compressed::Codec;
use super::extract::parse_time;
use super::{Input, Settings, Source};
use crate::glob::glob;

/// The files a folder stands for when no glob is given: logs, NDJSON and JSON Lines,
/// rotated (`x.log.1`) or compressed (`x.log.gz`) too.
pub const DEFAULT_GLOBS: [&str; 3] = ["*.log*", "*.ndjson*", "*.jsonl*"];

/// Bytes read from a file's start to find its first timestamp.
const TIME_PROBE: usize = 64 * 1024;

/// Lines of a file's start looked at for a timestamp.
const TIME_LINES: usize = 64;

/// The inputs `operands` stand for (none: stdin; `-`: stdin): folders expanded to the
/// files in them that match one of `globs` ([`DEFAULT_GLOBS`] when empty), and rotated
/// files of one log put in order, as one stream (see the module's notes). `settings` says
/// how log lines hold their timestamps. A folder that cannot be listed, or in which no file
/// matches, becomes an [`Input::Error`], reported when it is read.
pub fn expand(operands: &[PathBuf], globs: &[String], settings: &Settings) -> Vec<Input> {
    let default: Vec<String>;
    let globs = if globs.is_empty() {
        default = DEFAULT_GLOBS.iter().map(|g| (*g).to_owned()).collect();
        &default
    } else {
        globs
    };
    let mut inputs = Vec::new();
    for input in Input::from_args(operands) {
        let Input::Path(path) = &input else {
            inputs.push(input);
            continue;
        };
        if !path.is_dir() {
            inputs.push(input);
            continue;
        }
        match folder(path, globs) {
            Ok(files) if files.is_empty() => inputs.push(Input::Error {
                path: path.clone(),
                error: format!("no file in this folder matches {}", globs.join(", ")),
            }),
            Ok(files) => inputs.extend(files.into_iter().map(Input::Path)),
            Err(e) => inputs.push(Input::Error { path: path.clone(), error: e.to_string() }),
        }
    }
    in_streams(inputs, settings)
}

/// The files of `dir` matching a glob, by name.
fn folder(dir: &Path, globs: &[String]) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || !globs.iter().any(|g| glob(g.as_bytes(), name.as_bytes())) {
            continue;
        }
        let path = entry.path();
        // Links followed: a link to a log is a log.
        if path.metadata().is_ok_and(|m| m.is_file()) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// A file's stream and its place in it: the stream's name, and its rotation number (0 for
/// the current file, higher for older ones).
fn rotation(name: &str) -> (String, u64) {
    let plain =
        [".gz", ".zst", ".zstd"].iter().find_map(|ext| name.strip_suffix(ext)).unwrap_or(name);
    if let Some((base, n)) = plain.rsplit_once('.') {
        if !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = n.parse::<u64>() {
                return (base.to_owned(), n.saturating_add(1));
            }
        }
    }
    (plain.to_owned(), 0)
}

/// `NAMEN.EXT` → (`NAME.EXT`, N): the electron-log style of rotation, when it applies.
fn numbered_stem(name: &str) -> Option<(String, u64)> {
    let (stem, ext) = name.rsplit_once('.')?;
    let digits = stem.len() - stem.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits == stem.len() {
        return None;
    }
    let (head, n) = stem.split_at(stem.len() - digits);
    Some((format!("{head}.{ext}"), n.parse::<u64>().ok()?.saturating_add(1)))
}

/// (folder, stream name) of every path among `inputs`, and its rotation number.
#[allow(clippy::type_complexity)]
fn keys(inputs: &[Input]) -> Vec<Option<((PathBuf, String), u64)>> {
    let mut keyed: Vec<Option<((PathBuf, String), u64)>> = inputs
        .iter()
        .map(|input| {
            let Input::Path(path) = input else { return None };
            let name = path.file_name()?.to_string_lossy().into_owned();
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            let (stream, n) = rotation(&name);
            Some(((dir, stream), n))
        })
        .collect();
    // `x1.log` joins `x.log` only when `x.log` (in any rotation) is there.
    let names: std::collections::HashSet<(PathBuf, String)> =
        keyed.iter().flatten().map(|(key, _)| key.clone()).collect();
    for entry in keyed.iter_mut().flatten() {
        let ((dir, stream), n) = entry;
        if *n != 0 {
            continue;
        }
        if let Some((base, m)) = numbered_stem(stream) {
            if names.contains(&(dir.clone(), base.clone())) {
                *entry = ((dir.clone(), base), m);
            }
        }
    }
    keyed
}

/// The stream of each input: the files of one rotated log share one; every other input
/// (another log, standard input) is its own. All 0 when there is one stream; else numbered
/// from 1 in order of first appearance (so that none is the unscoped id space of a
/// single log).
pub(super) fn streams(inputs: &[Input]) -> Vec<u32> {
    let mut numbers: HashMap<(PathBuf, String), u32> = HashMap::new();
    let mut next = 1u32;
    let streams: Vec<u32> = keys(inputs)
        .into_iter()
        .map(|key| {
            let mut new = || {
                let n = next;
                next = next.saturating_add(1);
                n
            };
            match key {
                Some((key, _)) => *numbers.entry(key).or_insert_with(new),
                None => new(),
            }
        })
        .collect();
    if next <= 2 {
        return vec![0; streams.len()];
    }
    streams
}

/// Puts the files of each rotated log together, in order, where its first file was.
fn in_streams(inputs: Vec<Input>, settings: &Settings) -> Vec<Input> {
    let keyed = keys(&inputs);
    let mut members: HashMap<(PathBuf, String), Vec<usize>> = HashMap::new();
    for (i, key) in keyed.iter().enumerate() {
        if let Some((key, _)) = key {
            members.entry(key.clone()).or_default().push(i);
        }
    }
    let mut slots: Vec<Option<Input>> = inputs.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    for i in 0..slots.len() {
        let Some((key, _)) = &keyed[i] else {
            out.extend(slots[i].take());
            continue;
        };
        let Some(mut files) = members.remove(key) else { continue };
        if files.len() > 1 {
            // Rotation order: oldest (highest number) first, then by operand order.
            files.sort_by_key(|&j| (std::cmp::Reverse(keyed[j].as_ref().map_or(0, |k| k.1)), j));
            let times: Vec<Option<Duration>> = files
                .iter()
                .map(|&j| match &slots[j] {
                    Some(Input::Path(path)) => first_time(path, settings),
                    _ => None,
                })
                .collect();
            if times.iter().all(Option::is_some) {
                let mut timed: Vec<(Option<Duration>, usize)> =
                    times.into_iter().zip(files.iter().copied()).collect();
                // Stable: equal times keep rotation order.
                timed.sort_by_key(|t| t.0);
                files = timed.into_iter().map(|t| t.1).collect();
            }
        }
        for j in files {
            out.extend(slots[j].take());
        }
    }
    out
}

/// The first timestamp in the first lines of the file at `path` (decompressed if need be),
/// read as the scan would read it.
pub(super) fn first_time(path: &Path, settings: &Settings) -> Option<Duration> {
    let file = File::open(path).ok()?;
    let reader: Box<dyn Read> = match Codec::of_file(path) {
        Some(codec) => codec.decoder(file).ok()?,
        None => Box::new(file),
    };
    let mut head = Vec::with_capacity(TIME_PROBE);
    reader.take(TIME_PROBE as u64).read_to_end(&mut head).ok()?;
    let source = std::sync::Arc::new(Source::new(String::new(), super::Notes::collect()));
    let source = source.with_extraction(settings, &head);
    let extract = source.extract.as_deref()?;
    let mut scratch = extract.scratch();
    for line in head.split(|&b| b == b'\n').take(TIME_LINES) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(time) =
            extract.line(line, &mut scratch).ok().and_then(|f| f.ts).and_then(parse_time)
        {
            return Some(time);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_names_name_their_stream_and_age() {
        assert_eq!(rotation("x.log"), ("x.log".to_owned(), 0));
        assert_eq!(rotation("x.log.1"), ("x.log".to_owned(), 2));
        assert_eq!(rotation("x.log.12.gz"), ("x.log".to_owned(), 13));
        assert_eq!(rotation("x.log.zst"), ("x.log".to_owned(), 0));
        assert_eq!(rotation("v1.2"), ("v1".to_owned(), 3));
        assert_eq!(rotation(".1"), (".1".to_owned(), 0));
        assert_eq!(numbered_stem("mcp-server-a3.log"), Some(("mcp-server-a.log".to_owned(), 4)));
        assert_eq!(numbered_stem("mcp.log"), None);
        assert_eq!(numbered_stem("42.log"), None);
    }

    #[test]
    fn streams_are_read_oldest_first_where_their_first_file_was() {
        let settings = super::super::testing::settings(1 << 20);
        let paths = [
            "a.ndjson",
            "d/x.log",
            "d/x.log.1",
            "d/x.log.2.gz",
            "b.ndjson",
            "d/y1.log",
            "d/y.log",
            "d/z1.log",
            "d/x.log.10",
        ];
        let operands: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        // No such files: no timestamps, rotation order.
        let got: Vec<String> = expand(&operands, &[], &settings)
            .iter()
            .map(|i| match i {
                Input::Path(p) => p.display().to_string(),
                _ => panic!("{i:?}"),
            })
            .collect();
        let want = [
            "a.ndjson",
            "d/x.log.10",
            "d/x.log.2.gz",
            "d/x.log.1",
            "d/x.log",
            "b.ndjson",
            "d/y1.log",
            "d/y.log",
            "d/z1.log",
        ];
        assert_eq!(got, want);
    }
}
