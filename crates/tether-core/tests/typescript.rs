//! The committed TypeScript wire types must be exactly what the Rust types generate. When this
//! fails, run `cargo xtask codegen` (or `UPDATE_EXPECT=1 cargo test -p tether-core --test
//! typescript`) and commit the result, so the host and the webview compile against the real wire.

#[test]
fn generated_typescript_is_fresh() {
    expect_test::expect_file!["../../../extension/src/generated/protocol.ts"]
        .assert_eq(&tether_core::typescript::generate());
}

/// `tether.permissions.defaultMode` in the extension's manifest offers exactly the engine's modes,
/// in the picker's order, with the same labels and descriptions: VS Code's settings editor shows
/// the manifest, so a mode added in Rust and not there (or worded differently) is caught here.
#[test]
fn the_default_mode_setting_offers_the_engines_modes() {
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../extension/package.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let setting = &manifest["contributes"]["configuration"]["properties"]["tether.permissions.defaultMode"];
    let modes = tether_core::permissions::Mode::ALL;
    let ids: Vec<serde_json::Value> = modes.iter().map(|mode| serde_json::to_value(mode).unwrap()).collect();
    assert_eq!(setting["enum"], serde_json::Value::Array(ids));
    let labels: Vec<&str> = modes.iter().map(|mode| mode.label()).collect();
    assert_eq!(setting["enumItemLabels"], serde_json::json!(labels));
    let descriptions: Vec<&str> = modes.iter().map(|mode| mode.description()).collect();
    assert_eq!(setting["enumDescriptions"], serde_json::json!(descriptions));
}
