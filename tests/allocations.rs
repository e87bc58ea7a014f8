//! Classifying and parsing allocate nothing (a counting global allocator proves it).

rpcscan_testkit::install_counting_allocator!();
use rpcscan_testkit::alloc::allocations_during;

use rpcscan::{Parser, Validation};

#[test]
fn classify_and_parse_allocate_nothing() {
    let corpus = rpcscan_oracle::corpus::generate(rpcscan_oracle::corpus::Mix::Mixed, 1 << 20, 7);
    let mut extra: Vec<Vec<u8>> = (0..2_000u64)
        .map(|seed| rpcscan_oracle::gen::mutate(seed, &rpcscan_oracle::gen::message(seed)))
        .collect();
    extra.push(format!("[{}]", r#"{"jsonrpc":"2.0","method":"m"},"#.repeat(10) + "1").into_bytes());
    extra.push(
        format!(
            r#"{{"jsonrpc":"2.0","method":"m","params":{}{}}}"#,
            "[".repeat(1000),
            "]".repeat(1000)
        )
        .into_bytes(),
    );
    let lines: Vec<&[u8]> =
        corpus.split(|&b| b == b'\n').chain(extra.iter().map(Vec::as_slice)).collect();
    let parsers = [Parser::new(), Parser::new().validation(Validation::Envelope)];
    // The kernel level is detected once per process (reading RPCSCAN_FORCE allocates);
    // that is start-up cost, not per message, so it happens before counting.
    rpcscan::classify(b"{}");
    assert!(!rpcscan::kernel_level().as_str().is_empty());
    let mut seen = [0usize; 5];
    let n = allocations_during(|| {
        for parser in parsers {
            for line in &lines {
                seen[parser.classify(line) as usize] += 1;
                if let Ok(m) = parser.parse(line) {
                    // The accessors borrow too.
                    let _ = (m.id(), m.method().map(|s| s == "tools/call"), m.params());
                    let _ = (m.error_code().and_then(|c| c.as_i64()), m.error_data());
                } else if let Err(e) = parser.parse(line) {
                    let _ = (e.reason().as_str(), e.code(), e.id(), e.offset());
                }
                if let Ok(batch) = parser.batch(line) {
                    batch.for_each(|r| {
                        let _ = r.map(|m| m.kind());
                    });
                }
            }
        }
    });
    assert_eq!(n, 0, "allocations while scanning {} messages", lines.len());
    // The corpus is not trivially all-invalid.
    assert!(seen.iter().all(|&c| c > 0), "{seen:?}");
}

/// Control: the counter does see allocations, so the zero above means something.
#[test]
fn the_counter_sees_allocations() {
    let n = allocations_during(|| {
        std::hint::black_box(Vec::<u8>::with_capacity(64));
    });
    assert_eq!(n, 1);
}
