//! The MCP server as a child process in a process group of its own, so that a signal or a
//! kill reaches everything it started (`npx` → `node`, `uv run` → `python`), and nothing
//! is left behind when the proxy exits.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::process::{ExitStatus, Stdio};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

/// The running server.
pub struct Server {
    child: Child,
    /// `None` once the server is known to be gone.
    group: Option<Group>,
}

/// The server's process group (its id is the server's pid).
#[derive(Clone, Copy, Debug)]
pub struct Group(Pid);

impl Group {
    /// Sends `signal` to every process of the group.
    pub fn signal(self, signal: Signal) {
        // Never 0 or 1 (our own group, everything): a pid from `Child::id` is above 1.
        if self.0.as_raw() <= 1 {
            return;
        }
        // ESRCH: already gone, which is what we want.
        let _ = killpg(self.0, signal);
    }
}

/// Starts `command` with its stdin and stdout on pipes (stderr is the proxy's), and gives
/// the proxy's ends of them: blocking files, written and read by the proxy's own threads
/// (not tokio's pipes, whose every wait goes through the runtime's reactor).
pub fn spawn(command: &[String]) -> io::Result<(Server, File, File)> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no server command"))?;
    let (stdin_read, stdin_write) = io::pipe()?;
    let (stdout_read, stdout_write) = io::pipe()?;
    // The `Command` holds the child's ends until it is dropped: drop it at once, or the
    // server's stdout would never end.
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::from(stdin_read))
        .stdout(Stdio::from(stdout_write))
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    let group =
        child.id().and_then(|pid| i32::try_from(pid).ok()).map(|pid| Group(Pid::from_raw(pid)));
    let to_server = File::from(OwnedFd::from(stdin_write));
    let from_server = File::from(OwnedFd::from(stdout_read));
    Ok((Server { child, group }, to_server, from_server))
}

impl Server {
    /// The server's process group, to signal while [`wait`](Self::wait) runs.
    pub fn group(&self) -> Option<Group> {
        self.group
    }

    fn signal(&self, signal: Signal) {
        if let Some(group) = self.group {
            group.signal(signal);
        }
    }

    /// Waits for the server (cancel-safe), then kills what is left of its process group
    /// (children it started that outlive it would hold its stdout open).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        // The group id cannot be reused while any member is alive, and it was the child's
        // pid, reaped an instant ago.
        self.signal(Signal::SIGKILL);
        self.group = None;
        Ok(status)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The proxy is going away (an error path or a panic): never leave the server.
        self.signal(Signal::SIGKILL);
    }
}
