//! The house rules of docs/ARCHITECTURE.md, checked on the source: no command imports another,
//! and the domain modules never import a command or the command line.

use std::fs;
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `crate::commands::NAME` a file names. (Commands name each other only this way: the
/// modules are `pub` from the crate root, and `super::` paths stay inside a command folder.)
fn commands_named(text: &str) -> Vec<String> {
    text.match_indices("crate::commands::")
        .map(|(i, m)| {
            text[i + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn no_command_imports_another() {
    let dir = Path::new(SRC).join("commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(files.len() > 10, "{files:?}");
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&dir).unwrap();
        let own = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        let text = fs::read_to_string(f).unwrap();
        for name in commands_named(&text) {
            if name != own {
                bad.push(format!("{}: crate::commands::{name}", rel.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "commands importing other commands:\n{}",
        bad.join("\n")
    );
}

#[test]
fn domain_modules_never_import_commands_or_the_command_line() {
    let mut files = Vec::new();
    rust_files(Path::new(SRC), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(SRC).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        if ["commands", "cli.rs", "main.rs", "lib.rs"].contains(&top.as_ref()) {
            continue;
        }
        let text = fs::read_to_string(f).unwrap();
        for needle in ["crate::commands", "crate::cli", "rdna1ctl::commands"] {
            if text.contains(needle) {
                bad.push(format!("{}: {needle}", rel.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "domain modules reaching up:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_checks_see_an_import() {
    assert_eq!(
        commands_named("use crate::commands::status::tests::set;\nuse crate::gpus;"),
        ["status"]
    );
}
