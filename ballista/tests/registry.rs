//! The negative control: Ballista's own registry does not know rpcscan's functions; ours
//! has them next to every built-in.

use ballista_core::registry::BallistaFunctionRegistry;
use datafusion::execution::FunctionRegistry;

#[test]
fn a_plain_ballista_registry_does_not_know_rpc_kind() {
    let plain = BallistaFunctionRegistry::default();
    assert!(plain.udf("rpc_kind").is_err());
    assert!(plain.udf("abs").is_ok());
}

#[test]
fn ours_adds_every_rpcscan_function_and_keeps_the_built_ins() {
    let plain = BallistaFunctionRegistry::default();
    let ours = rpcscan_ballista::function_registry();
    for name in [
        "rpc_kind",
        "rpc_method",
        "rpc_id",
        "rpc_error_code",
        "rpc_tool_name",
        "rpc_invalid_reason",
        "rpc_scan",
        "rpc_text",
    ] {
        assert!(ours.udf(name).is_ok(), "{name}");
    }
    assert!(plain.udfs().is_subset(&ours.udfs()));
    assert_eq!(ours.udfs().len(), plain.udfs().len() + 8);
}

#[test]
fn the_scheduler_session_knows_them_too() {
    let state =
        rpcscan_ballista::scheduler_session_state(datafusion::prelude::SessionConfig::new())
            .unwrap();
    assert!(state.udf("rpc_scan").is_ok());
    assert!(state.udf("abs").is_ok());
}
