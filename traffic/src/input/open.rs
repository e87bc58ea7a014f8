//! Opening an input and choosing its road: a regular NDJSON file is read with positioned
//! reads in parallel blocks (or memory-mapped, when the settings ask for it); anything else
//! (pipes, other framings) is streamed.

use std::fs::File;
use std::io::{self, Read, Seek};
use std::sync::Arc;

use memmap2::Mmap;
use rpcscan::frame::Framing;

use super::mapped::{Mapped, Memory};
use super::positioned::{head, Positioned};
use super::sniff::{warn_if_binary, Probe, BINARY_PROBE, SNIFF};
use super::{Input, Settings, Source};

pub(super) enum Opened {
    Mapped(Mapped),
    Positioned(Positioned),
    Stream { source: Arc<Source>, reader: Box<dyn Read + Send>, framing: Option<Framing> },
}

/// Opens an input and decides its road: positioned reads or mapped (regular NDJSON file),
/// or streamed. A
/// directory is an error ("is a directory"), not a read error at byte 0.
/// `(index, stream)`: its place among the run's inputs and its log's; `decoded`: the
/// decompressed bytes of a compressed file, streamed.
pub(super) fn open(
    input: &Input,
    (index, log): (u32, u32),
    decoded: Option<Box<dyn Read + Send>>,
    settings: &Settings,
) -> io::Result<Opened> {
    let source = Arc::new(Source {
        index,
        stream: log,
        ..Source::new(input.name(), settings.notes.clone())
    });
    if let Some(reader) = decoded {
        return Ok(stream(source, reader, settings.framing));
    }
    let file = match input {
        Input::Bytes(bytes) => {
            let data = bytes.as_ref();
            let framing = settings
                .framing
                .unwrap_or_else(|| Framing::detect(data.get(..SNIFF).unwrap_or(data)));
            if framing != Framing::Ndjson {
                return Ok(stream(source, io::Cursor::new(bytes.clone()), Some(framing)));
            }
            // Scanned in place, in parallel, as a mapped file is.
            warn_if_binary(&source, 0, data.get(..BINARY_PROBE).unwrap_or(data));
            let first = data.get(..super::sniff::FIRST_LINE).unwrap_or(data);
            let source = source.with_extraction(settings, first);
            return Ok(Opened::Mapped(Mapped {
                source,
                map: Memory::Bytes(bytes.clone()),
                start: 0,
            }));
        }
        Input::Path(path) => Some(File::open(path)?),
        Input::Error { error, .. } => return Err(io::Error::other(error.clone())),
        Input::Follow(path) => {
            let reader = super::follow::Follow::open(path)?;
            return Ok(stream(source, reader, settings.framing));
        }
        // A regular file on stdin (`rpcscan stats < big.ndjson`) is mapped too.
        Input::Stdin => stdin_file(),
    };
    if file.as_ref().is_some_and(is_dir) {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory"));
    }
    let mut file = match (file, input) {
        (Some(file), _) if is_mappable(&file) => file,
        (Some(file), Input::Path(_)) => return Ok(stream(source, file, settings.framing)),
        _ => return Ok(stream(source, io::stdin(), settings.framing)),
    };
    let start = match input {
        Input::Stdin => usize::try_from(file.stream_position()?).unwrap_or(usize::MAX),
        _ => 0,
    };
    if !settings.mmap {
        return positioned(input, source, file, start as u64, settings);
    }
    let map = map(&file)?;
    if let Input::Stdin = input {
        // Consume stdin as a read would: a second `-` sees its end, as with `cat - -`.
        file.seek(io::SeekFrom::End(0))?;
    }
    let data = map.get(start..).unwrap_or_default();
    let framing =
        settings.framing.unwrap_or_else(|| Framing::detect(data.get(..SNIFF).unwrap_or(data)));
    if framing == Framing::Ndjson {
        warn_if_binary(&source, 0, data.get(..BINARY_PROBE).unwrap_or(data));
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        let first = data.get(..super::sniff::FIRST_LINE).unwrap_or(data);
        let source = source.with_extraction(settings, first);
        return Ok(Opened::Mapped(Mapped { source, map: Memory::Map(map), start }));
    }
    // Other framings go through their decoder: stream the file from where we started.
    drop(map);
    file.seek(io::SeekFrom::Start(start as u64))?;
    Ok(stream(source, file, Some(framing)))
}

/// A regular file read with positioned reads: its first bytes say the framing; NDJSON
/// takes the parallel road, other framings are streamed from `start`.
fn positioned(
    input: &Input,
    source: Arc<Source>,
    mut file: File,
    start: u64,
    settings: &Settings,
) -> io::Result<Opened> {
    let end = file.metadata()?.len().max(start);
    if let Input::Stdin = input {
        // Consume stdin as a read would: a second `-` sees its end, as with `cat - -`.
        file.seek(io::SeekFrom::End(0))?;
    }
    let first_len =
        super::sniff::FIRST_LINE.min(usize::try_from(end - start).unwrap_or(usize::MAX));
    // The first line is read whole only when it may be a proxy log's record.
    let probe = head(&file, start, BINARY_PROBE.min(first_len))?;
    let framing =
        settings.framing.unwrap_or_else(|| Framing::detect(probe.get(..SNIFF).unwrap_or(&probe)));
    if framing == Framing::Ndjson {
        warn_if_binary(&source, 0, &probe);
        let first = match memchr::memchr(b'\n', &probe) {
            None if probe.len() < first_len && settings.extract.is_none() => {
                head(&file, start, first_len)?
            }
            _ => probe,
        };
        let source = source.with_extraction(settings, &first);
        return Ok(Opened::Positioned(Positioned::new(source, file, start, end)));
    }
    file.seek(io::SeekFrom::Start(start))?;
    Ok(stream(source, file, Some(framing)))
}

/// The streamed road, its first bytes looked at for NUL bytes as they are read.
fn stream(
    source: Arc<Source>,
    reader: impl Read + Send + 'static,
    framing: Option<Framing>,
) -> Opened {
    Opened::Stream { reader: Box::new(Probe::new(reader, Arc::clone(&source))), source, framing }
}

fn is_dir(file: &File) -> bool {
    file.metadata().is_ok_and(|m| m.is_dir())
}

/// Stdin as a `File`: a duplicate of the descriptor, so stdin itself is left alone.
#[cfg(unix)]
fn stdin_file() -> Option<File> {
    use std::os::fd::AsFd;
    io::stdin().as_fd().try_clone_to_owned().ok().map(File::from)
}

#[cfg(not(unix))]
fn stdin_file() -> Option<File> {
    None
}

/// A non-empty regular file (`/proc` files claim size 0 and are streamed).
fn is_mappable(file: &File) -> bool {
    file.metadata().map(|m| m.is_file() && m.len() > 0).unwrap_or(false)
}

#[allow(unsafe_code)]
fn map(file: &File) -> io::Result<Mmap> {
    // SAFETY: the map is only ever read as `&[u8]`. If another process truncates or
    // rewrites the file while we scan it, reads may see changed bytes or fault (SIGBUS,
    // which ends the process). The map is made only when the product asks for it
    // (`Settings::mmap`: `rpcscan --mmap`, the Python package's `mmap=True`), which says
    // so; by default files are read with positioned reads, which cannot fault.
    unsafe { Mmap::map(file) }
}

/// Appends one read of at most `max` bytes to `buf`; `Ok(0)` at end of input.
pub(super) fn read_more(reader: &mut dyn Read, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    let len = buf.len();
    buf.resize(len + max, 0);
    let result = loop {
        match reader.read(&mut buf[len..]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => break other,
        }
    };
    buf.truncate(len + *result.as_ref().unwrap_or(&0));
    result
}
