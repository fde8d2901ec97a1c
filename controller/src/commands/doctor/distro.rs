//! Which distribution the root is (`/etc/os-release`, else `/usr/lib/os-release`), so that a
//! fix names packages that exist there: Debian's ROCm is `librocblas4` (sid) and
//! `librocblas5` (experimental), never AMD's `rocblas`, and Debian has no ROCm PyTorch.

use super::Input;

/// The distributions whose package names the fixes know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distro {
    Debian,
    Ubuntu,
    Fedora,
    Arch,
    Other,
}

impl Distro {
    /// The root's distribution: `ID`, then the first known `ID_LIKE` (Mint is Ubuntu-like).
    pub fn of(input: &Input) -> Distro {
        // os-release(5): the first of the two that exists is the one; garbage in it is "other".
        ["/etc/os-release", "/usr/lib/os-release"]
            .iter()
            .find_map(|p| std::fs::read_to_string(input.root.resolve(&input.root.path(p))).ok())
            .and_then(|text| rs_release::parse_os_release_str(&text).ok())
            .map_or(Distro::Other, |vars| {
                let id = vars.get("ID").map(String::as_str).unwrap_or_default();
                let like = vars.get("ID_LIKE").map(String::as_str).unwrap_or_default();
                std::iter::once(id)
                    .chain(like.split_whitespace())
                    .map(Distro::from_id)
                    .find(|d| *d != Distro::Other)
                    .unwrap_or(Distro::Other)
            })
    }

    fn from_id(id: &str) -> Distro {
        match id {
            "debian" => Distro::Debian,
            "ubuntu" => Distro::Ubuntu,
            "fedora" => Distro::Fedora,
            "arch" => Distro::Arch,
            _ => Distro::Other,
        }
    }

    /// How to install rocBLAS here.
    pub fn rocblas_package(self) -> &'static str {
        match self {
            Distro::Debian => {
                "apt install librocblas4 (Debian sid; librocblas5 from experimental)"
            }
            Distro::Ubuntu => {
                "apt install the librocblasN your release has (apt-cache search --names-only '^librocblas[0-9]')"
            }
            Distro::Fedora => "dnf install rocblas",
            Distro::Arch => "pacman -S rocblas",
            Distro::Other => "AMD's rocblas package, or your distribution's",
        }
    }

    /// How to install MIOpen here.
    pub fn miopen_package(self) -> &'static str {
        match self {
            Distro::Debian => "apt install libmiopen1",
            Distro::Ubuntu => {
                "apt install the libmiopenN your release has (apt-cache search --names-only '^libmiopen[0-9]')"
            }
            Distro::Fedora => "dnf install miopen",
            Distro::Arch => "pacman -S miopen-hip",
            Distro::Other => "AMD's miopen-hip package, or your distribution's",
        }
    }

    /// Why the distribution's own torch is no answer, where that is so.
    pub fn no_rocm_torch(self) -> Option<&'static str> {
        match self {
            Distro::Debian => Some(
                "Debian packages no ROCm PyTorch (its python3-torch is a CPU build), so a wheel is the way",
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::doctor::testutil::{FakeHost, Tree};
    use crate::commands::doctor::Facts;

    fn distro(t: &Tree) -> Distro {
        let root = t.root();
        let facts = Facts::gather(&root);
        let host = FakeHost::default();
        Distro::of(&Input::new(&root, &host, &facts, None))
    }

    #[test]
    fn ids_and_likes() {
        let t = Tree::new();
        assert_eq!(distro(&t), Distro::Other);
        t.write("usr/lib/os-release", "ID=fedora\nVERSION_ID=43\n");
        assert_eq!(distro(&t), Distro::Fedora);
        t.write(
            "etc/os-release",
            "NAME=\"Linux Mint\"\nID=linuxmint\nID_LIKE=\"ubuntu debian\"\n",
        );
        assert_eq!(distro(&t), Distro::Ubuntu);
        t.write("etc/os-release", "ID=debian\nVERSION_CODENAME=forky\n");
        assert_eq!(distro(&t), Distro::Debian);
        t.write("etc/os-release", "ID=\"arch\"\n");
        assert_eq!(distro(&t), Distro::Arch);
        t.write("etc/os-release", "this is no os-release\n");
        assert_eq!(distro(&t), Distro::Other);
    }
}
