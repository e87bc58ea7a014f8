//! Valid-but-nasty messages from the fuzzer's choices (the `arbitrary` model, or the
//! oracle's seeded generator and mutator), checked against the oracle, both modes, and
//! every accessor.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rpcscan_fuzz::model::Generated;
use rpcscan_testkit::check;

#[derive(Arbitrary, Debug)]
enum Input {
    /// The `arbitrary` model: the fuzzer's bytes are the generator's choices.
    Model(Generated),
    /// `rpcscan_oracle::gen::message(seed)`, byte-mutated when `mutation` is set.
    Seeded { seed: u64, mutation: Option<u64> },
}

fuzz_target!(|input: Input| {
    let (bytes, id) = match input {
        Input::Model(m) => (m.bytes, m.id),
        Input::Seeded { seed, mutation } => {
            let msg = rpcscan_oracle::gen::message(seed);
            match mutation {
                Some(m) => (rpcscan_oracle::gen::mutate(m, &msg), None),
                None => (msg, None),
            }
        }
    };
    check::differential(&bytes);
    check::classify(&bytes);
    check::accessors(&bytes, id.as_deref());
});
