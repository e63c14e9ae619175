//! The committed TypeScript wire types must be exactly what the Rust types generate. When this
//! fails, run `cargo xtask codegen` (or `UPDATE_EXPECT=1 cargo test -p tether-core --test
//! typescript`) and commit the result, so the host and the webview compile against the real wire.

#[test]
fn generated_typescript_is_fresh() {
    expect_test::expect_file!["../../../extension/src/generated/protocol.ts"]
        .assert_eq(&tether_core::typescript::generate());
}
