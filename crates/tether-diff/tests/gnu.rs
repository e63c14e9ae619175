//! Our diffs checked against GNU diffutils and GNU patch on a corpus generated here: GNU `patch`
//! applies our unified patches (whole and for chosen subsets of hunks) to give exactly what our
//! own `apply` gives, and our `apply` agrees with GNU `diff -u` piped through GNU `patch`.
//!
//! The tools are required, not optional: without them the test fails and says what to install.

use std::path::Path;
use std::process::Command;

use tether_diff::{Budget, Hunk, PatchOptions, apply, diff_lines, unified_patch};

const CONTENTS: &[&str] = &["a", "b", "fn x() {", "}", "", "a\r", "e\u{301}t\u{e9}", "👍🏽 ok", "日本語", "  x = 1;"];
const ENDINGS: &[&str] = &["\n", "\n", "\n", "\r\n", ""];

/// A small deterministic generator (xorshift64*), so the corpus is the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }

    fn text(&mut self, max_lines: usize) -> Vec<String> {
        let count = self.below(max_lines + 1);
        (0..count)
            .map(|_| format!("{}{}", CONTENTS[self.below(CONTENTS.len())], ENDINGS[self.below(ENDINGS.len())]))
            .collect()
    }
}

fn corpus() -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = [
        ("", ""),
        ("", "new\n"),
        ("old\n", ""),
        ("a\nb\n", "a\r\nb\r\n"),
        ("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"),
        ("no newline", "no newline\n"),
        ("x\nno newline", "x\nchanged, still none"),
        ("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\nELEVEN\n12\n"),
    ]
    .iter()
    .map(|&(old, new)| (old.to_owned(), new.to_owned()))
    .collect();
    let mut rng = Rng(0x7e7e_4e11_d1ff_0001);
    for _ in 0..120 {
        let old = rng.text(30);
        let new: String = if rng.below(4) == 0 {
            rng.text(30).concat()
        } else {
            let mut new = String::new();
            for line in &old {
                match rng.below(6) {
                    0 => {}
                    1 => new.push_str(&rng.text(3).concat()),
                    2 => {
                        new.push_str(&rng.text(2).concat());
                        new.push_str(line);
                    }
                    _ => new.push_str(line),
                }
            }
            new
        };
        pairs.push((old.concat(), new));
    }
    pairs
}

fn run(dir: &Path, program: &str, args: &[&str]) -> (i32, String) {
    let output = Command::new(program).args(args).current_dir(dir).output().unwrap_or_else(|error| {
        panic!(
            "could not run GNU `{program}` ({error}); install it (Debian: `apt-get install diffutils patch`) \
             to run the GNU compatibility test"
        )
    });
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), text)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("reading {}: {error}", path.display()))
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|error| panic!("writing {}: {error}", path.display()));
}

/// Applies a unified patch headed `f.txt` to `old` with `patch -p0`, as a person or the agent
/// would, and returns the patched file.
fn gnu_patch(dir: &Path, old: &str, patch: &str) -> String {
    let target = dir.join("f.txt");
    write(&target, old);
    write(&dir.join("p.patch"), patch);
    let (code, output) = run(dir, "patch", &["-p0", "--batch", "--no-backup-if-mismatch", "-i", "p.patch"]);
    assert_eq!(code, 0, "GNU patch refused our patch:\n{output}\n{patch}");
    assert!(!output.contains("fuzz") && !output.contains("offset"), "GNU patch had to guess:\n{output}\n{patch}");
    // GNU patch removes a file a patch empties only when asked to (`-E`), so it is still there.
    read(&target)
}

#[test]
fn gnu_diff_and_patch_agree_with_us() {
    for tool in ["diff", "patch"] {
        let (code, version) = run(Path::new("."), tool, &["--version"]);
        assert!(
            code == 0 && version.contains("GNU"),
            "`{tool}` is not GNU {tool}; install Debian's `diffutils` and `patch`"
        );
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let dir = dir.path();

    for (case, (old, new)) in corpus().iter().enumerate() {
        let diff = diff_lines(old, new, &Budget::UNLIMITED);
        let all: Vec<usize> = (0..diff.hunks.len()).collect();
        assert_eq!(apply(old, &diff.hunks, &all).as_ref(), Ok(new), "case {case}");

        // GNU's own diff through GNU patch gives the new text, and so does our apply.
        write(&dir.join("old.txt"), old);
        write(&dir.join("new.txt"), new);
        let (code, gnu) = run(dir, "diff", &["-u", "old.txt", "new.txt"]);
        assert!(code == 0 || code == 1, "GNU diff failed on case {case}: {gnu}");
        if code == 1 {
            let gnu = gnu.replacen("--- old.txt", "--- f.txt", 1).replacen("+++ new.txt", "+++ f.txt", 1);
            assert_eq!(&gnu_patch(dir, old, &gnu), new, "GNU diff -u through GNU patch, case {case}");
        }

        for context in [0, 1, 3] {
            let options = PatchOptions { old_name: "f.txt", new_name: "f.txt", context };
            // Our whole patch, through GNU patch, gives the new text.
            let patch = unified_patch(old, &diff.hunks, &options).expect("fresh hunks fit");
            assert_eq!(patch.is_empty(), old == new);
            if !patch.is_empty() {
                assert_eq!(&gnu_patch(dir, old, &patch), new, "our patch, context {context}, case {case}:\n{patch}");
            }
            // The patch of a chosen subset, through GNU patch, gives what our apply gives.
            let chosen: Vec<usize> = all.iter().copied().filter(|i| (i + case + context) % 3 != 0).collect();
            let hunks: Vec<Hunk> = chosen.iter().map(|&i| diff.hunks[i].clone()).collect();
            let patch = unified_patch(old, &hunks, &options).expect("a subset of fresh hunks fits");
            let ours = apply(old, &diff.hunks, &chosen).expect("fresh hunks apply");
            let theirs = if patch.is_empty() { old.clone() } else { gnu_patch(dir, old, &patch) };
            assert_eq!(theirs, ours, "subset {chosen:?}, context {context}, case {case}:\n{patch}");
        }
    }
}
