//! The Python and PyTorch the owner trains with: which interpreter, where `torch` is, and
//! whether it is a ROCm build (`torch/version.py`: `hip = '...'`).
//!
//! The interpreter: `--python PATH`, else `$VIRTUAL_ENV/bin/python` (an active venv), else
//! the first `python3` on PATH. torch is never imported (that initialises HIP and takes
//! seconds): in a venv (`pyvenv.cfg` beside `bin/`) it is looked up in
//! `lib/python3.*/site-packages`; otherwise, on the running machine, the interpreter is asked
//! `importlib.util.find_spec("torch")` (with a timeout, as the invoking user, never as root
//! for a sudo user; see [`super::host`]); below a `--root` tree, or if that fails, the
//! distribution layouts are searched. All paths are read below `--root`, where `--python`
//! names the interpreter as the root's machine does (`/home/u/venv/bin/python`); a path
//! given as this machine names it (`/mnt/home/u/...`, already below `--root`) is taken
//! back inside. Symbolic links are followed inside the root ([`SysRoot::resolve`]).
//!
//! [`SysRoot::resolve`]: crate::sysroot::SysRoot::resolve

use std::path::{Path, PathBuf};

use super::{Check, Input};

/// Where torch is and what it says about itself.
#[derive(Debug)]
pub struct Torch {
    /// The `torch` package directory (below the root).
    pub dir: PathBuf,
    /// `__version__`, e.g. `2.9.1+rocm7.10.0`.
    pub version: Option<String>,
    /// `torch.version.hip`: `Some` for a ROCm build.
    pub hip: Option<String>,
    /// `torch.version.cuda`: `Some` for a CUDA build.
    pub cuda: Option<String>,
}

impl Torch {
    /// The site-packages directory torch sits in.
    pub fn site(&self) -> &Path {
        self.dir.parent().unwrap_or(&self.dir)
    }
}

/// Why no torch was found.
#[derive(Debug)]
pub enum NoTorch {
    /// The interpreter itself is not there (a wrong `--python` or `VIRTUAL_ENV`).
    Interpreter(String),
    /// The interpreter is there, torch is not.
    Module(String),
}

impl std::fmt::Display for NoTorch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoTorch::Interpreter(s) | NoTorch::Module(s) => f.write_str(s),
        }
    }
}

/// The interpreter found and its torch, or why there is none.
#[derive(Debug)]
pub struct PythonEnv {
    /// The interpreter as the machine names it, and how it was chosen.
    pub python: Option<(PathBuf, &'static str)>,
    pub torch: Result<Torch, NoTorch>,
}

/// Finds the interpreter and its torch.
pub fn locate(input: &Input) -> PythonEnv {
    // A relative --python names a file from the current directory (on the running machine).
    let python = input
        .python
        .map(|p| {
            let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            (inside_root(input, abs), "--python")
        })
        .or_else(|| {
            input
                .host
                .var("VIRTUAL_ENV")
                .filter(|v| !v.is_empty())
                .map(|v| (Path::new(&v).join("bin/python"), "VIRTUAL_ENV"))
        })
        .or_else(|| on_path(input, "python3").map(|p| (p, "PATH")));
    let Some((py, _)) = &python else {
        return PythonEnv {
            python,
            torch: Err(NoTorch::Interpreter(
                "no Python interpreter: no --python, no VIRTUAL_ENV, no python3 on PATH".into(),
            )),
        };
    };
    let torch = find_torch(input, py);
    PythonEnv { python, torch }
}

/// `abs` as the root's machine names it: a path already below `--root` (this machine's name
/// for it) loses the root's prefix; any other is taken to be inside the root already.
fn inside_root(input: &Input, abs: PathBuf) -> PathBuf {
    if input.root.is_host() {
        return abs;
    }
    let base = input.root.base();
    let canonical = std::fs::canonicalize(base).ok();
    [Some(base.to_path_buf()), canonical]
        .into_iter()
        .flatten()
        .find_map(|b| {
            abs.strip_prefix(&b)
                .ok()
                .map(|rel| Path::new("/").join(rel))
        })
        .unwrap_or(abs)
}

/// The first `name` in the directories of `$PATH`, below the root.
fn on_path(input: &Input, name: &str) -> Option<PathBuf> {
    let path = input.host.var("PATH")?;
    path.split(':')
        .filter(|d| d.starts_with('/'))
        .map(|d| Path::new(d).join(name))
        .find(|p| below(input, p).is_file())
}

/// `p`, a path as the root's machine names it, on this machine, links followed inside the root.
fn below(input: &Input, p: &Path) -> PathBuf {
    input.root.resolve(&input.root.path(&p.to_string_lossy()))
}

/// `dir/<pattern prefix>*/<tail>` for entries whose name starts with `prefix`, sorted
/// newest name first (python3.13 before python3.12).
fn globbed(dir: &Path, prefix: &str, tail: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path().join(tail))
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v.reverse();
    v
}

/// `pyvenv.cfg` of the venv `python` belongs to (below the root), if it is in one.
fn venv_cfg(input: &Input, python: &Path) -> Option<(PathBuf, String)> {
    let venv = python.parent()?.parent()?;
    let cfg = below(input, &venv.join("pyvenv.cfg"));
    let text = read_small(&cfg)?;
    Some((below(input, venv), text))
}

fn read_small(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut s = String::new();
    std::fs::File::open(p)
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut s)
        .ok()?;
    Some(s)
}

/// The site directories of a prefix (`/usr`, `/usr/local`, a venv), in Python's order.
fn prefix_sites(prefix: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for lib in ["lib", "lib64"] {
        let d = prefix.join(lib);
        v.extend(globbed(&d, "python3", "site-packages"));
        v.extend(globbed(&d, "python3", "dist-packages"));
    }
    v
}

/// The system's site directories: Debian's /usr/local/lib/python3*/dist-packages and
/// /usr/lib/python3/dist-packages, Fedora's and Arch's /usr/lib{,64}/python3.*/site-packages.
fn system_sites(input: &Input, user_home: Option<PathBuf>) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(home) = user_home {
        v.extend(globbed(
            &below(input, &home.join(".local/lib")),
            "python3",
            "site-packages",
        ));
    }
    v.extend(prefix_sites(&input.root.path("/usr/local")));
    v.extend(prefix_sites(&input.root.path("/usr")));
    v.dedup();
    v
}

/// The invoking user's home (as the root's machine names it): /etc/passwd below the root,
/// else `$HOME`.
pub(super) fn user_home(input: &Input) -> Option<PathBuf> {
    home_of(input, input.host.user().uid).or_else(|| input.host.var("HOME").map(PathBuf::from))
}

/// The invoking user's home from /etc/passwd (below the root).
fn home_of(input: &Input, uid: u32) -> Option<PathBuf> {
    let text = read_small(&input.root.path("/etc/passwd"))?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 7 && f[2].parse() == Ok(uid)).then(|| PathBuf::from(f[5]))
    })
}

fn torch_in(sites: &[PathBuf]) -> Option<Torch> {
    sites
        .iter()
        .map(|s| s.join("torch"))
        .find(|t| t.join("__init__.py").is_file() || t.join("version.py").is_file())
        .map(read_torch)
}

fn find_torch(input: &Input, python: &Path) -> Result<Torch, NoTorch> {
    let at = below(input, python);
    if !at.exists() {
        return Err(NoTorch::Interpreter(if input.root.is_host() {
            format!("{} does not exist", python.display())
        } else {
            format!(
                "{} does not exist inside --root (looked for {})",
                python.display(),
                at.display()
            )
        }));
    }
    let home = user_home(input);
    if let Some((venv, cfg)) = venv_cfg(input, python) {
        let mut sites = prefix_sites(&venv);
        let system = cfg.lines().any(|l| {
            l.split_once('=').is_some_and(|(k, v)| {
                k.trim() == "include-system-site-packages" && v.trim() == "true"
            })
        });
        if system {
            sites.extend(system_sites(input, home));
        }
        return torch_in(&sites).ok_or_else(|| {
            NoTorch::Module(format!(
                "no torch in the venv {} (site-packages{})",
                input.show(&venv),
                if system { " and the system's" } else { "" }
            ))
        });
    }
    let mut why = String::new();
    if input.root.is_host() {
        match input.host.find_torch(python).and_then(|o| parse_answer(&o)) {
            Ok(Some(dir)) => return Ok(read_torch(dir)),
            Ok(None) => {
                return Err(NoTorch::Module(format!(
                    "{} finds no torch module on its sys.path",
                    python.display()
                )));
            }
            Err(e) => why = format!(" ({e}; searched the usual directories instead)"),
        }
    }
    let sites = system_sites(input, home);
    torch_in(&sites).ok_or_else(|| {
        NoTorch::Module(format!(
            "no torch for {}{why} in ~/.local/lib/python3*/site-packages, /usr/local/lib/python3*, /usr/lib/python3*",
            python.display()
        ))
    })
}

/// The torch directory from the interpreter's JSON answer (`origin` is
/// `.../torch/__init__.py`); `Ok(None)` if it has none.
fn parse_answer(out: &str) -> Result<Option<PathBuf>, String> {
    let v: serde_json::Value = serde_json::from_str(out.trim())
        .map_err(|e| format!("the interpreter's answer is not JSON: {e}"))?;
    Ok(v["torch"]
        .as_str()
        .and_then(|o| Path::new(o).parent().map(Path::to_path_buf)))
}

fn read_torch(dir: PathBuf) -> Torch {
    let text = read_small(&dir.join("version.py")).unwrap_or_default();
    Torch {
        version: version_field(&text, "__version__"),
        hip: version_field(&text, "hip"),
        cuda: version_field(&text, "cuda"),
        dir,
    }
}

/// `name = 'x'` or `name: Optional[str] = 'x'` in version.py; `None` for `None` or absent.
pub fn version_field(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?;
        let rest = rest.trim_start();
        if !(rest.starts_with('=') || rest.starts_with(':')) {
            return None;
        }
        let (_, value) = rest.split_once('=')?;
        let value = value.trim();
        let q = value.chars().next().filter(|c| *c == '\'' || *c == '"')?;
        let inner = &value[1..];
        Some(inner[..inner.find(q)?].to_owned())
    })
}

/// TheRock's multi-arch index (ROCm/TheRock RELEASES.md, "Installing multi-arch PyTorch Python
/// packages"): one index for every GPU, each GPU's code in a device extra of its target
/// (`device-gfx1010`, `-gfx1011`, `-gfx1012`: RDNA1 is Release Ready there, SUPPORTED_GPUS.md).
/// Its per-family indexes (`v2/gfx101X-dgpu/`) are legacy: "no new per-family releases will
/// be generated and previous per-family releases may be deleted"
/// (docs/packaging/legacy_per_family_releases.md). Python 3.10 to 3.14
/// (configure_pytorch_release_matrix.py), glibc 2.28 or newer (manylinux_2_28 builds).
pub const MULTI_ARCH_INDEX: &str = "https://rocm.nightlies.amd.com/whl-multi-arch/";

/// TheRock's multi-arch PyTorch for the RDNA1 targets here (gfx1010's where none is seen),
/// installed into a venv of its own.
pub fn therock_install(targets: &[&str]) -> String {
    let mut ts: Vec<&str> = targets.to_vec();
    ts.sort_unstable();
    ts.dedup();
    let seen = !ts.is_empty();
    if !seen {
        ts.push("gfx1010");
    }
    let extras = ts
        .iter()
        .map(|t| format!("device-{t}"))
        .collect::<Vec<_>>()
        .join(",");
    let which = if seen {
        String::new()
    } else {
        " (no RDNA1 card seen here: device-gfx1010 for an RX 5600/5700, device-gfx1011 for a \
         Radeon Pro V520/5600M, device-gfx1012 for an RX 5500)"
            .to_owned()
    };
    format!(
        "TheRock's multi-arch PyTorch with {} code, in a venv of its own (Python 3.10 to 3.14): \
         python3 -m venv ~/rocm-venv; ~/rocm-venv/bin/pip install --index-url {MULTI_ARCH_INDEX} \
         \"torch[{extras}]\" \"torchvision[{extras}]\" torchaudio{which}; its per-family \
         gfx101X-dgpu index is legacy (no new releases, old ones may be deleted)",
        ts.join("/")
    )
}

/// The one-line fix that keeps the GPU training: a PyTorch built for the card's target, said
/// for the root's distribution (Debian has no ROCm PyTorch of its own: the wheel is the
/// answer).
pub fn install_torch(input: &Input) -> String {
    let targets: Vec<&str> = input
        .facts
        .rdna1()
        .iter()
        .map(|(_, c)| c.gfx_target())
        .collect();
    let wheels = therock_install(&targets);
    match input.distro().no_rocm_torch() {
        Some(why) => format!("{why}: install {wheels}"),
        None => format!(
            "install a ROCm PyTorch with gfx101X code: {wheels}; or your distribution's ROCm \
             build where it carries your target (Arch: python-pytorch-rocm)"
        ),
    }
}

pub fn checks(input: &Input) -> Vec<Check> {
    vec![torch_check(input, &input.stack().python)]
}

fn torch_check(input: &Input, env: &PythonEnv) -> Check {
    let id = "python.torch";
    let Some((py, how)) = &env.python else {
        return Check::warn(
            id,
            "no Python interpreter found (no --python, no VIRTUAL_ENV, no python3 on PATH)",
            "run doctor in the shell you train from (venv activated), or pass --python PATH",
        );
    };
    let who = format!("{} (from {how})", py.display());
    let t = match &env.torch {
        Ok(t) => t,
        Err(NoTorch::Interpreter(e)) => {
            let fix = if input.root.is_host() {
                "pass --python with the interpreter you train with (e.g. ~/rocm-venv/bin/python), or activate its venv"
            } else {
                "pass --python as the root's machine names the interpreter (e.g. /home/you/rocm-venv/bin/python)"
            };
            return Check::warn(id, format!("{who}: {e}"), fix);
        }
        Err(e @ NoTorch::Module(_)) => {
            return Check::warn(id, format!("{who}: {e}"), install_torch(input));
        }
    };
    let v = t.version.as_deref().unwrap_or("of unknown version");
    let at = input.show(&t.dir);
    match (&t.hip, &t.cuda) {
        (Some(hip), _) => Check::ok(id, format!("{who}: torch {v} at {at}, a ROCm build (HIP {hip})")),
        (None, Some(cuda)) => Check::fail(
            id,
            format!("{who}: torch {v} at {at} is a CUDA build (CUDA {cuda}): it cannot use an AMD GPU"),
            install_torch(input),
        ),
        (None, None) => Check::fail(
            id,
            format!("{who}: torch {v} at {at} is a CPU-only build (torch.version.hip is None): it never uses the GPU"),
            install_torch(input),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{assert_check, FakeHost, Tree};
    use crate::commands::doctor::{Facts, Status};

    const ROCM_VERSION_PY: &str = "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n__version__ = '2.9.1+rocm7.10.0a20251120'\ndebug = False\ncuda: Optional[str] = None\ngit_version = 'abc'\nhip: Optional[str] = '7.10.25475-a1b2c3'\nxpu: Optional[str] = None\n";

    fn run(t: &Tree, host: &FakeHost, arg: Option<&str>) -> (PythonEnv, Check) {
        let root = t.root();
        let facts = Facts::gather(&root);
        let input = Input::new(&root, host, &facts, arg.map(Path::new));
        let env = locate(&input);
        let c = torch_check(&input, &env);
        (env, c)
    }

    fn venv(t: &Tree, dir: &str, version_py: &str) {
        t.write(
            &format!("{dir}/pyvenv.cfg"),
            "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
        );
        t.write(&format!("{dir}/bin/python"), "");
        t.write(
            &format!("{dir}/lib/python3.12/site-packages/torch/__init__.py"),
            "",
        );
        t.write(
            &format!("{dir}/lib/python3.12/site-packages/torch/version.py"),
            version_py,
        );
    }

    #[test]
    fn version_py_fields() {
        assert_eq!(
            version_field(ROCM_VERSION_PY, "hip").as_deref(),
            Some("7.10.25475-a1b2c3")
        );
        assert_eq!(version_field(ROCM_VERSION_PY, "cuda"), None);
        assert_eq!(
            version_field(ROCM_VERSION_PY, "__version__").as_deref(),
            Some("2.9.1+rocm7.10.0a20251120")
        );
        assert_eq!(version_field("hipx = '1'\n", "hip"), None);
        assert_eq!(
            version_field("hip = \"6.2\"\n", "hip").as_deref(),
            Some("6.2")
        );
        assert_eq!(version_field("hip = '6.2\n", "hip"), None, "unterminated");
    }

    #[test]
    fn active_venv_with_rocm_torch() {
        let t = Tree::new();
        venv(&t, "home/u/v", ROCM_VERSION_PY);
        let host = FakeHost::default().with_var("VIRTUAL_ENV", "/home/u/v");
        let (env, c) = run(&t, &host, None);
        assert_check(
            &c,
            Status::Ok,
            &[
                "VIRTUAL_ENV",
                "HIP 7.10",
                "/home/u/v/lib/python3.12/site-packages/torch",
            ],
        );
        assert!(env.torch.unwrap().site().ends_with("site-packages"));
    }

    #[test]
    fn python_arg_wins_and_cpu_or_cuda_builds_fail() {
        let t = Tree::new();
        venv(&t, "v", ROCM_VERSION_PY);
        venv(
            &t,
            "cpu",
            "__version__ = '2.9.1+cpu'\ncuda: Optional[str] = None\nhip: Optional[str] = None\n",
        );
        venv(&t, "cuda", "__version__ = '2.9.1+cu128'\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n");
        let host = FakeHost::default().with_var("VIRTUAL_ENV", "/v");
        let (_, c) = run(&t, &host, Some("/cpu/bin/python"));
        assert_check(&c, Status::Fail, &["CPU-only", "--python", "2.9.1+cpu"]);
        assert!(c.fix.unwrap().contains("gfx101X"));
        let (_, c) = run(&t, &host, Some("/cuda/bin/python"));
        assert_check(&c, Status::Fail, &["CUDA build (CUDA 12.8)"]);
    }

    #[test]
    fn python3_on_path_without_venv_uses_the_system_sites() {
        let t = Tree::new();
        t.write("usr/bin/python3", "");
        t.write("usr/lib/python3.13/site-packages/torch/__init__.py", "");
        t.write(
            "usr/lib/python3.13/site-packages/torch/version.py",
            ROCM_VERSION_PY,
        );
        let host = FakeHost::default().with_var("PATH", "/nonexistent:/usr/bin");
        let (_, c) = run(&t, &host, None);
        assert_check(
            &c,
            Status::Ok,
            &["/usr/bin/python3 (from PATH)", "/usr/lib/python3.13"],
        );
        // A user install shadows the system's, as Python's user site does.
        t.write(
            "etc/passwd",
            "root:x:0:0::/root:/bin/sh\nu:x:1000:1000::/home/u:/bin/bash\n",
        );
        t.write(
            "home/u/.local/lib/python3.13/site-packages/torch/version.py",
            "__version__ = '2.8.0+cpu'\nhip = None\n",
        );
        let (_, c) = run(&t, &host, None);
        assert_check(&c, Status::Fail, &["/home/u/.local", "CPU-only"]);
    }

    #[test]
    fn nothing_found_warns() {
        let t = Tree::new();
        let (_, c) = run(&t, &FakeHost::default(), None);
        assert_check(&c, Status::Warn, &["no Python interpreter"]);
        t.write("e/pyvenv.cfg", "home = /usr/bin\n");
        t.write("e/bin/python", "");
        let host = FakeHost::default().with_var("VIRTUAL_ENV", "/e");
        let (_, c) = run(&t, &host, None);
        assert_check(&c, Status::Warn, &["no torch in the venv /e"]);
        let (_, c) = run(&t, &host, Some("/nowhere/bin/python"));
        assert_check(&c, Status::Warn, &["/nowhere/bin/python does not exist"]);
    }

    #[test]
    fn debian_is_told_plainly_it_has_no_rocm_pytorch() {
        let t = Tree::new();
        t.write(
            "etc/os-release",
            "PRETTY_NAME=\"Debian GNU/Linux forky/sid\"\nID=debian\nVERSION_CODENAME=forky\n",
        );
        t.write("usr/bin/python3", "");
        t.write("usr/lib/python3/dist-packages/torch/__init__.py", "");
        t.write(
            "usr/lib/python3/dist-packages/torch/version.py",
            "__version__ = '2.14.1'\ncuda: Optional[str] = None\nhip: Optional[str] = None\n",
        );
        let host = FakeHost::default().with_var("PATH", "/usr/bin");
        let (_, c) = run(&t, &host, None);
        assert_check(
            &c,
            Status::Fail,
            &["CPU-only", "/usr/lib/python3/dist-packages"],
        );
        let fix = c.fix.unwrap();
        assert!(fix.contains("Debian packages no ROCm PyTorch"), "{fix}");
        assert!(fix.contains("gfx101X"), "{fix}");
        assert!(!fix.contains("your distribution's ROCm build"), "{fix}");
        // No torch at all on Debian: the same plain answer.
        std::fs::remove_dir_all(t.path("usr/lib/python3")).unwrap();
        let (_, c) = run(&t, &host, None);
        assert!(c.fix.unwrap().contains("Debian packages no ROCm PyTorch"));
    }

    #[test]
    fn the_install_line_is_therocks_multi_arch_index_with_the_cards_device_extra() {
        // An RX 5500 XT (gfx1012) with a CPU torch: the multi-arch index and the extra for its
        // own target (TheRock RELEASES.md), never the per-family index TheRock stopped.
        let t = Tree::new();
        t.gpu("0000:03:00.0", 0x7340);
        t.write("usr/bin/python3", "");
        t.write("usr/lib/python3/dist-packages/torch/__init__.py", "");
        t.write(
            "usr/lib/python3/dist-packages/torch/version.py",
            "__version__ = '2.14.1'\ncuda: Optional[str] = None\nhip: Optional[str] = None\n",
        );
        let host = FakeHost::default().with_var("PATH", "/usr/bin");
        let (_, c) = run(&t, &host, None);
        let fix = c.fix.unwrap();
        assert!(
            fix.contains("--index-url https://rocm.nightlies.amd.com/whl-multi-arch/ \"torch[device-gfx1012]\" \"torchvision[device-gfx1012]\" torchaudio"),
            "{fix}"
        );
        assert!(!fix.contains("/v2/gfx101X-dgpu/"), "{fix}");
        assert!(fix.contains("legacy"), "{fix}");
        // No RDNA1 card seen: gfx1010's extra, the other targets named.
        let t = Tree::new();
        t.write("usr/bin/python3", "");
        let (_, c) = run(&t, &host, None);
        let fix = c.fix.unwrap();
        assert!(fix.contains("\"torch[device-gfx1010]\""), "{fix}");
        assert!(fix.contains("device-gfx1012 for an RX 5500"), "{fix}");
    }

    #[test]
    fn python_under_root_is_a_path_inside_the_root() {
        let t = Tree::new();
        venv(&t, "home/u/v", ROCM_VERSION_PY);
        // As the root's machine names it.
        let (_, c) = run(&t, &FakeHost::default(), Some("/home/u/v/bin/python"));
        assert_check(&c, Status::Ok, &["HIP 7.10"]);
        // As this machine names it (a path that already lies below --root): the same.
        let host_path = t.path("home/u/v/bin/python");
        let (_, c) = run(&t, &FakeHost::default(), Some(host_path.to_str().unwrap()));
        assert_check(&c, Status::Ok, &["HIP 7.10"]);
        // Missing: the message says where it was looked for, and the fix is about --python.
        let (_, c) = run(&t, &FakeHost::default(), Some("/nowhere/bin/python"));
        assert_check(&c, Status::Warn, &["does not exist", "inside --root"]);
        let fix = c.fix.unwrap();
        assert!(
            fix.contains("--python") && !fix.contains("install"),
            "{fix}"
        );
    }

    #[test]
    fn interpreter_answer_is_parsed() {
        let a = r#"{"torch": "/opt/py/lib/python3.12/site-packages/torch/__init__.py", "path": [], "version": "3.12.3"}"#;
        assert_eq!(
            parse_answer(a).unwrap().unwrap(),
            Path::new("/opt/py/lib/python3.12/site-packages/torch")
        );
        assert_eq!(
            parse_answer(r#"{"torch": null, "path": []}"#).unwrap(),
            None
        );
        assert!(parse_answer("Traceback").is_err());
    }
}
