//! The Python a run uses, and whether it can run the workload at all.
//!
//! `sudo -E` keeps VIRTUAL_ENV and CONDA_PREFIX but not PATH where sudoers sets `secure_path`
//! (Debian's, Ubuntu's and Fedora's defaults), so `python3` would be the system's, without the
//! owner's PyTorch. When the active environment's `bin` is not on PATH it is put first on the
//! command's PATH, and a bare `python`/`python3` is taken from it. Before the runs, that
//! interpreter is asked (as the user, with the run's environment) what it has: torch's version,
//! its HIP and CUDA versions and the GPUs it sees; a Python without torch, a CUDA or CPU build,
//! or no GPU visible is a broken environment, reported as such, never as a result.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::progress::Progress;
use super::user::RunAs;
use super::workload::{self, EnvChanges};

/// How long the interpreter has to answer (importing torch from a cold disk takes a while).
const PROBE_TIMEOUT: Duration = Duration::from_secs(120);

/// Asked of the interpreter: never raises; one JSON line.
const PROBE: &str = r#"
import json, sys
r = {"python": sys.executable, "version": sys.version.split()[0]}
try:
    import torch
except Exception as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
else:
    r["torch"] = getattr(torch, "__version__", None)
    r["hip"] = getattr(torch.version, "hip", None)
    r["cuda"] = getattr(torch.version, "cuda", None)
    try:
        r["gpus"] = []
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            r["gpus"].append({"name": p.name, "arch": getattr(p, "gcnArchName", None)})
    except Exception as e:
        r["gpu_error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(r))
"#;

/// The environment the command's Python comes from, when sudo dropped it from PATH.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Activated {
    /// `VIRTUAL_ENV` or `CONDA_PREFIX`.
    pub from: String,
    /// Its `bin`, put first on the command's PATH.
    pub bin: PathBuf,
}

/// `PYTHON's torch VERSION is a CUDA build (CUDA 13.0), not ROCm` (or a CPU-only build).
pub fn not_rocm(python: &str, torch: &str, cuda: Option<&str>) -> String {
    match cuda {
        Some(c) => format!("{python}'s torch {torch} is a CUDA build (CUDA {c}), not ROCm"),
        None => format!("{python}'s torch {torch} is a CPU-only build, not ROCm"),
    }
}

/// Whether `argv0` runs Python (`python`, `python3`, `python3.12`, a path to one).
pub fn is_python(argv0: &OsStr) -> bool {
    let name = Path::new(argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(rest) = name.strip_prefix("python") else {
        return false;
    };
    rest.is_empty() || rest.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The active environment whose `bin` is missing from `path`: (variable, its bin).
pub fn activated(
    path: Option<&OsStr>,
    var: impl Fn(&str) -> Option<OsString>,
) -> Option<Activated> {
    let on_path = |bin: &Path| path.is_some_and(|p| std::env::split_paths(p).any(|d| d == bin));
    ["VIRTUAL_ENV", "CONDA_PREFIX"].into_iter().find_map(|v| {
        let dir = PathBuf::from(var(v).filter(|d| !d.is_empty())?);
        if !dir.is_absolute() {
            return None;
        }
        let bin = dir.join("bin");
        (bin.is_dir() && !on_path(&bin)).then(|| Activated {
            from: v.to_owned(),
            bin,
        })
    })
}

/// The command as it will run: its argv with the environment's Python, the change to its
/// environment (PATH), and the environment put first on PATH, if one was.
pub struct Resolved {
    pub argv: Vec<OsString>,
    pub env: EnvChanges,
    pub activated: Option<Activated>,
}

impl Resolved {
    /// `given` as this process's environment (PATH, VIRTUAL_ENV, CONDA_PREFIX) makes it run.
    pub fn of(given: &[OsString]) -> Resolved {
        let path = std::env::var_os("PATH");
        let activated = activated(path.as_deref(), |v| std::env::var_os(v));
        let (argv, env) = resolve(given, activated.as_ref(), path.as_deref());
        Resolved {
            argv,
            env,
            activated,
        }
    }

    /// `VIRTUAL_ENV is not on PATH (sudo resets PATH): using /home/u/venv/bin`, if it was not.
    pub fn note(&self) -> Option<String> {
        self.activated.as_ref().map(|a| {
            format!(
                "{} is not on PATH (sudo resets PATH): using {}",
                a.from,
                a.bin.display()
            )
        })
    }
}

/// The command with its environment's Python: a bare Python name in `argv[0]` taken from the
/// activated environment, and that `bin` first on PATH (returned as a change to apply).
pub fn resolve(
    argv: &[OsString],
    act: Option<&Activated>,
    path: Option<&OsStr>,
) -> (Vec<OsString>, EnvChanges) {
    let mut argv = argv.to_vec();
    let mut env = EnvChanges::default();
    let Some(a) = act else {
        return (argv, env);
    };
    let mut new_path = a.bin.clone().into_os_string();
    if let Some(p) = path.filter(|p| !p.is_empty()) {
        new_path.push(":");
        new_path.push(p);
    }
    env.set.push(("PATH".into(), new_path));
    if let Some(first) = argv.first_mut()
        && is_python(first)
        && !first.to_string_lossy().contains('/')
        && a.bin.join(&*first).is_file()
    {
        *first = a.bin.join(&*first).into_os_string();
    }
    (argv, env)
}

/// What the interpreter said of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Probe {
    /// The interpreter (`sys.executable`) and its version.
    pub python: Option<String>,
    pub version: Option<String>,
    /// torch's `__version__`, `version.hip`, `version.cuda`.
    pub torch: Option<String>,
    pub hip: Option<String>,
    pub cuda: Option<String>,
    /// The GPUs torch sees.
    #[serde(default)]
    pub gpus: Vec<ProbeGpu>,
    /// Why `import torch` failed, or the GPUs could not be listed, or the interpreter could
    /// not be asked.
    pub error: Option<String>,
    pub gpu_error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbeGpu {
    pub name: String,
    /// `gcnArchName` (ROCm builds), e.g. `gfx1010:xnack-`.
    pub arch: Option<String>,
}

impl Probe {
    /// Asks `python` (as `user`, with `env`).
    pub fn ask(
        python: &OsStr,
        user: Option<&RunAs>,
        env: &EnvChanges,
        stop: &AtomicBool,
        progress: &mut Progress,
    ) -> Probe {
        let argv = vec![python.to_owned(), "-c".into(), PROBE.into()];
        let rec = workload::run_with(
            &argv,
            user,
            env,
            PROBE_TIMEOUT,
            stop,
            None,
            progress,
            "python",
        );
        Probe::from_run(python, &rec)
    }

    /// From what the probe printed.
    pub fn from_run(python: &OsStr, rec: &workload::Record) -> Probe {
        let shown = python.to_string_lossy();
        if let Some(e) = &rec.spawn_error {
            return Probe {
                error: Some(format!("{e} (not found as the user the command runs as)")),
                ..Probe::default()
            };
        }
        let line = rec
            .stdout_tail
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Probe>(l.trim()).ok());
        match line {
            Some(p) => p,
            None => Probe {
                error: Some(format!(
                    "{shown} did not answer ({}): {}",
                    if rec.timed_out {
                        "timed out".to_owned()
                    } else {
                        format!("exit {:?}", rec.exit_code)
                    },
                    rec.stderr_tail
                        .lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("no output")
                )),
                ..Probe::default()
            },
        }
    }

    /// `/home/u/venv/bin/python3 (Python 3.12.3), torch 2.9.1+rocm6.4, HIP 6.4.1, GPU 0: AMD
    /// Radeon RX 5700 XT (gfx1010)`.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} (Python {})",
            self.python.as_deref().unwrap_or("?"),
            self.version.as_deref().unwrap_or("?")
        );
        match &self.torch {
            Some(t) => {
                s += &format!(", torch {t}");
                s += &match (&self.hip, &self.cuda) {
                    (Some(h), _) => format!(", HIP {h}"),
                    (None, Some(c)) => format!(", CUDA {c} (not ROCm)"),
                    (None, None) => ", CPU only".to_owned(),
                };
                for (i, g) in self.gpus.iter().enumerate() {
                    s += &format!(
                        ", GPU {i}: {}{}",
                        g.name,
                        g.arch
                            .as_ref()
                            .map(|a| format!(" ({a})"))
                            .unwrap_or_default()
                    );
                }
            }
            None => s += ", no torch",
        }
        s
    }

    /// Why this Python cannot run ROCm training, or None.
    pub fn problem(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(match &self.python {
                Some(py) => format!("{py} cannot import torch: {e}"),
                None => e.clone(),
            });
        }
        let py = self.python.as_deref().unwrap_or("the interpreter");
        let torch = self.torch.as_deref().unwrap_or("?");
        if !super::stand_in::is_rocm(self.hip.as_deref(), self.cuda.as_deref()) {
            return Some(not_rocm(py, torch, self.cuda.as_deref()));
        }
        if self.gpus.is_empty() {
            return Some(format!(
                "{py}'s torch {torch} sees no GPU{}",
                self.gpu_error
                    .as_ref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_names() {
        for yes in [
            "python",
            "python3",
            "python3.12",
            "/v/bin/python3",
            "./python",
        ] {
            assert!(is_python(OsStr::new(yes)), "{yes}");
        }
        for no in [
            "pythonista",
            "sh",
            "python-config",
            "ipython",
            "/usr/bin/env",
        ] {
            assert!(!is_python(OsStr::new(no)), "{no}");
        }
    }

    #[test]
    fn sudos_reset_path_gets_the_venv_back() {
        let venv = std::env::temp_dir().join(format!("rdna1ctl-venv-{}", std::process::id()));
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(venv.join("bin/python3"), "").unwrap();
        let var = |v: &str| (v == "VIRTUAL_ENV").then(|| venv.clone().into_os_string());
        let secure = OsStr::new("/usr/sbin:/usr/bin:/sbin:/bin");
        let a = activated(Some(secure), var).unwrap();
        assert_eq!(
            (a.from.as_str(), a.bin.clone()),
            ("VIRTUAL_ENV", venv.join("bin"))
        );
        let argv = vec![OsString::from("python3"), OsString::from("train.py")];
        let (got, env) = resolve(&argv, Some(&a), Some(secure));
        assert_eq!(got[0], venv.join("bin/python3"));
        assert_eq!(got[1], "train.py");
        let path = format!(
            "{}:/usr/sbin:/usr/bin:/sbin:/bin",
            venv.join("bin").display()
        );
        assert_eq!(env.set, [(OsString::from("PATH"), OsString::from(path))]);
        // Already on PATH (an activated shell without sudo): nothing to do.
        let on = venv.join("bin").into_os_string();
        assert_eq!(activated(Some(&on), var), None);
        // A path given in full stays as given.
        let argv = vec![OsString::from("/usr/bin/python3")];
        assert_eq!(resolve(&argv, Some(&a), Some(secure)).0, argv);
        std::fs::remove_dir_all(&venv).unwrap();
    }

    #[test]
    fn a_broken_environment_is_named() {
        let rec = |out: &str| workload::Record {
            exit_code: Some(0),
            stdout_tail: out.into(),
            ..Default::default()
        };
        let py = OsStr::new("python3");
        let p = Probe::from_run(
            py,
            &rec(
                r#"{"python": "/usr/bin/python3", "version": "3.11.2", "error": "ModuleNotFoundError: No module named 'torch'"}"#,
            ),
        );
        assert_eq!(
            p.problem().unwrap(),
            "/usr/bin/python3 cannot import torch: ModuleNotFoundError: No module named 'torch'"
        );
        let p = Probe::from_run(
            py,
            &rec(
                r#"{"python": "/v/bin/python", "version": "3.12", "torch": "2.11.0+cu130", "hip": null, "cuda": "13.0", "gpus": []}"#,
            ),
        );
        assert!(p.problem().unwrap().contains("CUDA build"), "{p:?}");
        let p = Probe::from_run(
            py,
            &rec(
                r#"{"python": "/v/bin/python", "version": "3.12", "torch": "2.9.1+rocm6.4", "hip": "6.4.1", "cuda": null, "gpus": []}"#,
            ),
        );
        assert!(p.problem().unwrap().contains("sees no GPU"), "{p:?}");
        let p = Probe::from_run(
            py,
            &rec(
                r#"{"python": "/v/bin/python", "version": "3.12", "torch": "2.9.1+rocm6.4", "hip": "6.4.1", "cuda": null, "gpus": [{"name": "AMD Radeon RX 5700 XT", "arch": "gfx1010:xnack-"}]}"#,
            ),
        );
        assert_eq!(p.problem(), None);
        assert!(p
            .describe()
            .contains("HIP 6.4.1, GPU 0: AMD Radeon RX 5700 XT (gfx1010:xnack-)"));
        let p = Probe::from_run(
            py,
            &workload::Record {
                spawn_error: Some("could not start python3: No such file or directory".into()),
                ..Default::default()
            },
        );
        assert!(p.problem().unwrap().contains("could not start python3"));
    }
}
