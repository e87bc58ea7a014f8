//! Logs for the pairing reference ([`crate::pair`]): interleaved requests and responses of
//! both directions, ids reused after and during flight and re-spelled with escapes, big
//! and `-0` ids, cancellations, progress, orphans, `null`-id errors, and timestamps (all,
//! some or none). A pure function of its seed.
//!
//! ```
//! use rpcscan_oracle::pairlog;
//!
//! let log = pairlog::log(3, 200);
//! assert_eq!(log.len(), 200);
//! assert_eq!(log, pairlog::log(3, 200));
//! assert!(log.iter().all(|e| rpcscan_oracle::classify(&e.bytes).is_valid()));
//! ```

use crate::pair::Entry;
use crate::rng::Rng;

/// Spellings of ids; each inner list holds spellings of one decoded value.
const IDS: &[&[&str]] = &[
    &["0", "-0"],
    &["1"],
    &["2"],
    &["7"],
    &[r#""1""#],
    &[r#""a""#, r#""\u0061""#],
    &[r#""ab""#, r#""a\u0062""#, r#""\u0061\u0062""#],
    &[r#""é""#, r#""\u00e9""#],
    &[r#""😀""#, r#""\ud83d\ude00""#],
    &["18446744073709551617"],
    &["18446744073709551616"],
    &["-9223372036854775809"],
];

/// Spellings of progress tokens, grouped like [`IDS`].
const TOKENS: &[&[&str]] = &[&["1"], &[r#""1""#], &[r#""t""#, r#""\u0074""#], &["42"]];

const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "resources/read",
    "sampling/createMessage",
    "t\\u006fols/call",
];

const TOOLS: &[&str] = &["echo", "get_weather", "e\\u0063ho"];

const CODES: &[&str] = &["-32601", "-32602", "-32603", "-32000", "1", "-0"];

/// One of a group's spellings.
fn spell(rng: &mut Rng, groups: &[&[&'static str]], group: usize) -> &'static str {
    let spellings = groups[group % groups.len()];
    spellings[rng.below(spellings.len())]
}

/// A log of `n` valid messages.
pub fn log(seed: u64, n: usize) -> Vec<Entry> {
    let mut rng = Rng::new(seed);
    // How this log says which way messages went and when.
    let directions = rng.percent(60);
    let times = rng.below(3); // 0: none, 1: some, 2: all
    let mut now = 1_764_410_400_000u64;
    // Requests sent so far that a response may answer: (id group, direction).
    let mut sent: Vec<(usize, Option<bool>)> = Vec::new();
    let mut log = Vec::with_capacity(n);
    while log.len() < n {
        now += rng.below(400) as u64;
        let direction = directions.then(|| rng.percent(75));
        let time_ms = match times {
            0 => None,
            1 => rng.percent(80).then_some(now),
            _ => Some(now),
        };
        let json = match rng.below(100) {
            // A request; clients (`true`) send most of them.
            0..=34 => {
                let group = rng.below(IDS.len());
                sent.push((group, direction));
                request(&mut rng, group)
            }
            // A response to something sent, maybe long ago, maybe re-spelled.
            35..=69 if !sent.is_empty() => {
                let (group, request_direction) = sent.swap_remove(rng.below(sent.len()));
                let id = spell(&mut rng, IDS, group);
                let response = response(&mut rng, id);
                if rng.percent(90) {
                    // The response goes back the other way, as it should.
                    let direction = request_direction.map(|d| !d);
                    log.push(Entry {
                        direction,
                        time_ms,
                        bytes: response.into_bytes(),
                    });
                    continue;
                }
                response
            }
            // A response to anything at all: often an orphan.
            35..=74 => {
                let group = rng.below(IDS.len());
                let id = spell(&mut rng, IDS, group);
                response(&mut rng, id)
            }
            75..=79 => {
                let id = if rng.percent(50) { r#","id":null"# } else { "" };
                format!(
                    r#"{{"jsonrpc":"2.0"{id},"error":{{"code":-32700,"message":"Parse error"}}}}"#
                )
            }
            80..=86 => {
                let group = rng.below(IDS.len());
                let id = spell(&mut rng, IDS, group);
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"user"}}}}"#
                )
            }
            87..=95 => {
                let group = rng.below(TOKENS.len());
                let token = spell(&mut rng, TOKENS, group);
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":1}}}}"#
                )
            }
            _ => r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        };
        log.push(Entry {
            direction,
            time_ms,
            bytes: json.into_bytes(),
        });
    }
    log
}

fn request(rng: &mut Rng, group: usize) -> String {
    let id = spell(rng, IDS, group);
    let method = rng.pick(METHODS);
    let mut params = Vec::new();
    if method.contains("call") || rng.percent(20) {
        params.push(format!(r#""name":"{}""#, rng.pick(TOOLS)));
    }
    if rng.percent(40) {
        let group = rng.below(TOKENS.len());
        let token = spell(rng, TOKENS, group);
        params.push(format!(r#""_meta":{{"progressToken":{token}}}"#));
    }
    if rng.percent(5) {
        // A duplicated `_meta` or `name`: neither counts.
        params.push(r#""_meta":{},"name":"dup""#.to_owned());
    }
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{}}}}}"#,
        params.join(",")
    )
}

fn response(rng: &mut Rng, id: &str) -> String {
    if rng.percent(70) {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
    } else {
        let code = rng.pick(CODES);
        format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"x"}}}}"#)
    }
}
