//! The battery level, part of the battery rule (AutoPowerSource): UPower's display device
//! `Percentage` against `[auto] low_battery_percent`. [`BatteryLevel`] decides when the charge
//! crosses the threshold; the precedence is rules.rs's; power_follow.rs connects the two.

use crate::config::Config;

/// How many points above the threshold the charge must climb back, on battery, to end the
/// low-battery profile: readings wobble by a point or so around any threshold, and each
/// crossing would switch profiles.
pub const HYSTERESIS_PERCENT: f64 = 5.0;

/// The charge crossed the threshold, one way or the other, while on battery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelEvent {
    /// Below the threshold.
    Low,
    /// Back at the threshold plus [`HYSTERESIS_PERCENT`] or more.
    Recovered,
}

/// Whether the battery counts as low, from UPower's readings.
#[derive(Debug, Clone, Default)]
pub struct BatteryLevel {
    /// `[auto] low_battery_percent`; None: never low.
    threshold: Option<u8>,
    on_battery: Option<bool>,
    percent: Option<f64>,
    low: bool,
}

impl BatteryLevel {
    pub fn new(config: &Config) -> Self {
        Self {
            threshold: config.low_battery().map(|(percent, _)| percent),
            ..Self::default()
        }
    }

    /// The low-battery rule is configured (else the charge need not be watched).
    pub fn configured(&self) -> bool {
        self.threshold.is_some()
    }

    /// On battery and below the threshold (or not yet back above it).
    pub fn is_low(&self) -> bool {
        self.low
    }

    /// UPower's `OnBattery`. Plugging in ends a low battery without an event of its own: the
    /// power source rule's replug event ends the low-battery profile.
    pub fn on_battery(&mut self, on_battery: bool) -> Option<LevelEvent> {
        self.on_battery = Some(on_battery);
        self.evaluate()
    }

    /// The display device's `Percentage`. None (UPower left) is no reading; neither is 0,
    /// which UPower reports when there is no battery, nor anything outside 0-100.
    pub fn percent(&mut self, percent: Option<f64>) -> Option<LevelEvent> {
        let reading = percent.filter(|p| *p > 0.0 && *p <= 100.0)?;
        self.percent = Some(reading);
        self.evaluate()
    }

    fn evaluate(&mut self) -> Option<LevelEvent> {
        let threshold = f64::from(self.threshold?);
        match (self.on_battery, self.percent) {
            (Some(false), _) => {
                self.low = false;
                None
            }
            (Some(true), Some(p)) if !self.low && p < threshold => {
                self.low = true;
                Some(LevelEvent::Low)
            }
            (Some(true), Some(p))
                if self.low && p >= (threshold + HYSTERESIS_PERCENT).min(100.0) =>
            {
                self.low = false;
                Some(LevelEvent::Recovered)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(threshold: u8) -> BatteryLevel {
        BatteryLevel {
            threshold: Some(threshold),
            ..BatteryLevel::default()
        }
    }

    #[test]
    fn crossing_below_on_battery_is_low_and_back_above_with_hysteresis_recovers() {
        let mut b = level(20);
        assert_eq!(b.on_battery(true), None);
        assert_eq!(b.percent(Some(21.0)), None);
        assert_eq!(
            b.percent(Some(20.0)),
            None,
            "at the threshold is not below it"
        );
        assert_eq!(b.percent(Some(19.5)), Some(LevelEvent::Low));
        assert_eq!(b.percent(Some(18.0)), None, "once");
        assert_eq!(b.percent(Some(21.0)), None, "within the hysteresis");
        assert_eq!(b.percent(Some(24.9)), None);
        assert!(b.is_low());
        assert_eq!(b.percent(Some(25.0)), Some(LevelEvent::Recovered));
        assert!(!b.is_low());
        assert_eq!(b.percent(Some(19.0)), Some(LevelEvent::Low));
    }

    #[test]
    fn on_ac_the_battery_is_never_low() {
        let mut b = level(20);
        assert_eq!(b.on_battery(false), None);
        assert_eq!(b.percent(Some(5.0)), None);
        // Unplugging when already low is the crossing.
        assert_eq!(b.on_battery(true), Some(LevelEvent::Low));
        // Plugging in ends it quietly (the replug is the power source rule's event)…
        assert_eq!(b.on_battery(false), None);
        assert!(!b.is_low());
        // …and unplugging again, still low, is a new crossing.
        assert_eq!(b.on_battery(true), Some(LevelEvent::Low));
    }

    #[test]
    fn the_first_readings_count_in_either_order() {
        let mut b = level(20);
        assert_eq!(
            b.percent(Some(10.0)),
            None,
            "on battery or not: unknown yet"
        );
        assert_eq!(b.on_battery(true), Some(LevelEvent::Low));
        let mut b = level(20);
        assert_eq!(b.on_battery(true), None);
        assert_eq!(b.percent(Some(10.0)), Some(LevelEvent::Low));
    }

    #[test]
    fn no_battery_and_no_upower_are_no_readings() {
        let mut b = level(20);
        b.on_battery(true);
        assert_eq!(
            b.percent(Some(0.0)),
            None,
            "UPower's value without a battery"
        );
        assert_eq!(b.percent(Some(f64::NAN)), None);
        assert_eq!(b.percent(Some(180.0)), None);
        assert_eq!(b.percent(Some(10.0)), Some(LevelEvent::Low));
        // UPower leaving (or a 0 reading) keeps the battery low.
        assert_eq!(b.percent(None), None);
        assert_eq!(b.percent(Some(0.0)), None);
        assert!(b.is_low());
    }

    #[test]
    fn near_full_thresholds_recover_at_100() {
        let mut b = level(99);
        b.on_battery(true);
        assert_eq!(b.percent(Some(98.0)), Some(LevelEvent::Low));
        assert_eq!(b.percent(Some(100.0)), Some(LevelEvent::Recovered));
    }

    #[test]
    fn without_a_threshold_nothing_is_low() {
        let mut b = BatteryLevel::new(&Config::default());
        assert!(!b.configured());
        b.on_battery(true);
        assert_eq!(b.percent(Some(1.0)), None);
        assert!(!b.is_low());
    }
}
