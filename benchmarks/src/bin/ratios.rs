//! The comparison ratios (rpcscan against the baselines), measured interleaved (not a criterion benchmark): every round times
//! each contender once over the same corpus, one after the other, and a ratio is taken
//! within each round. On a shared, noisy machine a slow spell then hits both sides of a
//! ratio instead of whichever function criterion happened to be measuring; the medians of
//! the per-round ratios are what this prints.
//!
//! ```text
//! cargo run --profile bench -p rpcscan-benchmarks --bin ratios -- small 40   # SHAPE ROUNDS [SEED]
//! ```
//!
//! SHAPE is one of `tiny small mixed code cjk image` (see `rpcscan_benchmarks::shapes`).
//! The contenders: rpcscan strict and envelope, serde_json `RawValue`, sonic-rs checked,
//! simdjson DOM and On-Demand (at the level rpcscan runs at: fallback, haswell, icelake;
//! skipped, loudly, in a build without simdjson), sonic-rs unchecked on the valid-JSON
//! subset, and a memchr count of newlines (the floor: every byte touched once).
//!
//! Every contender's kind counts are checked against the oracle first (rpcscan's exactly,
//! the baselines within 2% of the valid kinds, as in `benches/classify.rs`).

use rpcscan::{Kind, Parser, Validation};
use std::hint::black_box;
use std::time::Instant;

use rpcscan_benchmarks::simdjson::{self, Simdjson};
use rpcscan_benchmarks::{baselines, shapes};

type Counts = [usize; 5];

fn count(lines: &[&[u8]], f: &mut dyn FnMut(&[u8]) -> Kind) -> Counts {
    let mut counts = [0; 5];
    for line in lines {
        counts[f(line) as usize] += 1;
    }
    counts
}

fn oracle(lines: &[&[u8]]) -> Counts {
    count(lines, &mut |l| match rpcscan_oracle::classify(l).kind {
        rpcscan_oracle::Kind::Request => Kind::Request,
        rpcscan_oracle::Kind::Notification => Kind::Notification,
        rpcscan_oracle::Kind::Result => Kind::Result,
        rpcscan_oracle::Kind::Error => Kind::Error,
        rpcscan_oracle::Kind::Invalid => Kind::Invalid,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let shape = args.next().unwrap_or_else(|| "small".into());
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(30);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let Some(mut corpus) = shapes::corpus(&shape, 4 << 20, seed) else {
        eprintln!("unknown shape {shape:?}: one of {:?}", shapes::SHAPES);
        std::process::exit(2);
    };
    let len = corpus.len();
    // simdjson reads up to 64 bytes past a message: the last one gets them here.
    corpus.extend_from_slice(&[b' '; simdjson::PADDING]);
    let corpus = &corpus[..];
    let lines: Vec<&[u8]> =
        corpus[..len].split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    // Unchecked parsers are only defined on valid JSON: both sides of that ratio get it.
    let (valid, valid_bytes) = rpcscan_oracle::corpus::valid_json_lines(&lines);

    let strict = Parser::new();
    let envelope = Parser::new().validation(Validation::Envelope);
    let want = oracle(&lines);
    assert_eq!(count(&lines, &mut |l| strict.classify(l)), want, "strict");
    assert_eq!(count(&lines, &mut |l| envelope.classify(l)), want, "envelope");
    assert_eq!(
        count(&valid, &mut |l| envelope.classify(l)),
        oracle(&valid),
        "envelope, valid subset"
    );
    let near = |c: Counts, w: Counts, n: usize| {
        let v = |c: &Counts| c[..4].iter().sum::<usize>();
        v(&c).abs_diff(v(&w)) * 50 <= n
    };
    assert!(near(count(&lines, &mut baselines::serde_raw), want, lines.len()), "serde_json");
    assert!(near(count(&lines, &mut baselines::sonic_checked), want, lines.len()), "sonic-rs");
    assert!(near(count(&valid, &mut baselines::sonic_unchecked), oracle(&valid), valid.len()));

    let level = rpcscan::kernel_level();
    let sj = Simdjson::for_level(level.as_str()).map(std::cell::RefCell::new);
    match &sj {
        Some(sj) => {
            let mut p = sj.borrow_mut();
            // SAFETY: every line lies in `corpus`, which has PADDING bytes after the last.
            let dom = count(&lines, &mut |l| unsafe { p.dom(l) });
            assert!(near(dom, want, lines.len()), "simdjson DOM {dom:?} {want:?}");
            // SAFETY: as above.
            let od = count(&lines, &mut |l| unsafe { p.ondemand(l) });
            assert!(near(od, want, lines.len()), "simdjson On-Demand {od:?} {want:?}");
        }
        None => eprintln!(
            "!!! simdjson contenders SKIPPED: {} (install libsimdjson-dev and rebuild)",
            if simdjson::available() { "no implementation for this level" } else { "not built" }
        ),
    }

    // (name, whole corpus or valid subset, classifier)
    type Job<'a> = (&'static str, bool, Box<dyn FnMut(&[u8]) -> Kind + 'a>);
    let mut jobs: Vec<Job> = vec![
        ("rpcscan strict", true, Box::new(|l| strict.classify(l))),
        ("rpcscan envelope", true, Box::new(|l| envelope.classify(l))),
        ("serde_json RawValue", true, Box::new(baselines::serde_raw)),
        ("sonic-rs checked", true, Box::new(baselines::sonic_checked)),
        ("rpcscan envelope (valid)", false, Box::new(|l| envelope.classify(l))),
        ("sonic-rs unchecked (valid)", false, Box::new(baselines::sonic_unchecked)),
    ];
    if let Some(sj) = &sj {
        // SAFETY: every line lies in `corpus`, which has PADDING bytes after the last.
        jobs.push(("simdjson DOM", true, Box::new(|l| unsafe { sj.borrow_mut().dom(l) })));
        // SAFETY: as above.
        jobs.push((
            "simdjson On-Demand",
            true,
            Box::new(|l| unsafe { sj.borrow_mut().ondemand(l) }),
        ));
    }
    let mut secs: Vec<Vec<f64>> = vec![Vec::new(); jobs.len() + 1];
    for _ in 0..rounds {
        for (k, (_, all, f)) in jobs.iter_mut().enumerate() {
            let input = if *all { &lines } else { &valid };
            let t = Instant::now();
            black_box(count(black_box(input), f.as_mut()));
            secs[k].push(t.elapsed().as_secs_f64());
        }
        let t = Instant::now();
        black_box(memchr::memchr_iter(b'\n', black_box(&corpus[..len])).count());
        secs[jobs.len()].push(t.elapsed().as_secs_f64());
    }

    let mib = |bytes: usize, s: f64| bytes as f64 / s / (1 << 20) as f64;
    println!(
        "{shape} traffic, {len} bytes in {} messages ({valid_bytes} valid-JSON), {rounds} rounds, kernel level {level}{}",
        lines.len(),
        sj.as_ref().map_or(String::new(), |sj| {
            let (dom, od) = &sj.borrow().implementations;
            format!(", simdjson {dom} (DOM) / {od} (On-Demand)")
        })
    );
    for (k, (name, all, _)) in jobs.iter().enumerate() {
        let bytes = if *all { len } else { valid_bytes };
        println!("  {name:<28} {:>8.0} MiB/s (median round)", mib(bytes, median(secs[k].clone())));
    }
    let memchr = jobs.len();
    println!(
        "  {:<28} {:>8.0} MiB/s (median round)",
        "memchr newlines",
        mib(len, median(secs[memchr].clone()))
    );
    // Per-round ratio of throughputs a/b = time(b)/time(a), then the median over rounds.
    let ratio =
        |a: usize, b: usize| median(secs[a].iter().zip(&secs[b]).map(|(ta, tb)| tb / ta).collect());
    // The faster of serde_json RawValue and sonic-rs checked, per round.
    let best_rust = median((0..rounds).map(|r| secs[2][r].min(secs[3][r]) / secs[0][r]).collect());
    println!("median of per-round ratios (targets):");
    println!("  strict / best of RawValue, sonic   {:>6.2}x  (>= 1.2)", best_rust);
    println!("  strict / sonic-rs checked          {:>6.2}x", ratio(0, 3));
    println!("  strict / serde_json RawValue       {:>6.2}x", ratio(0, 2));
    if sj.is_some() {
        println!("  strict / simdjson DOM              {:>6.2}x  (>= 1.5)", ratio(0, 6));
        println!("  envelope / simdjson On-Demand      {:>6.2}x  (>= 1.5)", ratio(1, 7));
    }
    println!("  envelope / strict                  {:>6.2}x  (>= 1)", ratio(1, 0));
    println!("  envelope / sonic-rs unchecked      {:>6.2}x", ratio(4, 5));
    println!(
        "  memchr / strict                    {:>6.2}x  (<= 2 on long strings)",
        1.0 / ratio(0, memchr)
    );
    println!(
        "  memchr / envelope                  {:>6.2}x  (<= 1.3 on long strings)",
        1.0 / ratio(1, memchr)
    );
}
