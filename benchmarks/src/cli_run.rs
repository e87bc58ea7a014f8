//! What the programs that time the `rpcscan` binary share (`pair`, `extract`): their
//! command line, running the binary, and reading a count out of its report.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// `PROGRAM [SIZE_MB [ROUNDS [RPCSCAN]]]`, or `PROGRAM --test [RPCSCAN]` (4 MB, one round).
pub struct Args {
    /// `--test`: a small run that checks counts only.
    pub test: bool,
    /// Megabytes of generated traffic (default 1024).
    pub size_mb: usize,
    /// Timed rounds (default 3).
    pub rounds: usize,
    /// The `rpcscan` binary (default: beside this program).
    pub rpcscan: PathBuf,
}

impl Args {
    /// Reads this process's arguments.
    pub fn from_env() -> Args {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let test = args.first().map(String::as_str) == Some("--test");
        let size_mb =
            if test { 4 } else { args.first().and_then(|s| s.parse().ok()).unwrap_or(1024) };
        let rounds = if test { 1 } else { args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3) };
        let rpcscan = args.get(if test { 1 } else { 2 }).map(PathBuf::from).unwrap_or_else(|| {
            let me = std::env::current_exe().expect("own path");
            me.with_file_name(format!("rpcscan{}", std::env::consts::EXE_SUFFIX))
        });
        Args { test, size_mb, rounds, rpcscan }
    }

    /// Runs `rpcscan ARGS`, returns stdout and the wall time.
    pub fn time(&self, args: &[&str]) -> (String, Duration) {
        let start = Instant::now();
        let out = Command::new(&self.rpcscan)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.rpcscan.display()));
        let elapsed = start.elapsed();
        assert!(out.status.success(), "rpcscan {args:?}: {out:?}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), elapsed)
    }
}

/// The number after `name` on the line of `report` that starts with it.
pub fn count(report: &str, name: &str) -> u64 {
    report
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name:?} in {report}"))
}

/// CPU time (user + system) of this process's waited-for children so far, from
/// `/proc/self/stat` (`cutime`, `cstime`: clock ticks of 10 ms). `None` where there is no
/// such file (not Linux).
pub fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which is in parentheses and may hold spaces):
    // state is field 3, cutime field 16, cstime field 17.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    let total = ticks(13)? + ticks(14)?;
    Some(Duration::from_millis(total * 10))
}

impl Args {
    /// [`Args::time`], with the CPU time the run took (user + system, every thread), when
    /// [`children_cpu`] can tell: on a shared or throttled machine it moves far less than
    /// wall time does.
    pub fn time_cpu(&self, args: &[&str]) -> (String, Duration, Option<Duration>) {
        let before = children_cpu();
        let (out, wall) = self.time(args);
        let cpu = children_cpu().zip(before).map(|(after, before)| after.saturating_sub(before));
        (out, wall, cpu)
    }
}
