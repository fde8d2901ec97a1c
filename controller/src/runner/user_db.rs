//! The user database of a static rdna1ctl (`-C target-feature=+crt-static`, as make test's VM
//! and checks build it): /etc/passwd and /etc/group only, never an NSS module.
//!
//! Static glibc loads the modules nsswitch.conf names (systemd, sss, ldap) with `dlopen` for a
//! user /etc/passwd does not have, and a shared module in a static process crashes it: exit 139
//! for an unknown `--user`, an LDAP or systemd-homed user, or a SUDO_UID without an entry
//! (tests/static/nss.sh). glibc has had "files" built in since 2.34, so with every user and
//! group database set to "files" nothing is loaded. Those users are then unknown, as under
//! musl: [`super::user::resolve`] says so, and what to do.

/// True in a static build: user lookups read only /etc/passwd and /etc/group.
pub const FILES_ONLY: bool = cfg!(all(target_env = "gnu", target_feature = "crt-static"));

/// What an error about a user the database lacks adds in a static build.
pub const FILES_ONLY_HINT: &str = "this rdna1ctl is a static build: it reads users only \
     from /etc/passwd and /etc/group, not LDAP, SSSD or systemd-homed; run it through sudo as \
     that user (sudo gives the uid and group), or use the rdna1ctl your package installed";

/// The user and group databases set to "files", in a static build; nothing otherwise. Call it
/// first in `main`, before any thread or lookup.
pub fn files_only() {
    #[cfg(all(target_env = "gnu", target_feature = "crt-static"))]
    {
        unsafe extern "C" {
            /// glibc's `<nss.h>`: the services of database `db`, as an nsswitch.conf line
            /// would give them; 0 on success.
            fn __nss_configure_lookup(
                db: *const std::ffi::c_char,
                services: *const std::ffi::c_char,
            ) -> std::ffi::c_int;
        }
        for db in [c"passwd", c"group", c"initgroups"] {
            // SAFETY: both are NUL-terminated strings that outlive the call, which copies what
            // it keeps (glibc parses the line into its own list); main calls this before any
            // other thread exists, so no lookup runs meanwhile.
            let rc = unsafe { __nss_configure_lookup(db.as_ptr(), c"files".as_ptr()) };
            // Only for a database name glibc does not know (these it knows) or no memory to
            // parse the line. Said on stderr: tracing is not set up yet.
            if rc != 0 {
                eprintln!(
                    "rdna1ctl: warning: glibc refused to limit its {db:?} database to \
                     /etc/passwd and /etc/group: a user they lack may crash this static build"
                );
            }
        }
    }
}
