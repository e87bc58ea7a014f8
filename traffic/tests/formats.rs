//! The named log formats on their fixtures (`tests/data/formats/`, sources in its README):
//! every line's verdict — a message's kind, raw id, direction and time, or why the line
//! holds none — recognised from the first lines, and read with `--log-format NAME`, mapped
//! and streamed alike.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rpcscan_traffic::input::extract::parse_time;
use rpcscan_traffic::input::formats::{detect, LogFormat};
use rpcscan_traffic::input::{self, Command, Input, Item, Output, Settings, Skip, Source, Verdict};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/formats")
}

/// Writes down every line's verdict: `(offset, text)`, lines numbered afterwards.
struct Record;

impl Command for Record {
    type Tally = Vec<(u64, String)>;

    fn item(&self, _: &Source, item: &Item<'_>, _: &mut Vec<u8>, tally: &mut Self::Tally) {
        let verdict = match item.verdict {
            Verdict::Message(m) => {
                let id = m
                    .id()
                    .map_or("-".to_owned(), |id| String::from_utf8_lossy(id.raw()).into_owned());
                format!("{} {id}", m.kind().as_str())
            }
            other => format!("invalid {}", other.reason().map_or("?", |r| r.as_str())),
        };
        let dir = item.dir.map_or("-".to_owned(), |d| String::from_utf8_lossy(d).into_owned());
        let time = item.ts.and_then(parse_time).map_or("-".to_owned(), |t| {
            let ms = i64::try_from(t.as_millis()).unwrap();
            jiff::Timestamp::from_millisecond(ms).unwrap().to_string()
        });
        tally.push((item.offset, format!("{verdict} {dir} {time}")));
    }

    fn skipped_line(&self, _: &Source, why: Skip, offset: u64, _: &[u8], tally: &mut Self::Tally) {
        tally.push((offset, why.as_str().to_owned()));
    }

    fn merge(&self, into: &mut Self::Tally, from: Self::Tally) {
        into.extend(from);
    }
}

/// Every line's verdict, `LINE VERDICT`, in order.
fn verdicts(
    path: &Path,
    extract: Option<Arc<input::Extract>>,
    mmap: bool,
    labels: bool,
) -> Vec<String> {
    let settings = Settings {
        framing: extract.as_ref().map(|_| rpcscan::frame::Framing::Ndjson),
        parser: rpcscan::Parser::new(),
        max_message_size: 1 << 20,
        mmap,
        extract,
        labels,
        notes: input::Notes::collect(),
    };
    let inputs = [Input::Path(path.to_owned())];
    let run = input::run(&Record, &settings, &inputs, &mut Output::discard()).unwrap();
    assert!(!run.failed);
    let bytes = std::fs::read(path).unwrap();
    run.tally
        .iter()
        .map(|(offset, text)| {
            let before = &bytes[..usize::try_from(*offset).unwrap()];
            let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
            format!("{line} {text}")
        })
        .collect()
}

/// Each fixture: its format, and every line's verdict. A message: `LINE KIND ID DIR TIME`
/// (`-` where there is none); an invalid one: `LINE invalid REASON DIR TIME`; a line
/// without one: `LINE WHY`.
#[rustfmt::skip]
const CASES: &[(&str, &str, &[&str])] = &[
    ("claude-desktop-mcp-server-chatlog.log", "claude-desktop", &[
        "1 host_lines",
        "2 host_lines",
        "3 no_match",
        "4 no_match",
        "5 no_match",
        "6 no_match",
        "7 no_match",
        "8 host_lines",
        "9 request 0 c2s 2025-07-12T05:51:44.601Z",
        "10 no_match",
        "11 result 0 s2c 2025-07-12T05:51:44.733Z",
        "12 notification - c2s 2025-07-12T05:51:44.735Z",
        "13 request 1 c2s 2025-07-12T05:51:44.736Z",
        "14 result 1 s2c 2025-07-12T05:51:44.79Z",
        "15 request 2 c2s 2025-07-12T05:51:45.1Z",
        "16 result 2 s2c 2025-07-12T05:51:45.103Z",
        "17 invalid bad_id s2c 2025-07-12T05:51:45.2Z",
        "18 request 3 c2s 2025-07-12T05:51:46.001Z",
        "19 notification - c2s 2025-07-12T05:52:46.003Z",
        "20 host_lines",
        "21 host_lines",
    ]),
    ("claude-desktop-mcp.log", "claude-desktop", &[
        "1 host_lines",
        "2 host_lines",
        "3 request 0 c2s 2025-03-12T17:53:14.656Z",
        "4 result 0 s2c 2025-03-12T17:53:14.912Z",
        "5 request 1 c2s 2025-03-12T17:53:14.915Z",
        "6 invalid syntax s2c 2025-03-12T17:53:14.96Z",
        "7 host_lines",
        "8 host_lines",
        "9 host_lines",
        "10 host_lines",
    ]),
    ("vscode.log", "vscode", &[
        "1 host_lines",
        "2 host_lines",
        "3 host_lines",
        "4 host_lines",
        "5 host_lines",
        "6 host_lines",
        "7 request 1 c2s 2026-07-24T02:03:14.089Z",
        "8 result 1 s2c 2026-07-24T02:03:14.151Z",
        "9 notification - c2s 2026-07-24T02:03:14.152Z",
        "10 request 2 c2s 2026-07-24T02:03:14.153Z",
        "11 host_lines",
        "12 no_match",
        "13 result 2 s2c 2026-07-24T02:03:14.171Z",
        "14 host_lines",
        "15 request 3 c2s 2026-07-24T02:03:20.5Z",
        "16 invalid syntax s2c 2026-07-24T02:03:21.742Z",
    ]),
    ("vscode-client-says.log", "vscode", &[
        "1 host_lines",
        "2 host_lines",
        "3 host_lines",
        "4 request 1 c2s 2025-03-23T16:37:58.42Z",
        "5 result 1 s2c 2025-03-23T16:37:58.731Z",
        "6 notification - c2s 2025-03-23T16:37:58.733Z",
        "7 host_lines",
        "8 request 4 c2s 2025-03-23T16:38:00.97Z",
        "9 result 4 s2c 2025-03-23T16:38:00.989Z",
        "10 invalid syntax s2c 2025-03-23T16:38:01.002Z",
        "11 no_match",
    ]),
    ("cursor.log", "cursor", &[
        "1 host_lines",
        "2 host_lines",
        "3 host_lines",
        "4 host_lines",
        "5 host_lines",
        "6 host_lines",
        "7 host_lines",
        "8 host_lines",
        "9 no_match",
        "10 host_lines",
    ]),
    ("inspector.log", "inspector", &[
        "1 host_lines",
        "2 host_lines",
        "3 host_lines",
        "4 host_lines",
        "5 host_lines",
        "6 host_lines",
        "7 host_lines",
        "8 host_lines",
        "9 no_match",
        "10 host_lines",
    ]),
    ("pino.log", "pino", &[
        "1 host_lines",
        "2 request 0 - 2025-11-29T10:00:00.12Z",
        "3 result 0 - 2025-11-29T10:00:00.135Z",
        "4 notification - - 2025-11-29T10:00:00.14Z",
        "5 request 1 - 2025-11-29T10:00:00.201Z",
        "6 host_lines",
        "7 result 1 - 2025-11-29T10:00:00.251Z",
        "8 invalid bad_version - 2025-11-29T10:00:00.26Z",
        "9 host_lines",
        "10 no_match",
    ]),
    ("rpcscan-proxy.log", "rpcscan", &[
        "1 request 0 c2s 2026-12-01T15:24:31.1Z",
        "2 result 0 s2c 2026-12-01T15:24:31.12Z",
        "3 notification - c2s 2026-12-01T15:24:31.121Z",
        "4 proxy_records",
        "5 request 1 c2s 2026-12-01T15:24:31.3Z",
        "6 invalid syntax s2c 2026-12-01T15:24:31.31Z",
        "7 no_match",
        "8 no_message_field",
    ]),
];

#[test]
fn every_line_of_every_fixture() {
    for &(file, name, want) in CASES {
        let path = dir().join(file);
        let head = std::fs::read(&path).unwrap();
        assert_eq!(detect(&head).map(|f| f.name), Some(name), "{file}: detected");
        let format = LogFormat::named(name).unwrap();
        let named = Some(Arc::new(format.extract()));
        for (how, extract, mmap) in
            [("detected", None, true), ("streamed", None, false), ("named", named, true)]
        {
            let got = verdicts(&path, extract, mmap, true);
            assert_eq!(got, want, "{file}, {how}");
        }
        // Without labels (every subcommand but `pair`): the same lines, kinds and ids.
        let kinds = |v: &[String]| -> Vec<String> {
            v.iter().map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" ")).collect()
        };
        let want: Vec<String> = want.iter().map(|l| l.to_string()).collect();
        for mmap in [true, false] {
            let got = verdicts(&path, None, mmap, false);
            assert_eq!(kinds(&got), kinds(&want), "{file}, without labels");
        }
    }
}

/// The fixtures are the formats' own: no other format reads any of them better.
#[test]
fn each_fixture_is_its_formats_only() {
    for &(file, name, _) in CASES {
        let head = std::fs::read(dir().join(file)).unwrap();
        for line in head.split(|&b| b == b'\n') {
            if let Some(other) = detect(line) {
                assert_eq!(other.name, name, "{file}: {:?}", String::from_utf8_lossy(line));
            }
        }
    }
}
