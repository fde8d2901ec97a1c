//! The arms that passed, fastest first, by the battery's measured training speed: the median
//! steps/s of its timed repeats and their range. Two arms whose ranges overlap are within
//! noise of each other, and the ranking says so rather than pretend an order.

use serde_json::Value;

use super::json::ArmJson;

/// An arm's training speed: median steps/s and the range of its repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Speed {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Speed {
    /// From the battery's `speed` object (`steps_per_s`, `min`, `max`).
    pub fn of(battery: Option<&Value>) -> Option<Speed> {
        let s = battery?.get("speed")?;
        let median = s.get("steps_per_s")?.as_f64()?;
        let min = s.get("min").and_then(Value::as_f64).unwrap_or(median);
        let max = s.get("max").and_then(Value::as_f64).unwrap_or(median);
        (median > 0.0).then_some(Speed { median, min, max })
    }

    /// Whether the two ranges overlap: no order between them can be claimed.
    pub fn within_noise(&self, o: &Speed) -> bool {
        self.min <= o.max && o.min <= self.max
    }

    /// `812 steps/s (790 to 830 over 5 repeats)`.
    pub fn describe(&self) -> String {
        format!(
            "{:.0} steps/s ({:.0} to {:.0})",
            self.median, self.min, self.max
        )
    }
}

/// The passing arms fastest first (arms without a speed last, by run time), and a sentence
/// for each neighbour pair whose speeds are within noise.
pub fn rank<'a>(passed: &[&'a ArmJson]) -> (Vec<&'a ArmJson>, Vec<String>) {
    let mut ranked: Vec<&ArmJson> = passed.to_vec();
    // Measured speeds first, fastest first; then the rest by run time.
    let key = |a: &ArmJson| {
        let speed = Speed::of(a.battery.as_ref());
        (
            speed.is_none(),
            speed.map_or(0.0, |s| -s.median),
            a.record.as_ref().map_or(f64::MAX, |r| r.duration_s),
        )
    };
    ranked.sort_by(|a, b| {
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut notes = Vec::new();
    for w in ranked.windows(2) {
        if let (Some(a), Some(b)) = (
            Speed::of(w[0].battery.as_ref()),
            Speed::of(w[1].battery.as_ref()),
        ) && a.within_noise(&b)
        {
            notes.push(format!(
                "{} and {} are within noise of each other: {} and {}",
                w[0].arm.id,
                w[1].arm.id,
                a.describe(),
                b.describe()
            ));
        }
    }
    (ranked, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn overlapping_ranges_are_within_noise() {
        let s = |m, lo, hi| Speed {
            median: m,
            min: lo,
            max: hi,
        };
        assert!(s(241.0, 230.0, 250.0).within_noise(&s(219.0, 210.0, 232.0)));
        assert!(!s(241.0, 236.0, 250.0).within_noise(&s(219.0, 210.0, 232.0)));
        let b = json!({"speed": {"steps_per_s": 9.0, "min": 8.5, "max": 9.5}});
        assert_eq!(Speed::of(Some(&b)), Some(s(9.0, 8.5, 9.5)));
        assert_eq!(Speed::of(Some(&json!({"ok": true}))), None);
    }
}
