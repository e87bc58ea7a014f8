//! napi-rs's link settings for a Node add-on.
fn main() {
    napi_build::setup();
}
