//! Nothing half-applied: the policy in force before the experiment is recorded, and put back
//! exactly, by [`Restore::restore`] or, on any early way out (an error, a panic), when the
//! guard is dropped.

use anyhow::{bail, Result};
use rdna1_mtype_shared::policy::{Mode, Policy};

use crate::module::control::Device;

/// What the guard needs of the control device (a fake one in the tests).
pub trait PolicyDevice {
    fn policy(&self) -> Result<Policy>;
    fn set_policy(&self, p: &Policy) -> Result<()>;
}

impl PolicyDevice for Device {
    fn policy(&self) -> Result<Policy> {
        Device::policy(self)
    }
    fn set_policy(&self, p: &Policy) -> Result<()> {
        Device::set_policy(self, p)
    }
}

/// The policy as it was, and the promise to put it back.
pub struct Restore<'a, D: PolicyDevice> {
    dev: &'a D,
    before: Policy,
    /// Whether anything was changed (then it must be put back).
    changed: bool,
}

impl<'a, D: PolicyDevice> Restore<'a, D> {
    /// Records the policy in force.
    pub fn record(dev: &'a D) -> Result<Restore<'a, D>> {
        let before = dev.policy()?;
        Ok(Restore {
            dev,
            before,
            changed: false,
        })
    }

    pub fn before(&self) -> &Policy {
        &self.before
    }

    /// Whether a mode was set (and so something is to be put back).
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// Sets the recorded policy with mode `mode` (scope, VM scope and classes as they were) and
    /// returns the policy the module reads back.
    pub fn set_mode(&mut self, mode: Mode) -> Result<Policy> {
        let want = Policy {
            mode,
            ..self.before
        };
        self.changed = true;
        self.dev.set_policy(&want)?;
        let now = self.dev.policy()?;
        if now != want {
            bail!(
                "setting mode {}: the module reads back mode {} (another writer?)",
                mode.name(),
                now.mode.name()
            );
        }
        Ok(now)
    }

    /// Puts the recorded policy back and checks it is in force. Nothing to do if nothing was
    /// changed.
    pub fn restore(mut self) -> Result<()> {
        let r = self.put_back();
        self.changed = false;
        r
    }

    fn put_back(&self) -> Result<()> {
        if !self.changed {
            return Ok(());
        }
        self.dev.set_policy(&self.before)?;
        if self.dev.policy()? != self.before {
            bail!("the module reads back another policy than the one put back (another writer?)");
        }
        Ok(())
    }
}

impl<D: PolicyDevice> Drop for Restore<'_, D> {
    fn drop(&mut self) {
        if self.changed
            && let Err(e) = self.put_back()
        {
            tracing::error!(
                "could not put the policy back to mode {}: {}: run `sudo rdna1ctl set --mode {}`",
                self.before.mode.name(),
                crate::exit::message(&e),
                self.before.mode.name()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdna1_mtype_shared::policy::{Classes, Scope, VmScope};
    use std::cell::RefCell;

    struct Fake {
        now: RefCell<Policy>,
        sets: RefCell<Vec<Mode>>,
        /// set_policy fails for this mode.
        refuse: Option<Mode>,
    }

    impl PolicyDevice for Fake {
        fn policy(&self) -> Result<Policy> {
            Ok(*self.now.borrow())
        }
        fn set_policy(&self, p: &Policy) -> Result<()> {
            self.sets.borrow_mut().push(p.mode);
            if Some(p.mode) == self.refuse {
                bail!("SET_POLICY: EINVAL");
            }
            *self.now.borrow_mut() = *p;
            Ok(())
        }
    }

    fn start() -> Policy {
        Policy {
            mode: Mode::Audit,
            scope: Scope::parse(b"0000:03:00.0").unwrap(),
            vm_scope: VmScope::All,
            classes: Classes::parse(b"coherent").unwrap(),
        }
    }

    fn fake(refuse: Option<Mode>) -> Fake {
        Fake {
            now: RefCell::new(start()),
            sets: RefCell::new(Vec::new()),
            refuse,
        }
    }

    /// The experiment's shape: every mode in turn, failing where `f` says.
    fn experiment(dev: &Fake, fail_after: Option<Mode>) -> Result<()> {
        let mut guard = Restore::record(dev)?;
        for mode in [Mode::Off, Mode::Audit, Mode::Enforce] {
            let p = guard.set_mode(mode)?;
            assert_eq!((p.scope, p.vm_scope, p.classes), {
                let s = start();
                (s.scope, s.vm_scope, s.classes)
            });
            if Some(mode) == fail_after {
                bail!("the run under {} failed", mode.name());
            }
        }
        guard.restore()
    }

    #[test]
    fn the_policy_is_put_back_exactly_after_the_runs() {
        let dev = fake(None);
        experiment(&dev, None).unwrap();
        assert_eq!(*dev.now.borrow(), start());
        assert_eq!(
            *dev.sets.borrow(),
            [Mode::Off, Mode::Audit, Mode::Enforce, Mode::Audit]
        );
    }

    #[test]
    fn the_policy_is_put_back_on_an_error_midway() {
        for mode in [Mode::Off, Mode::Audit, Mode::Enforce] {
            let dev = fake(None);
            assert!(experiment(&dev, Some(mode)).is_err());
            assert_eq!(*dev.now.borrow(), start(), "after failing under {mode:?}");
        }
        // The module refusing a mode: what was set before is put back too.
        let dev = fake(Some(Mode::Enforce));
        assert!(experiment(&dev, None).is_err());
        assert_eq!(*dev.now.borrow(), start());
        assert_eq!(dev.sets.borrow().last(), Some(&Mode::Audit));
    }

    #[test]
    fn the_policy_is_put_back_on_a_panic() {
        let dev = fake(None);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut g = Restore::record(&dev).unwrap();
            g.set_mode(Mode::Enforce).unwrap();
            panic!("a bug");
        }));
        assert!(r.is_err());
        assert_eq!(*dev.now.borrow(), start());
    }

    #[test]
    fn nothing_changed_nothing_written() {
        let dev = fake(None);
        let g = Restore::record(&dev).unwrap();
        assert_eq!(g.before(), &start());
        g.restore().unwrap();
        drop(Restore::record(&dev).unwrap());
        assert!(dev.sets.borrow().is_empty());
    }
}
