//! Whether to retry (a classifier over error categories) and how long to wait
//! (exponential backoff shaped by jitter), kept apart as tower does.
//!
//! The delay before attempt `n + 1` is `min(maxDelay, baseDelay * backoffMultiplier^(n-1))`,
//! shaped by [`Jitter`]. A `retryAfterMs` hint replaces it, still capped by `maxDelay`.
//! Every delay is finite and within `[0, maxDelay]` whatever `n` is.

use std::time::Duration;

use rand::Rng;

use crate::declaration::RetryOverrides;
use crate::error::{ErrorCategory, RegistryError, RegistryErrorCode, ToolError};

/// How a computed delay is randomised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    /// Exactly the computed delay `d`.
    None,
    /// Uniform in `[0, d]`.
    Full,
    /// Uniform in `[d/2, d]`.
    Equal,
    /// Uniform in `[baseDelay, min(maxDelay, 3 * previous delay)]` (AWS "decorrelated jitter").
    Decorrelated,
}

impl Jitter {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(Self::None),
            "full" => Some(Self::Full),
            "equal" => Some(Self::Equal),
            "decorrelated" => Some(Self::Decorrelated),
            _ => None,
        }
    }
}

/// A set of error categories, as a bit mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CategorySet(u16);

impl CategorySet {
    pub fn of(categories: &[ErrorCategory]) -> Self {
        Self(categories.iter().fold(0, |m, c| m | (1 << *c as u16)))
    }

    pub fn contains(self, c: ErrorCategory) -> bool {
        self.0 & (1 << c as u16) != 0
    }
}

/// Retry settings, validated at construction.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryConfig {
    pub max_attempts: u32,
    pub base_delay_ms: f64,
    pub max_delay_ms: f64,
    pub backoff_multiplier: f64,
    pub jitter: Jitter,
    pub retryable: CategorySet,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay_ms: 1000.0,
            max_delay_ms: 30_000.0,
            backoff_multiplier: 2.0,
            jitter: Jitter::Full,
            retryable: CategorySet::of(&[ErrorCategory::Transient, ErrorCategory::Timeout]),
        }
    }
}

fn invalid(message: String) -> RegistryError {
    RegistryError::new(RegistryErrorCode::InvalidConfig, message)
}

impl RetryConfig {
    /// Layers `overrides` over `self` and checks the result.
    ///
    /// # Errors
    /// `INVALID_CONFIG` for negative or non-finite delays, `maxAttempts < 1`,
    /// `baseDelay > maxDelay`, a multiplier below 1, or an unknown jitter or category.
    pub fn with_overrides(&self, o: &RetryOverrides) -> Result<Self, RegistryError> {
        let mut c = self.clone();
        if let Some(n) = o.max_attempts {
            c.max_attempts = n;
        }
        if let Some(d) = o.base_delay {
            c.base_delay_ms = d;
        }
        if let Some(d) = o.max_delay {
            c.max_delay_ms = d;
        }
        if let Some(m) = o.backoff_multiplier {
            c.backoff_multiplier = m;
        }
        if let Some(j) = &o.jitter {
            c.jitter = Jitter::parse(j)
                .ok_or_else(|| invalid(format!("retry.jitter {j:?} is not one of none, full, equal, decorrelated")))?;
        }
        if let Some(cats) = &o.retryable_categories {
            let parsed = cats
                .iter()
                .map(|s| ErrorCategory::parse(s).ok_or_else(|| invalid(format!("retry.retryableCategories: unknown category {s:?}"))))
                .collect::<Result<Vec<_>, _>>()?;
            c.retryable = CategorySet::of(&parsed);
        }
        c.check()?;
        Ok(c)
    }

    /// # Errors
    /// As [`RetryConfig::with_overrides`].
    pub fn check(&self) -> Result<(), RegistryError> {
        if self.max_attempts < 1 {
            return Err(invalid(format!("retry.maxAttempts must be at least 1, got {}", self.max_attempts)));
        }
        for (name, v) in [("baseDelay", self.base_delay_ms), ("maxDelay", self.max_delay_ms)] {
            if !v.is_finite() || v < 0.0 {
                return Err(invalid(format!("retry.{name} must be a finite number of milliseconds >= 0, got {v}")));
            }
        }
        if self.base_delay_ms > self.max_delay_ms {
            return Err(invalid(format!(
                "retry.baseDelay ({}) must not exceed retry.maxDelay ({})",
                self.base_delay_ms, self.max_delay_ms
            )));
        }
        if !self.backoff_multiplier.is_finite() || self.backoff_multiplier < 1.0 {
            return Err(invalid(format!("retry.backoffMultiplier must be a finite number >= 1, got {}", self.backoff_multiplier)));
        }
        Ok(())
    }

    /// Whether a failed attempt `attempt` (1-based) should be followed by another: its
    /// category is retryable and the error is not one never retried
    /// ([`ToolError::no_retry`]).
    pub fn should_retry(&self, error: &ToolError, attempt: u32) -> bool {
        attempt < self.max_attempts && self.retryable.contains(error.category) && !error.no_retry
    }

    /// The un-jittered delay after failed attempt `attempt` (1-based), in ms.
    pub fn base_schedule_ms(&self, attempt: u32) -> f64 {
        if self.base_delay_ms == 0.0 {
            return 0.0;
        }
        let exponent = attempt.saturating_sub(1).min(4096) as i32;
        let d = self.base_delay_ms * self.backoff_multiplier.powi(exponent);
        if d.is_finite() {
            d.min(self.max_delay_ms)
        } else {
            self.max_delay_ms
        }
    }
}

/// The delays of one execution: remembers the previous delay for decorrelated jitter.
#[derive(Clone, Debug)]
pub struct Backoff {
    config: RetryConfig,
    previous_ms: f64,
}

impl Backoff {
    pub fn new(config: RetryConfig) -> Self {
        let previous_ms = config.base_delay_ms;
        Self { config, previous_ms }
    }

    pub fn config(&self) -> &RetryConfig {
        &self.config
    }

    /// The wait after failed attempt `attempt` (1-based), given that attempt's error.
    pub fn next_delay(&mut self, attempt: u32, error: &ToolError, rng: &mut impl Rng) -> Duration {
        let c = &self.config;
        let ms = if let Some(hint) = error.retry_after_ms {
            (hint as f64).min(c.max_delay_ms)
        } else {
            let d = c.base_schedule_ms(attempt);
            let jittered = match c.jitter {
                Jitter::None => d,
                Jitter::Full => uniform(rng, 0.0, d),
                Jitter::Equal => uniform(rng, d / 2.0, d),
                Jitter::Decorrelated => {
                    let upper = (self.previous_ms * 3.0).min(c.max_delay_ms).max(c.base_delay_ms);
                    uniform(rng, c.base_delay_ms, upper)
                }
            };
            jittered.clamp(0.0, c.max_delay_ms)
        };
        self.previous_ms = ms.max(c.base_delay_ms);
        // Finite but beyond what a Duration holds (maxDelay: 1e300): wait "forever".
        Duration::try_from_secs_f64(ms / 1000.0).unwrap_or(Duration::MAX)
    }
}

fn uniform(rng: &mut impl Rng, lo: f64, hi: f64) -> f64 {
    if hi <= lo {
        lo
    } else {
        rng.random_range(lo..=hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(jitter: Jitter) -> RetryConfig {
        RetryConfig { max_attempts: 10, base_delay_ms: 100.0, max_delay_ms: 5_000.0, backoff_multiplier: 2.0, jitter, ..RetryConfig::default() }
    }

    #[test]
    fn exact_sequence_without_jitter_and_the_cap() {
        let mut b = Backoff::new(cfg(Jitter::None));
        let mut rng = rand::rng();
        let e = ToolError::transient("x", None);
        let ms: Vec<u128> = (1..=8).map(|n| b.next_delay(n, &e, &mut rng).as_millis()).collect();
        assert_eq!(ms, vec![100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    }

    #[test]
    fn no_overflow_or_nan_after_any_number_of_attempts() {
        let c = RetryConfig { backoff_multiplier: 10.0, max_delay_ms: 1e9, ..cfg(Jitter::None) };
        for n in [1, 100, 1000, u32::MAX] {
            let d = c.base_schedule_ms(n);
            assert!(d.is_finite() && d <= 1e9, "{n}: {d}");
        }
    }

    #[test]
    fn jitter_bounds_over_ten_thousand_draws() {
        let mut rng = rand::rng();
        let e = ToolError::transient("x", None);
        for jitter in [Jitter::Full, Jitter::Equal, Jitter::Decorrelated, Jitter::None] {
            let mut b = Backoff::new(cfg(jitter));
            let mut prev = 100.0f64;
            for i in 0..10_000u32 {
                let n = i % 8 + 1;
                let d = cfg(jitter).base_schedule_ms(n);
                let got = b.next_delay(n, &e, &mut rng).as_secs_f64() * 1000.0;
                let (lo, hi) = match jitter {
                    Jitter::None => (d, d),
                    Jitter::Full => (0.0, d),
                    Jitter::Equal => (d / 2.0, d),
                    Jitter::Decorrelated => (100.0, (prev * 3.0).min(5_000.0)),
                };
                assert!(got >= lo - 1e-6 && got <= hi + 1e-6, "{jitter:?} n={n}: {got} not in [{lo}, {hi}]");
                assert!(got <= 5_000.0 + 1e-6);
                prev = got.max(100.0);
            }
        }
    }

    #[test]
    fn huge_delays_saturate_instead_of_panicking() {
        let c = RetryConfig { max_delay_ms: 1e300, base_delay_ms: 1e299, jitter: Jitter::None, ..RetryConfig::default() };
        let mut b = Backoff::new(c);
        assert_eq!(b.next_delay(3, &ToolError::transient("x", None), &mut rand::rng()), Duration::MAX);
    }

    #[test]
    fn retry_after_is_honoured_and_capped() {
        let mut b = Backoff::new(cfg(Jitter::Full));
        let mut rng = rand::rng();
        assert_eq!(b.next_delay(1, &ToolError::transient("x", Some(1234)), &mut rng), Duration::from_millis(1234));
        assert_eq!(b.next_delay(1, &ToolError::transient("x", Some(60_000)), &mut rng), Duration::from_millis(5_000));
    }

    #[test]
    fn classifier_reads_categories_and_attempts() {
        let c = cfg(Jitter::None);
        assert!(c.should_retry(&ToolError::transient("x", None), 1));
        assert!(c.should_retry(&ToolError::timeout("t", 5), 9));
        assert!(!c.should_retry(&ToolError::transient("x", None), 10));
        assert!(!c.should_retry(&ToolError::execution("x"), 1));
        assert!(!c.should_retry(&ToolError::permanent("x"), 1));
    }

    #[test]
    fn listing_a_category_does_not_retry_what_must_not_run_again() {
        use crate::error::{ErrorCategory, Thrown};
        let o = RetryOverrides { retryable_categories: Some(vec!["execution".into(), "validation".into(), "permanent".into()]), ..Default::default() };
        let c = RetryConfig::default().with_overrides(&o).unwrap();
        // A handler's plain error is retried once `execution` is listed.
        assert!(c.should_retry(&ToolError::execution("x"), 1));
        let thrown = |retryable| Thrown { is_object: true, name: Some("Error".into()), message: Some("m".into()), retryable, ..Thrown::default() };
        assert!(c.should_retry(&ToolError::from_thrown("t", &thrown(None)), 1));
        // Its outcome refused, or the handler said no: never.
        let issue = crate::schema::ValidationIssue { path: String::new(), schema_path: String::new(), keyword: "type".into(), message: "m".into() };
        assert!(!c.should_retry(&ToolError::invalid_output("t", vec![issue.clone()]), 1));
        assert!(!c.should_retry(&ToolError::invalid_result("t", "a Map"), 1));
        assert!(!c.should_retry(&ToolError::invalid_intercepted_arguments("t", vec![issue], None), 1));
        assert!(!c.should_retry(&ToolError::from_thrown("t", &thrown(Some(false))), 1));
        assert!(!c.should_retry(&ToolError::permanent("x"), 1));
        let permanent = Thrown { category: Some("permanent".into()), ..thrown(None) };
        assert_eq!(ToolError::from_thrown("t", &permanent).category, ErrorCategory::Permanent);
        assert!(!c.should_retry(&ToolError::from_thrown("t", &permanent), 1));
    }

    #[test]
    fn refuses_nonsense() {
        let base = RetryConfig::default();
        let bad = [
            RetryOverrides { max_attempts: Some(0), ..Default::default() },
            RetryOverrides { base_delay: Some(-1.0), ..Default::default() },
            RetryOverrides { base_delay: Some(f64::NAN), ..Default::default() },
            RetryOverrides { base_delay: Some(10.0), max_delay: Some(5.0), ..Default::default() },
            RetryOverrides { backoff_multiplier: Some(0.5), ..Default::default() },
            RetryOverrides { jitter: Some("sometimes".into()), ..Default::default() },
            RetryOverrides { retryable_categories: Some(vec!["flaky".into()]), ..Default::default() },
        ];
        for o in bad {
            assert_eq!(base.with_overrides(&o).unwrap_err().code(), "INVALID_CONFIG", "{o:?}");
        }
        let ok = base.with_overrides(&RetryOverrides { max_attempts: Some(5), jitter: Some("equal".into()), ..Default::default() }).unwrap();
        assert_eq!((ok.max_attempts, ok.jitter), (5, Jitter::Equal));
    }
}
