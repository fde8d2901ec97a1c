//! No check contradicts another, on every fixture tree (tests/fixtures/*/ with sys/), with
//! and without HSA_OVERRIDE_GFX_VERSION, with every venv a fixture has:
//! - two checks that state whether a library has code objects for a target agree;
//! - a fix never points at a check that is ok.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::testutil::FakeHost;
use super::{check_all, Check, Status};
use crate::sysroot::SysRoot;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures");

fn fixture_roots() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("sys").is_dir())
        .collect();
    v.sort();
    v
}

/// `--python` values worth trying below `root`: none, and every venv in home/*/.
fn pythons(root: &Path) -> Vec<Option<String>> {
    let mut v = vec![None];
    for home in std::fs::read_dir(root.join("home"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for venv in std::fs::read_dir(home.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if venv.path().join("pyvenv.cfg").is_file() {
                let rel = venv.path().strip_prefix(root).unwrap().join("bin/python");
                v.push(Some(format!("/{}", rel.display())));
            }
        }
    }
    v
}

/// Whether `text` names check `id` as a whole word (a sentence's full stop may follow).
fn names(text: &str, id: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    text.match_indices(id).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_some_and(word);
        let rest = &text[i + id.len()..];
        let after = match rest.strip_prefix('.') {
            Some(r) => r.chars().next().is_some_and(word),
            None => rest.chars().next().is_some_and(word),
        };
        !before && !after
    })
}

fn contradictions(checks: &[Check]) -> Vec<String> {
    let mut bad = Vec::new();
    let mut said: BTreeMap<(String, String), (bool, &str)> = BTreeMap::new();
    for c in checks {
        for cl in &c.claims {
            let key = (cl.lib.clone(), cl.target.clone());
            match said.get(&key) {
                Some((p, by)) if *p != cl.present => bad.push(format!(
                    "{by} and {} disagree whether {} has {} code objects",
                    c.id, cl.lib, cl.target
                )),
                Some(_) => {}
                None => {
                    said.insert(key, (cl.present, c.id));
                }
            }
        }
    }
    for c in checks {
        let Some(fix) = &c.fix else { continue };
        for other in checks {
            if other.id != c.id && other.status == Status::Ok && names(fix, other.id) {
                bad.push(format!(
                    "{}'s fix points at {}, which is ok: {fix}",
                    c.id, other.id
                ));
            }
        }
    }
    bad
}

#[test]
fn word_matching() {
    assert!(names("see rocm.rocblas", "rocm.rocblas"));
    assert!(names("(see torch.rocblas), but", "torch.rocblas"));
    assert!(!names("see torch.rocblas", "rocm.rocblas"));
    assert!(!names("see gpu.rdna1x", "gpu.rdna1"));
}

#[test]
fn a_contradiction_is_caught() {
    use super::Claim;
    let claim = |present| Claim {
        lib: "/x".into(),
        target: "gfx1010".into(),
        present,
    };
    let checks = [
        Check::ok("a", "has it").claiming(vec![claim(true)]),
        Check::fail("b", "lacks it", "see a").claiming(vec![claim(false)]),
    ];
    let bad = contradictions(&checks);
    assert_eq!(bad.len(), 2, "{bad:?}");
}

#[test]
fn no_check_contradicts_another_on_any_fixture() {
    let mut runs = 0;
    let mut bad = Vec::new();
    for root in fixture_roots() {
        for python in pythons(&root) {
            for over in [None, Some("10.3.0"), Some("10.1.0")] {
                let mut host = FakeHost::default().with_var("PATH", "/usr/bin:/bin");
                if let Some(o) = over {
                    host = host.with_var("HSA_OVERRIDE_GFX_VERSION", o);
                }
                let checks = check_all(
                    &SysRoot::new(root.clone()),
                    &host,
                    python.as_deref().map(Path::new),
                );
                runs += 1;
                for b in contradictions(&checks) {
                    bad.push(format!(
                        "{} python {python:?} override {over:?}: {b}",
                        root.display()
                    ));
                }
            }
        }
    }
    assert!(runs >= 20, "{runs}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
