//! Files and folders, run for real: a folder of rotated, gzip- and zstd-compressed logs paired
//! as one stream in time order with each event naming its file; `--follow` on a log that is
//! appended to, rotated and truncated while it is read; a file truncated mid-scan.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;

fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rpcscan-files-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A JSON log record: second `s` of a day, direction, message.
fn rec(s: u32, dir: &str, msg: &str) -> String {
    format!("{{\"ts\":\"2024-01-01T00:00:{s:02}Z\",\"dir\":\"{dir}\",\"msg\":{msg}}}\n")
}

fn request(id: u32, method: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\"}}")
}

fn result(id: u32) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}")
}

fn gzip(text: &str) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap()
}

const FIELDS: [&str; 6] = ["--json-field", "msg", "--ts-field", "ts", "--dir-field", "dir"];

fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `x.log.2.gz` (oldest), `x.log.1.zst`, `x.log` (newest): requests in one file answered in
/// another, paired across them; a second server's log beside them, a file the default
/// globs skip. Named on the command line in the shell's order (newest first), or as the
/// folder: the same pairs.
#[test]
fn a_rotated_compressed_log_is_paired_across_its_files() {
    let d = dir("rotated");
    let oldest = rec(1, "c2s", &request(1, "ping")) + &rec(2, "c2s", &request(2, "tools/list"));
    std::fs::write(d.join("x.log.2.gz"), gzip(&oldest)).unwrap();
    let middle = rec(3, "s2c", &result(1)) + &rec(4, "c2s", &request(3, "ping"));
    std::fs::write(d.join("x.log.1.zst"), zstd::encode_all(middle.as_bytes(), 3).unwrap()).unwrap();
    let newest = rec(5, "s2c", &result(2)) + &rec(6, "s2c", &result(3));
    std::fs::write(d.join("x.log"), newest).unwrap();
    std::fs::write(d.join("notes.txt"), "not a log\n").unwrap();
    let folder = d.to_str().unwrap();
    let file = |name: &str| d.join(name).to_str().unwrap().to_owned();
    let named = [file("x.log"), file("x.log.1.zst"), file("x.log.2.gz")];
    let mut by_folder = vec!["pair", "--json"];
    by_folder.extend(FIELDS);
    let mut by_name = by_folder.clone();
    by_folder.push(folder);
    by_name.extend(named.iter().map(String::as_str));
    for args in [by_folder, by_name] {
        let (code, out, err) = common::run(&args, b"");
        assert_eq!(code, Some(0), "{args:?}: {err}");
        let events = json_lines(&out);
        let pairs: Vec<(u64, String, String, f64)> = events
            .iter()
            .filter(|e| e["event"] == "pair")
            .map(|e| {
                let name = |k: &str| {
                    Path::new(e[k].as_str().unwrap())
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                };
                let latency = e["latency_ms"].as_f64().unwrap();
                (e["id"].as_u64().unwrap(), name("request_file"), name("response_file"), latency)
            })
            .collect();
        let want = [
            (1, "x.log.2.gz", "x.log.1.zst", 2000.0),
            (2, "x.log.2.gz", "x.log", 3000.0),
            (3, "x.log.1.zst", "x.log", 2000.0),
        ];
        let want: Vec<_> =
            want.iter().map(|(i, a, b, l)| (*i, a.to_string(), b.to_string(), *l)).collect();
        assert_eq!(pairs, want, "{args:?}");
        let summary = events.last().unwrap();
        assert_eq!((summary["pairs"].as_u64(), summary["unanswered"].as_u64()), (Some(3), Some(0)));
        // Lines and offsets point into each decompressed file.
        let first = &events[0];
        assert_eq!(
            (first["request_line"].as_u64(), first["response_line"].as_u64()),
            (Some(1), Some(1))
        );
    }
    // Every subcommand reads the compressed files; classify names each message's file.
    let (code, out, _) = common::run(&["classify", "--json", folder], b"");
    assert_eq!(code, Some(0));
    let files: Vec<String> = json_lines(&out)
        .iter()
        .map(|o| {
            Path::new(o["file"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(files, ["x.log.2.gz", "x.log.2.gz", "x.log.1.zst", "x.log.1.zst", "x.log", "x.log"]);
    // `--glob` chooses: only the newest file.
    let (code, out, _) = common::run(&["stats", "--json", "--glob", "*.log", folder], b"");
    assert_eq!(code, Some(0));
    assert_eq!(json_lines(&out)[0]["messages"].as_u64(), Some(2));
}

/// Files whose names say one order and whose timestamps say another are read in time
/// order; without timestamps, in rotation order (oldest, the highest number, first).
#[test]
fn timestamps_order_a_streams_files_and_rotation_numbers_do_without() {
    let d = dir("timed");
    // `y1.log` is `y.log`'s rotated file (electron-log's naming) but holds the later lines.
    std::fs::write(d.join("y.log"), rec(1, "c2s", &request(7, "ping"))).unwrap();
    std::fs::write(d.join("y1.log"), rec(9, "s2c", &result(7))).unwrap();
    let mut args = vec!["pair", "--json"];
    args.extend(FIELDS);
    args.push(d.to_str().unwrap());
    let (code, out, _) = common::run(&args, b"");
    assert_eq!(code, Some(0));
    let events = json_lines(&out);
    assert_eq!(events[0]["event"], "pair", "{events:?}");
    assert_eq!(events[0]["latency_ms"].as_f64(), Some(8000.0));
    // Bare NDJSON: rotation order, `z.log.1` before `z.log`.
    let d = dir("untimed");
    std::fs::write(d.join("z.log"), result(5) + "\n").unwrap();
    std::fs::write(d.join("z.log.1"), request(5, "ping") + "\n").unwrap();
    let (code, out, _) = common::run(&["pair", "--json", d.to_str().unwrap()], b"");
    assert_eq!(code, Some(0));
    assert_eq!(json_lines(&out)[0]["event"], "pair");
}

/// Two servers' logs in one folder are two id spaces: a response in one never answers a
/// request in the other, while a rotated log's files are one.
#[test]
fn different_logs_keep_their_ids_apart() {
    let d = dir("servers");
    std::fs::write(d.join("mcp-server-a.log"), rec(1, "c2s", &request(1, "ping"))).unwrap();
    std::fs::write(d.join("mcp-server-b.log"), rec(2, "s2c", &result(1))).unwrap();
    let mut args = vec!["pair", "--json"];
    args.extend(FIELDS);
    args.push(d.to_str().unwrap());
    let (code, out, _) = common::run(&args, b"");
    assert_eq!(code, Some(0));
    let events = json_lines(&out);
    let names: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["orphan", "unanswered", "summary"], "{events:?}");
    assert!(events[0]["response_file"].as_str().unwrap().ends_with("mcp-server-b.log"));
    assert!(events[1]["request_file"].as_str().unwrap().ends_with("mcp-server-a.log"));
    // Renamed as one rotated log, the same lines pair.
    std::fs::rename(d.join("mcp-server-a.log"), d.join("mcp-server-b.log.1")).unwrap();
    let (_, out, _) = common::run(&args, b"");
    let events = json_lines(&out);
    assert_eq!(events[0]["event"], "pair", "{events:?}");
}

/// A folder with no log in it is an error (exit 2), the other operands are still read.
#[test]
fn a_folder_without_logs_says_so() {
    let d = dir("empty");
    std::fs::write(d.join("readme.txt"), "hello\n").unwrap();
    let (code, out, err) = common::run(&["stats", "--json", d.to_str().unwrap(), "-"], b"{}\n");
    assert_eq!(code, Some(2));
    assert!(err.contains("no file in this folder matches *.log*, *.ndjson*, *.jsonl*"), "{err}");
    assert_eq!(json_lines(&out)[0]["messages"].as_u64(), Some(1));
}

/// Waits up to `limit` for a line of `lines` that satisfies `want`; the lines seen.
fn wait_for(
    lines: &mpsc::Receiver<String>,
    seen: &mut Vec<String>,
    limit: Duration,
    want: impl Fn(&str) -> bool,
) -> bool {
    let deadline = Instant::now() + limit;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                let hit = want(&line);
                seen.push(line);
                if hit {
                    return true;
                }
            }
            Err(_) => return false,
        }
    }
    false
}

/// `pair --follow --every`: a log appended to, then rotated (renamed away, created anew),
/// then truncated in place, while it is read; interim reports as it goes, the final one at
/// Ctrl-C (exit 130).
#[cfg(unix)]
#[test]
fn follow_reads_a_log_that_grows_rotates_and_is_truncated() {
    let d = dir("follow");
    let log = d.join("live.log");
    let append = |text: &str| {
        let mut f = std::fs::OpenOptions::new().append(true).create(true).open(&log).unwrap();
        f.write_all(text.as_bytes()).unwrap();
    };
    append(&rec(1, "c2s", &request(1, "ping")));
    let mut args = vec!["pair", "--json", "--follow", "--every", "100ms"];
    args.extend(FIELDS);
    let mut child = Command::new(common::BIN)
        .args(&args)
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let limit = Duration::from_secs(20);
    let interim_pairs = |n: u64| {
        move |l: &str| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["event"] == "interim" && v["pairs"].as_u64() == Some(n)
        }
    };
    // The first request is read: an interim report with it in flight.
    assert!(wait_for(&lines, &mut seen, limit, |l| l.contains("\"in_flight\":1")), "{seen:?}");
    // Appended.
    append(&(rec(2, "s2c", &result(1)) + &rec(3, "c2s", &request(2, "ping"))));
    assert!(wait_for(&lines, &mut seen, limit, interim_pairs(1)), "{seen:?}");
    // Rotated: renamed away (a last line written to it first), a new file under the name.
    append(&rec(4, "c2s", &request(3, "ping")));
    std::fs::rename(&log, d.join("live.log.1")).unwrap();
    append(&(rec(5, "s2c", &result(2)) + &rec(6, "s2c", &result(3))));
    assert!(wait_for(&lines, &mut seen, limit, interim_pairs(3)), "{seen:?}");
    // Truncated in place (copytruncate), then written again.
    append(&rec(7, "c2s", &request(4, "ping")));
    assert!(wait_for(&lines, &mut seen, limit, |l| l.contains("\"in_flight\":1")), "{seen:?}");
    std::fs::File::options().write(true).open(&log).unwrap().set_len(0).unwrap();
    // Give the reader a poll to see the file shorter than what it read.
    std::thread::sleep(Duration::from_millis(200));
    append(&rec(8, "s2c", &result(4)));
    assert!(wait_for(&lines, &mut seen, limit, interim_pairs(4)), "{seen:?}");
    // Ctrl-C: the final report, exit 130.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert!(
        wait_for(&lines, &mut seen, limit, |l| l.contains("\"event\":\"summary\"")),
        "{seen:?}"
    );
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert_eq!(status.code(), Some(130));
    let summary: serde_json::Value = serde_json::from_str(seen.last().unwrap()).unwrap();
    assert_eq!((summary["pairs"].as_u64(), summary["unanswered"].as_u64()), (Some(4), Some(0)));
    let pairs = seen.iter().filter(|l| l.contains("\"event\":\"pair\"")).count();
    assert_eq!(pairs, 4, "{seen:?}");
}

/// A file truncated while it is scanned: by default (positioned reads) the scan stops at
/// its new end, says so, exits 2, and no signal kills it; with `--mmap`, as documented,
/// the process may be killed by SIGBUS. The scan is held mid-file by not reading its
/// output (a full pipe), so the truncation lands while it runs.
#[cfg(unix)]
#[test]
fn a_file_truncated_mid_scan_never_kills_the_default_reader() {
    use std::os::unix::process::ExitStatusExt;
    let line =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}\n";
    let data = line.repeat(48 * 1024 * 1024 / line.len());
    for mmap in [false, true] {
        let path = common::file("rpcscan-files-tests", "truncated.ndjson", data.as_bytes());
        let mut args = vec!["classify", "--json", "-j", "1"];
        if mmap {
            args.push("--mmap");
        }
        let mut child = Command::new(common::BIN)
            .args(&args)
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 4096];
        stdout.read_exact(&mut first).unwrap();
        // The pipe fills up and the scan waits on it, a few MiB into the file.
        std::thread::sleep(Duration::from_millis(300));
        std::fs::File::options().write(true).open(&path).unwrap().set_len(4096).unwrap();
        let mut rest = Vec::new();
        stdout.read_to_end(&mut rest).unwrap();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        if mmap {
            // Documented: a mapped file cut short faults the reader.
            assert!(
                status.signal() == Some(7) || status.code() == Some(0),
                "--mmap: {status:?} {err}"
            );
        } else {
            assert_eq!(status.signal(), None, "{err}");
            assert_eq!(status.code(), Some(2), "{err}");
            assert!(err.contains("the file shrank while it was read"), "{err}");
            // Every line printed is a whole object: the cut line is not misread.
            let out = [&first[..], &rest].concat();
            let text = String::from_utf8(out).unwrap();
            assert!(text.ends_with('\n'));
            for l in text.lines() {
                assert!(l.contains("\"kind\":\"request\""), "{l}");
            }
        }
    }
}
