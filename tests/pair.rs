//! `rpcscan::pair` against the oracle's pairing reference (`rpcscan_oracle::pair`), on
//! generated logs with reused, re-spelled and big ids, cancellations, progress, orphans,
//! `null`-id errors, both directions, and all, some or no timestamps.

use std::time::Duration;

use proptest::prelude::*;
use rpcscan::pair::{Direction, Directions, Ending, Event, Fact, Outcome, Pairing, Position};
use rpcscan_oracle::pair::{pair as reference, Entry, PairEvent};
use rpcscan_oracle::pairlog;

fn ending(ending: Ending) -> &'static str {
    match ending {
        Ending::Finished => "finished",
        Ending::Evicted => "evicted",
        Ending::TimedOut => "timed_out",
    }
}

/// The library's event in the reference's terms (entry indexes, owned strings).
fn translate(event: &Event<'_>) -> PairEvent {
    let index = |at: Position| (at.line - 1) as usize;
    match event {
        Event::Paired { request, response, latency } => PairEvent::Paired {
            request: index(request.at),
            response: index(response.at),
            method: request.method.to_string(),
            tool: request.tool.as_deref().map(str::to_owned),
            code: match response.outcome {
                Outcome::Result => None,
                Outcome::Error(code) => code.map(|c| String::from_utf8_lossy(c).into_owned()),
            },
            progress: request.progress,
            cancelled: request.cancelled,
            latency_ms: latency.map(|l| l.as_millis() as u64),
        },
        Event::Orphan(response) => PairEvent::Orphan(index(response.at)),
        Event::Duplicate { at, earlier, .. } => {
            PairEvent::Duplicate { at: index(*at), earlier: index(*earlier) }
        }
        Event::NullIdError(response) => PairEvent::NullIdError(index(response.at)),
        Event::Unanswered { request, ending: e } => {
            PairEvent::Unanswered { at: index(request.at), ending: ending(*e) }
        }
        Event::Cancelled { request, ending: e } => {
            PairEvent::Cancelled { at: index(request.at), ending: ending(*e) }
        }
        Event::StrayProgress(at) => PairEvent::StrayProgress(index(*at)),
        Event::StrayCancel(at) => PairEvent::StrayCancel(index(*at)),
    }
}

fn library(log: &[Entry], max_in_flight: usize, timeout_ms: Option<u64>) -> Vec<PairEvent> {
    let mut pairing =
        Pairing::new().max_in_flight(max_in_flight).timeout(timeout_ms.map(Duration::from_millis));
    let mut events = Vec::new();
    for (i, entry) in log.iter().enumerate() {
        let msg = rpcscan::parse(&entry.bytes).expect("the generator writes valid messages");
        let at = Position { line: i as u64 + 1, offset: 0, input: 0 };
        let direction = entry.direction.map(|d| if d { Direction::There } else { Direction::Back });
        let fact = Fact::of(&msg, at)
            .with_direction(direction)
            .with_time(entry.time_ms.map(Duration::from_millis));
        pairing.feed(&fact, |e| events.push(translate(&e)));
    }
    pairing.finish(|e| events.push(translate(&e)));
    events
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn pairing_matches_the_reference(
        seed in any::<u64>(),
        n in 0usize..300,
        max_in_flight in prop_oneof![Just(usize::MAX), 0usize..12],
        timeout_ms in prop::option::of(0u64..3000),
    ) {
        let log = pairlog::log(seed, n);
        prop_assert_eq!(library(&log, max_in_flight, timeout_ms), reference(&log, max_in_flight, timeout_ms));
    }
}

/// The generated logs exercise every event, so the property above is not vacuous.
#[test]
fn generated_logs_cover_every_event() {
    let mut seen = [false; 8];
    for seed in 0..64 {
        for e in reference(&pairlog::log(seed, 300), 8, Some(1500)) {
            let slot = match e {
                PairEvent::Paired { progress, .. } if progress > 0 => 0,
                PairEvent::Paired { .. } => 1,
                PairEvent::Orphan(_) => 2,
                PairEvent::Duplicate { .. } => 3,
                PairEvent::NullIdError(_) => 4,
                PairEvent::Unanswered { .. } => 5,
                PairEvent::Cancelled { .. } => 6,
                PairEvent::StrayProgress(_) | PairEvent::StrayCancel(_) => 7,
            };
            seen[slot] = true;
        }
    }
    assert_eq!(seen, [true; 8]);
}

fn kind(n: u8) -> rpcscan::Kind {
    rpcscan::Kind::ALL[usize::from(n) % rpcscan::Kind::ALL.len()]
}

proptest! {
    /// Facts filled in by hand may hold any bytes: the matcher never panics and ends empty.
    #[test]
    fn any_facts_are_total(
        facts in prop::collection::vec(
            (any::<u8>(), prop::option::of(prop::collection::vec(any::<u8>(), 0..8)),
             prop::option::of(prop::collection::vec(any::<u8>(), 0..8)), any::<bool>(), prop::option::of(any::<u64>())),
            0..64,
        ),
        max_in_flight in 0usize..4,
    ) {
        let mut pairing = Pairing::new().max_in_flight(max_in_flight).timeout(Some(Duration::from_nanos(5)));
        for (n, (k, id, other, cancel, nanos)) in facts.iter().enumerate() {
            let mut fact = Fact::new(kind(*k), Position { line: n as u64 + 1, offset: 0, input: 0 });
            fact.id = id.as_deref();
            fact.method = Some(if *cancel { "notifications/cancelled" } else { "notifications/progress" }.into());
            fact.cancels = other.as_deref();
            fact.progress_token = other.as_deref();
            fact.time = nanos.map(Duration::from_nanos);
            pairing.feed(&fact, |_| {});
        }
        pairing.finish(|_| {});
        prop_assert_eq!(pairing.in_flight(), 0);
    }
}

/// Every event about a `tools/call` request names the request's tool, a duplicate's own
/// included (`rpcscan pair --json` prints it on each line); events about no request name none.
#[test]
fn events_about_a_call_name_its_tool() {
    let call = |id: u32, tool: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"}}}}"#
        )
    };
    let answer = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
    let cancel = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
        )
    };
    /// Name, log, each event's name and tool.
    type Case = (&'static str, Vec<String>, &'static [(&'static str, Option<&'static str>)]);
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        ("paired", vec![call(1, "a"), answer(1)], &[("paired", Some("a"))]),
        ("duplicate, then unanswered", vec![call(1, "a"), call(1, "a"), answer(1)], &[("duplicate", Some("a")), ("paired", Some("a")), ("unanswered", Some("a"))]),
        ("a duplicate's own tool", vec![call(1, "a"), call(1, "b")], &[("duplicate", Some("b")), ("unanswered", Some("a")), ("unanswered", Some("b"))]),
        ("cancelled", vec![call(1, "a"), cancel(1)], &[("cancelled", Some("a"))]),
        ("not a call", vec![r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into(), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.into()], &[("duplicate", None), ("unanswered", None), ("unanswered", None)]),
        ("about no request", vec![answer(1), cancel(2)], &[("orphan", None), ("stray_cancel", None)]),
    ];
    for (name, log, expected) in cases {
        let mut pairing = Pairing::new();
        let mut seen = Vec::new();
        let mut note = |event: Event<'_>| {
            let kind = match event {
                Event::Paired { .. } => "paired",
                Event::Duplicate { .. } => "duplicate",
                Event::Unanswered { .. } => "unanswered",
                Event::Cancelled { .. } => "cancelled",
                Event::Orphan(_) => "orphan",
                Event::NullIdError(_) => "null_id_error",
                Event::StrayProgress(_) => "stray_progress",
                Event::StrayCancel(_) => "stray_cancel",
            };
            seen.push((kind, event.tool().map(str::to_owned)));
        };
        for (i, json) in log.iter().enumerate() {
            let msg = rpcscan::parse(json.as_bytes()).expect("valid");
            pairing.feed(
                &Fact::of(&msg, Position { line: i as u64 + 1, offset: 0, input: 0 }),
                &mut note,
            );
        }
        pairing.finish(&mut note);
        let expected: Vec<_> = expected.iter().map(|&(k, t)| (k, t.map(str::to_owned))).collect();
        assert_eq!(seen, expected, "{name}");
    }
}

/// A log's two direction labels are those of the facts the matcher reads the direction of:
/// an invalid line or a plain notification (fed for its time only when there is a timeout)
/// never takes a side nor counts as undirected, so the labels are the same whether those
/// facts are fed or not.
#[test]
fn only_directed_facts_name_the_directions() {
    const REQ: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    const RES: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    const NOTE: &str = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
    const CANCEL: &str =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    const PROGRESS: &str =
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}"#;
    const BAD: &str = "{oops";
    /// Name, log (message, label), the two labels, undirected facts, each fact's direction
    /// (`>` there, `<` back, `-` none).
    type Case = (
        &'static str,
        &'static [(&'static str, &'static str)],
        [Option<&'static str>; 2],
        u64,
        &'static str,
    );
    #[rustfmt::skip]
    let cases: &[Case] = &[
        ("requests and responses", &[(REQ, "c2s"), (RES, "s2c")], [Some("c2s"), Some("s2c")], 0, "><"),
        ("an invalid line first takes no side", &[(BAD, "junk"), (REQ, "c2s"), (RES, "s2c")], [Some("c2s"), Some("s2c")], 0, "-><"),
        ("nor does an invalid line between", &[(REQ, "c2s"), (BAD, "junk"), (RES, "s2c")], [Some("c2s"), Some("s2c")], 0, ">-<"),
        ("a plain notification takes no side", &[(NOTE, "log"), (REQ, "c2s"), (RES, "s2c")], [Some("c2s"), Some("s2c")], 0, "-><"),
        ("an undirected fact with a known label has its direction", &[(REQ, "c2s"), (NOTE, "c2s"), (BAD, "s2c")], [Some("c2s"), None], 0, ">>-"),
        ("cancel and progress take sides", &[(CANCEL, "c2s"), (PROGRESS, "s2c")], [Some("c2s"), Some("s2c")], 0, "><"),
        ("a third label on a request is undirected", &[(REQ, "c2s"), (RES, "s2c"), (REQ, "x"), (BAD, "y")], [Some("c2s"), Some("s2c")], 1, "><--"),
    ];
    for &(name, log, labels, undirected, arrows) in cases {
        // Everything (a run with a timeout), then the directed facts only (without).
        for all in [true, false] {
            let mut directions = Directions::new();
            let mut got = String::new();
            for (n, &(json, label)) in log.iter().enumerate() {
                let at = Position { line: n as u64 + 1, offset: 0, input: 0 };
                let fact = match rpcscan::parse(json.as_bytes()) {
                    Ok(msg) => Fact::of(&msg, at),
                    Err(_) => Fact::new(rpcscan::Kind::Invalid, at),
                };
                if !all && !fact.is_directed() {
                    continue;
                }
                got.push(match directions.direction_of(&fact, Some(label.as_bytes())) {
                    Some(Direction::There) => '>',
                    Some(Direction::Back) => '<',
                    None => '-',
                });
            }
            let want = labels.map(|l| l.map(str::as_bytes));
            assert_eq!(directions.labels(), want, "{name} (all facts: {all})");
            assert_eq!(directions.undirected(), undirected, "{name} (all facts: {all})");
            if all {
                assert_eq!(got, arrows, "{name}");
            }
        }
    }
}
