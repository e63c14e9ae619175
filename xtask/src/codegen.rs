//! `cargo xtask codegen`: regenerates the TypeScript wire types from the Rust types.
//!
//! The generator is a tether-core test that compares the committed TypeScript with what the Rust
//! types produce; with `UPDATE_EXPECT=1` (expect-test's switch) it rewrites the file instead of
//! failing. Running that same test keeps one code path for "generate" and "check fresh".

use crate::cmd::Cmd;
use crate::project::Project;

/// The tether-core integration test that owns the generated TypeScript.
const TYPESCRIPT_TEST: &str = "typescript";

pub fn run(project: &Project) -> anyhow::Result<()> {
    Cmd::new("cargo")
        .args(["test", "-p", "tether-core", "--test", TYPESCRIPT_TEST])
        .env("UPDATE_EXPECT", "1")
        .dir(&project.root)
        .run()?;
    eprintln!("codegen: TypeScript wire types are up to date (extension/src/generated/)");
    Ok(())
}
