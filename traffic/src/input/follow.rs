//! A file followed as it grows, like `tail -F`: read from its start, then whatever is
//! appended; when the name comes to stand for another file (rotated: renamed away and
//! created anew) the rest of the old file is read and the new one is followed from its
//! start; a file truncated in place (`copytruncate`) is read again from its start. The
//! input ends at Ctrl-C ([`super::interrupt`]), never at the end of the file.
//!
//! Polling, not file-system events: at the end of the file the reader looks again every
//! [`POLL`] (one `read` and one `stat`). It needs no dependency, works the same on every
//! platform and file system (network and container mounts included, where inotify and its
//! kin are silent), and sees a rename, a re-creation and a truncation the same way `tail
//! -F` does; [`POLL`] is far below any report interval (`rpcscan pair --every`).
//!
//! Offsets and line numbers count from the start of the following, across rotations.

use std::fs::{File, Metadata};
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use super::interrupt;

/// How often the end of a followed file is looked at again.
pub const POLL: Duration = Duration::from_millis(50);

/// The reader of a followed file.
pub(super) struct Follow {
    path: PathBuf,
    file: File,
    id: Option<(u64, u64)>,
    /// Bytes read from the current file.
    pos: u64,
}

/// What names a file: device and inode (Unix); `None` elsewhere (rotation is then seen by
/// a size smaller than what was read).
#[cfg(unix)]
fn identity(meta: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(_meta: &Metadata) -> Option<(u64, u64)> {
    None
}

impl Follow {
    pub(super) fn open(path: &Path) -> io::Result<Follow> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory"));
        }
        Ok(Follow { path: path.to_path_buf(), id: identity(&meta), file, pos: 0 })
    }

    fn read_current(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.file.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(n) => {
                    self.pos += n as u64;
                    return Ok(n);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Read for Follow {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let n = self.read_current(buf)?;
            if n > 0 {
                return Ok(n);
            }
            if interrupt::interrupted() {
                return Ok(0);
            }
            match std::fs::metadata(&self.path) {
                // Another file under the name: the old one is drained (a last write may
                // have come after our read), then the new one is read from its start.
                Ok(meta) if identity(&meta) != self.id => {
                    let n = self.read_current(buf)?;
                    if n > 0 {
                        return Ok(n);
                    }
                    if let Ok(file) = File::open(&self.path) {
                        self.id = file.metadata().ok().as_ref().and_then(identity);
                        self.file = file;
                        self.pos = 0;
                        continue;
                    }
                }
                // Truncated in place: read again from the start.
                Ok(meta) if meta.len() < self.pos => {
                    self.file.rewind()?;
                    self.pos = 0;
                    continue;
                }
                // Unchanged, or between a rename and the new file's creation.
                _ => {}
            }
            thread::sleep(POLL);
        }
    }
}
